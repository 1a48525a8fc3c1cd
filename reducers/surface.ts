/**
 * The surface: the ordered list of seqs whose messages the model sees (docs/spec/events.md "The surface").
 *
 * `append` pushes the event's seq (O(1) amortised); `replace {start, end}` swaps the inclusive
 * range of current surface seqs for the event's seq (binary search + one splice, see order.ts) and
 * advances the replacement generation. Only the three surface types touch the surface; `surfaceOp`
 * anywhere else is ignored (the checker refuses it, L8).
 */
import type { LogEvent } from '../events/index.js'
import { replacedRange, type Anchors } from './order.js'
import type { Reducer } from './types.js'

export interface SurfaceState {
  /** Current surface seqs, in model order. */
  seqs: number[]
  /** Committed replacements so far; only grows. */
  generation: number
  /** Position keys of replacement nodes (order.ts). Internal to the fold, but plain JSON. */
  anchors: Anchors
}

/** True when `event` is one of the three surface types and carries a `surfaceOp`. */
export function isSurfaceEvent(event: LogEvent): boolean {
  const t = event.type
  return event.surfaceOp !== undefined && (t === 'user/message' || t === 'assistant/message' || t === 'tool/result')
}

export const surfaceReducer: Reducer<SurfaceState> = {
  name: 'surface',
  initial: () => ({ seqs: [], generation: 0, anchors: {} }),
  apply(draft, event) {
    if (!isSurfaceEvent(event)) return
    const op = event.surfaceOp!
    if (op === 'append') {
      draft.seqs.push(event.seq)
      return
    }
    const { from, to, key } = replacedRange(draft.seqs, draft.anchors, op.start, op.end)
    draft.seqs.splice(from, to - from, event.seq)
    draft.anchors[event.seq] = key
    draft.generation += 1
  },
}
