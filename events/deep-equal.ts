/**
 * `deepEqual`: structural equality for the values a log holds, without `node:util` (issue "See a
 * session", item 7: the root export runs in browsers and edge runtimes).
 *
 * It follows `util.isDeepStrictEqual` for the values that reach it here (JSON-like events, requests,
 * tool arguments and outputs): primitives by `Object.is` (so `NaN` equals `NaN`, `0` differs from
 * `-0`), the same prototype on both sides, own enumerable string keys compared as sets (a key
 * holding `undefined` differs from a missing key), arrays by length and index, `Date` by time,
 * typed arrays by bytes, `Map`/`Set` by entries in order-insensitive fashion for primitive keys.
 *
 * Cycles never reach a log (the lossless check refuses them), but a caller's value may hold one.
 * Two values are then equal when no path of reads tells them apart (their infinite unfoldings are
 * equal: a ring of three objects equals a ring of six repeating the same three). That is what a
 * log could ever observe of them, it is an equivalence, and it always terminates, in time bounded by
the product of the two values' object counts and without deep recursion. `isDeepStrictEqual`
 * answers differently across Node lines on such pairs (Node 24 stops at the first cycle on either
 * side and then asks for the same pair): decision record "deep-equal" (docs/decisions/ in the
 * repository). On values without cycles both agree.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  const saved = steps
  steps = FAST_STEPS
  let r: boolean | undefined
  try {
    r = fast(a, b, 0)
  } finally {
    steps = saved
  }
  return r ?? closure(a, b)
}

/**
 * Two walks. `fast` recurses without any bookkeeping (the small values compared on every step, a
 * request's config and tools, allocate nothing), and gives up (`undefined`) past `FAST_DEPTH`
 * levels or `FAST_STEPS` object pairs: a cycle, a value shared many times over (a DAG unfolds
 * exponentially) or a very large value. Its `false` is always right (a difference found on a finite
 * path), and so is its `true` (it read both values whole). `closure` then decides: the pairs of
 * objects reachable together, each checked once (a pair seen again is assumed equal, and any
 * difference ends the comparison), with an explicit stack. `steps` is module state, saved and
 * restored around each call (a Proxy's trap may call `deepEqual` inside another).
 */
const FAST_DEPTH = 600
const FAST_STEPS = 20_000
let steps = 0

function fast(a: unknown, b: unknown, depth: number): boolean | undefined {
  if (Object.is(a, b)) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false
  if (--steps < 0 || depth > FAST_DEPTH) return undefined
  const d = depth + 1
  if (Array.isArray(a)) {
    const bb = b as unknown[]
    if (a.length !== bb.length) return false
    for (let i = 0; i < a.length; i++) {
      const r = fast(a[i], bb[i], d)
      if (r !== true) return r
    }
    return fastKeys(a, bb, d, true)
  }
  const leaf = leafEqual(a, b)
  if (leaf !== undefined) return leaf
  if (a instanceof Map) {
    const bm = b as Map<unknown, unknown>
    if (a.size !== bm.size) return false
    for (const [k, v] of a) {
      if (!bm.has(k)) return false
      const r = fast(v, bm.get(k), d)
      if (r !== true) return r
    }
    return true
  }
  return fastKeys(a, b, d, false)
}

function fastKeys(a: object, b: object, depth: number, arrayIndexesDone: boolean): boolean | undefined {
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false
    if (arrayIndexesDone && isIndex(k)) continue
    const r = fast(ra[k], rb[k], depth)
    if (r !== true) return r
  }
  return true
}

/** `Date`, typed arrays and `Set` (compared by their own contents, no nested walk), else undefined. */
function leafEqual(a: object, b: object): boolean | undefined {
  if (a instanceof Date) return a.getTime() === (b as Date).getTime()
  if (ArrayBuffer.isView(a)) {
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
    const bv = b as ArrayBufferView
    const y = new Uint8Array(bv.buffer, bv.byteOffset, bv.byteLength)
    if (x.length !== y.length) return false
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
    return true
  }
  if (a instanceof Set) {
    const bs = b as Set<unknown>
    if (a.size !== bs.size) return false
    for (const v of a) if (!bs.has(v)) return false
    return true
  }
  return undefined
}

/** The pair closure (see `fast`): each pair of objects once, on an explicit stack. */
function closure(a0: unknown, b0: unknown): boolean {
  const seen = new Map<object, Set<object>>()
  const stack: unknown[] = [a0, b0]
  while (stack.length > 0) {
    const b = stack.pop()
    const a = stack.pop()
    if (Object.is(a, b)) continue
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false
    const partners = seen.get(a)
    if (partners === undefined) seen.set(a, new Set([b]))
    else if (partners.has(b)) continue
    else partners.add(b)
    if (Array.isArray(a)) {
      const bb = b as unknown[]
      if (a.length !== bb.length) return false
      for (let i = 0; i < a.length; i++) stack.push(a[i], bb[i])
      if (!pushKeys(a, bb, stack, true)) return false
      continue
    }
    const leaf = leafEqual(a, b)
    if (leaf === false) return false
    if (leaf === true) continue
    if (a instanceof Map) {
      const bm = b as Map<unknown, unknown>
      if (a.size !== bm.size) return false
      for (const [k, v] of a) {
        if (!bm.has(k)) return false
        stack.push(v, bm.get(k))
      }
      continue
    }
    if (!pushKeys(a, b, stack, false)) return false
  }
  return true
}

function pushKeys(a: object, b: object, stack: unknown[], arrayIndexesDone: boolean): boolean {
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false
    if (!(arrayIndexesDone && isIndex(k))) stack.push(ra[k], rb[k])
  }
  return true
}

function isIndex(k: string): boolean {
  const c = k.charCodeAt(0)
  return c >= 48 && c <= 57
}
