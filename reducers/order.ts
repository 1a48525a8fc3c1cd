/**
 * Surface order without a seq → position index.
 *
 * The surface only ever changes in two ways (docs/spec/events.md "The surface"): `append` puts a node at the
 * tail, `replace {start, end}` swaps a contiguous range for one new node. So every node can carry a
 * **position key** that never changes while the node is on the surface:
 *
 * - an appended node's key is its own seq (greater than every key so far, since keys are earlier seqs);
 * - a replacement node inherits the key of the first node it hides (`start`).
 *
 * Keys then strictly increase along the surface, so locating `start` and `end` is a binary search
 * (O(log n)) and the replace itself one `splice` (O(n) worst case, O(1) amortised for append). Only
 * replacement nodes need a stored key (`anchors`); for every other seq the key is the seq itself.
 * Replacements are rare (compactions, prunes), so `anchors` stays tiny — unlike a seq → position
 * index, which would have to be renumbered on every replace and would grow with every append.
 *
 * The same rule serves every fold that needs surface order: the surface itself, the history (which
 * holds only the visible subset — empty assistant messages are on the surface but not in history,
 * and with keys the history does not need to know where they stood), and the transcript.
 *
 * On a log that breaks L8 (a boundary that is not a current surface seq) the rule stays total and
 * deterministic: the nodes whose keys fall in `[key(start), key(end)]` are hidden (possibly none)
 * and the new node is placed where `key(start)` sorts. Every fold applies the same rule, so they
 * agree with each other even then; `verify` is what reports such a log.
 */

/** The stored position key of each replacement node (by seq, as a JSON object key). */
export type Anchors = Record<string, number>

export function keyOf(anchors: Anchors, seq: number): number {
  const k = anchors[seq]
  return k === undefined ? seq : k
}

/** The first index in `seqs` whose key is ≥ `key` (or > `key` when `strict`). */
export function searchKey(seqs: readonly number[], anchors: Anchors, key: number, strict: boolean): number {
  let lo = 0
  let hi = seqs.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const k = keyOf(anchors, seqs[mid]!)
    if (k < key || (strict && k === key)) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The half-open index range `[from, to)` of the nodes hidden by `replace {start, end}`. */
export function replacedRange(
  seqs: readonly number[],
  anchors: Anchors,
  start: number,
  end: number,
): { from: number; to: number; key: number } {
  const ks = keyOf(anchors, start)
  const ke = keyOf(anchors, end)
  const from = searchKey(seqs, anchors, ks, false)
  const to = ke < ks ? from : searchKey(seqs, anchors, ke, true)
  return { from, to, key: ks }
}
