/**
 * L11, inbox conservation. The two lists are tracked by message id; every id inserted by a splice
 * is pending, claimed or canceled, never claimed twice, never pending again once claimed. A
 * `user/message` whose id a splice inserted must have been claimed in the open turn: one for a
 * pending, a canceled, or an earlier turn's claimed message is a violation. (The checker cannot
 * require every claimed message to appear: `agent/pre-step` may enter other messages, §3.2.)
 */
import type { SessionEvent } from '../envelope.js'
import type { TurnState } from './structure.js'
import type { Emit } from './types.js'

type Target = 'next-turn' | 'next-step'

export class InboxState {
  readonly #lists: Record<Target, string[]> = { 'next-turn': [], 'next-step': [] }
  /** Ids pending in either list. */
  readonly #pending = new Set<string>()
  /** Ids ever claimed, with the turn that claimed them. */
  readonly #claimed = new Map<string, number | null>()
  /** Ids whose last removal was a cancel (`outcome: 'canceled'`) and that were not inserted again. */
  readonly #canceled = new Set<string>()
  /** Ids of every `user/message` in the log, replacements included. */
  readonly #userMessages = new Set<string>()

  constructor(readonly turns: TurnState) {}

  /** The pending ids of one list, in order (for tests and debugging). */
  pending(target: Target): readonly string[] {
    return this.#lists[target]
  }

  check(e: SessionEvent, emit: Emit): void {
    if (e.type === 'user/message') {
      const id = e.data.message.id
      if (this.#userMessages.has(id)) emit('L11', `user/message id ${id} appears a second time in the log`)
      if (this.#pending.has(id)) emit('L11', `user/message id ${id} is still pending in the inbox`)
      else if (this.#canceled.has(id)) emit('L11', `user/message id ${id} was canceled from the inbox, never claimed`)
      else if (this.#claimed.has(id) && this.#claimed.get(id) !== this.turns.openTurn) {
        emit('L11', `user/message id ${id} was claimed in turn ${this.#claimed.get(id)}, not in the open turn ${this.turns.openTurn ?? '(none)'}`)
      }
      return
    }
    if (e.type !== 'agent/inbox/spliced') return
    const d = e.data
    const list = this.#lists[d.target]
    const removed = d.removedCount ?? 0
    if (d.start > list.length) emit('L11', `splice start ${d.start} beyond the ${d.target} list's length ${list.length}`)
    else if (d.start + removed > list.length) {
      emit('L11', `splice removes ${removed} from ${d.start}, beyond the ${d.target} list's length ${list.length}`)
    }
    if (removed === 0 && d.inserted.length === 0) emit('L11', 'a splice that removes and inserts nothing')
    const isClaim = d.outcome === undefined && removed > 0
    const removedIds = new Set(list.slice(d.start, d.start + removed))
    const seen = new Set<string>()
    for (const m of d.inserted) {
      const id = m.id
      if (seen.has(id)) emit('L11', `splice inserts id ${id} twice`)
      else if (this.#pending.has(id) && !removedIds.has(id)) emit('L11', `splice inserts id ${id}, which is already pending`)
      else if (this.#claimed.has(id) || (isClaim && removedIds.has(id))) emit('L11', `splice inserts id ${id}, which was claimed before`)
      seen.add(id)
    }
    if (isClaim) {
      if (this.turns.openTurn === null) emit('L11', 'a claim (a splice that removes without outcome) with no turn open')
      if (d.start !== 0) emit('L11', `a claim (a splice that removes without outcome) at start ${d.start}, not 0`)
    }
  }

  apply(e: SessionEvent): void {
    if (e.type === 'user/message') {
      this.#userMessages.add(e.data.message.id)
      return
    }
    if (e.type !== 'agent/inbox/spliced') return
    const d = e.data
    const list = this.#lists[d.target]
    const start = Math.min(d.start, list.length)
    const gone = list.splice(start, d.removedCount ?? 0, ...d.inserted.map((m) => m.id))
    const isClaim = d.outcome === undefined && (d.removedCount ?? 0) > 0
    for (const id of gone) {
      this.#pending.delete(id)
      if (isClaim) this.#claimed.set(id, this.turns.openTurn)
      else this.#canceled.add(id)
    }
    for (const m of d.inserted) {
      this.#pending.add(m.id)
      this.#canceled.delete(m.id)
    }
  }
}
