/**
 * The inbox as a durable projection (docs/spec/lifecycle.md §1): the two pending lists rebuilt from
 * `agent/inbox/spliced`, each splice applied like `Array.prototype.splice` on its target list
 * (`removedCount` absent means 0). Claims, cancels and sends are all splices; the reducer does
 * not need to tell them apart. The messages are the (frozen) objects of the splice events.
 */
import type { EventOf, LogEvent, UserMessage } from '../events/index.js'
import { spliceAll } from '../events/splice.js'
import type { Reducer } from './types.js'

export interface InboxState {
  /** Prompts that each want a turn of their own (FIFO). */
  nextTurn: UserMessage[]
  /** Input for the next step boundary (steering, injected context, tool contexts). */
  nextStep: UserMessage[]
}

export const inboxReducer: Reducer<InboxState> = {
  name: 'inbox',
  initial: () => ({ nextTurn: [], nextStep: [] }),
  apply(draft, event: LogEvent) {
    if (event.type !== 'agent/inbox/spliced') return
    const d = (event as EventOf<'agent/inbox/spliced'>).data
    const list = d.target === 'next-step' ? draft.nextStep : draft.nextTurn
    const removed = d.removedCount ?? 0
    if (d.inserted.length === 0) {
      if (removed > 0) list.splice(d.start, removed)
    } else {
      spliceAll(list, d.start, removed, d.inserted)
    }
  },
}
