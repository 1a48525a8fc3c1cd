/**
 * The tool-result pruner (docs/spec/lifecycle.md §7): every current `tool/result` on the surface whose text has
 * more than `thresholdChars` characters is replaced by head + a marker naming what was cut + tail.
 * Each prune is two events, back to back (L15): `compaction/prune {callId, shadowedSeq,
 * originalChars}` and the replacing `tool/result` (same turn, step and callId; `surfaceOp:
 * replace` of exactly that seq; `sourceEventSeqs: [seq]`).
 *
 * The pruned text is one text block (the result's text blocks joined by a newline, cut), followed
 * by the result's non-text blocks unchanged; `isError` and `error` are kept. It is never above the
 * threshold (the options are checked for that), so pruning is idempotent: a pruned result is not
 * pruned again. Cuts never split a surrogate pair (the log refuses lone surrogates).
 *
 * Cost: the meter tracks the large results as they are appended, so a prune pass looks at those
 * only, not at the whole surface.
 */
import type { Block, EventOf, ToolResultMessage } from '../events/index.js'
import type { CompactionHost } from './host.js'
import type { ContextMeter } from './meter.js'

export interface PruneOptions {
  thresholdChars: number
  head: number
  tail: number
}

/** The marker between head and tail. At most `MARKER_MAX_CHARS` characters. */
export function pruneMarker(cutChars: number): string {
  return `\n\n[… ${cutChars} characters pruned by compaction …]\n\n`
}
export const MARKER_MAX_CHARS = 64

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff

/** Head + marker + tail of `text`; `text` itself when nothing would be cut. */
export function prunedText(text: string, head: number, tail: number): string {
  if (text.length <= head + tail) return text
  let h = head
  if (h > 0 && isHigh(text.charCodeAt(h - 1))) h-- // do not keep half a pair at the end of the head
  let t = text.length - tail
  if (t < text.length && isLow(text.charCodeAt(t))) t++ // nor at the start of the tail
  return text.slice(0, h) + pruneMarker(t - h) + text.slice(t)
}

/** The replacing message of a pruned result. */
export function prunedMessage(m: ToolResultMessage, opts: PruneOptions): ToolResultMessage {
  const texts: string[] = []
  const others: Block[] = []
  for (const b of m.content) {
    if (b.type === 'text') texts.push(b.text)
    else others.push(b)
  }
  const text = prunedText(texts.join('\n'), opts.head, opts.tail)
  return {
    role: 'tool',
    callId: m.callId,
    content: [{ type: 'text', text }, ...others],
    ...(m.isError ? { isError: true as const } : {}),
  }
}

/**
 * Prunes every current tool result above the threshold, oldest first. Returns the seqs of the
 * pruned (now hidden) results. Each prune's two appends are synchronous, so nothing can come
 * between them.
 */
export function pruneToolResults(host: CompactionHost, meter: ContextMeter, opts: PruneOptions): number[] {
  const targets = Object.keys(meter.state.large).map(Number).sort((a, b) => a - b)
  const pruned: number[] = []
  for (const seq of targets) {
    const node = meter.node(seq)
    if (node === undefined || node.chars === undefined || node.chars <= opts.thresholdChars) continue
    const event = host.events[seq] as EventOf<'tool/result'>
    const d = event.data
    host.append({ type: 'compaction/prune', data: { callId: d.callId, shadowedSeq: seq, originalChars: node.chars } })
    host.append({
      type: 'tool/result',
      data: {
        turn: d.turn, step: d.step, callId: d.callId,
        message: prunedMessage(d.message, opts),
        ...(d.error !== undefined ? { error: d.error } : {}),
      },
      surfaceOp: { op: 'replace', start: seq, end: seq },
      sourceEventSeqs: [seq],
    })
    pruned.push(seq)
  }
  return pruned
}
