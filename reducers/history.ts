/**
 * The model history: the surface projected to messages (docs/spec/events.md "The surface") — `user/message`
 * verbatim, `assistant/message` unless its content is empty, `tool/result` as its tool message.
 * Nothing else ever reaches it. This is what the driver sends, so it is kept materialised: an
 * append is one push (O(1)); a replace splices the visible part of the range (order.ts).
 *
 * `messages[i]` is the very (frozen) message object of the event `seqs[i]`: "model-visible means
 * logged", with no copy. Empty assistant messages stand on the surface but not here; the position
 * keys of order.ts let a replace whose boundary is such a message still find its range.
 */
import type { LogEvent, ModelMessage } from '../events/index.js'
import { replacedRange, type Anchors } from './order.js'
import { isSurfaceEvent } from './surface.js'
import type { Reducer } from './types.js'

export interface HistoryState {
  /** The model-visible messages, in order: what a request sends. */
  messages: ModelMessage[]
  /** `seqs[i]` is the seq of the event whose message is `messages[i]`. */
  seqs: number[]
  /** Position keys of replacement nodes, visible or not (order.ts). */
  anchors: Anchors
}

/** The message a surface event puts in front of the model, or null (an empty assistant message). */
export function visibleMessage(event: LogEvent): ModelMessage | null {
  const data = event.data as { message: ModelMessage }
  if (event.type === 'assistant/message' && data.message.content.length === 0) return null
  return data.message
}

export const historyReducer: Reducer<HistoryState> = {
  name: 'history',
  initial: () => ({ messages: [], seqs: [], anchors: {} }),
  apply(draft, event) {
    if (!isSurfaceEvent(event)) return
    const message = visibleMessage(event)
    const op = event.surfaceOp!
    if (op === 'append') {
      if (message === null) return
      draft.messages.push(message)
      draft.seqs.push(event.seq)
      return
    }
    const { from, to, key } = replacedRange(draft.seqs, draft.anchors, op.start, op.end)
    if (message === null) {
      draft.messages.splice(from, to - from)
      draft.seqs.splice(from, to - from)
    } else {
      draft.messages.splice(from, to - from, message)
      draft.seqs.splice(from, to - from, event.seq)
    }
    draft.anchors[event.seq] = key
  },
}
