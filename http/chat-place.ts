/**
 * Where a chat stream starts (pure, fed the log in seq order): the `turn/start` of the turn that
 * answers a message, or of the turn that is open, or "wait" while the answer has not begun.
 *
 * - `POST /chat` of message M streams the turn that claimed M (its `user/message`); while M is not
 *   logged yet, pending, or claimed but its `user/message` not logged yet, it waits; if a cancel
 *   took M out of the inbox (a splice with `outcome: 'canceled'`), there is nothing to stream.
 * - `GET /chat/:id/stream` (resume) streams the open turn from its start; with no open turn but
 *   durable prompts pending, the turn that will run them (the window between a send and the first
 *   token resumes too); otherwise nothing (204).
 */
import type { LogEvent, UserMessage } from '../events/index.js'
import { inboxReducer, type InboxState } from '../reducers/inbox.js'
import { RetryChains } from './retry-chain.js'

export type ChatPlace = { kind: 'turn'; index: number } | { kind: 'wait' } | { kind: 'none' }

export class ChatScanner {
  /** Events pushed so far (the index of the next one). */
  length = 0
  private readonly inbox: InboxState = inboxReducer.initial()
  private openTurn: number | null = null
  private readonly claimedAt = new Map<string, number>()
  private readonly inserted = new Set<string>()
  /** Ids a cancel took out of the inbox (a claim's removal is followed by the message's `user/message`). */
  private readonly canceled = new Set<string>()
  private lastTurnStart: number | null = null
  /** Turn indexes are those of each message's first turn: a retry chain is one message, open
   * until its last turn ends (a stream of it follows the retries). */
  private readonly chains = new RetryChains()

  push(e: LogEvent): void {
    const i = this.length++
    this.chains.push(e, i)
    if (e.type === 'turn/start') { this.openTurn = this.chains.head; this.lastTurnStart = this.chains.head }
    else if (e.type === 'turn/end') this.openTurn = this.chains.open ? this.chains.head : null
    else if (e.type === 'user/message') {
      const id = (e.data as { message?: { id?: unknown } }).message?.id
      if (typeof id === 'string' && this.openTurn !== null && !this.claimedAt.has(id)) this.claimedAt.set(id, this.openTurn)
    } else if (e.type === 'agent/inbox/spliced') {
      const d = e.data as { target?: string; inserted?: readonly UserMessage[]; outcome?: string }
      const list = (): UserMessage[] => d.target === 'next-step' ? this.inbox.nextStep : this.inbox.nextTurn
      const before = d.outcome === 'canceled' ? new Set(list().map((m) => m.id)) : null
      inboxReducer.apply(this.inbox, e)
      for (const m of d.inserted ?? []) this.inserted.add(m.id)
      if (before) {
        for (const m of list()) before.delete(m.id)
        for (const id of before) this.canceled.add(id)
      }
    }
  }

  /** Where the stream for message `id` starts, as of the events pushed so far. */
  forMessage(id: string): ChatPlace {
    const at = this.claimedAt.get(id)
    if (at !== undefined) return { kind: 'turn', index: at }
    if (this.canceled.has(id) && !this.pending(id)) return { kind: 'none' }
    return { kind: 'wait' }
  }

  /** Where a resume starts: the open turn; `after` a turn start index, the next turn. */
  forResume(after: number | null = null): ChatPlace {
    if (this.openTurn !== null && (after === null || this.openTurn > after)) return { kind: 'turn', index: this.openTurn }
    if (after !== null && this.lastTurnStart !== null && this.lastTurnStart > after) return { kind: 'turn', index: this.lastTurnStart }
    if (this.inbox.nextTurn.length > 0) return { kind: 'wait' }
    return { kind: 'none' }
  }

  /** The index of the last `turn/start` seen (a resume that waited streams the first turn after it). */
  get lastStart(): number | null { return this.lastTurnStart }

  /** True when message `id` was ever logged or sent (a retried POST must not send it twice). */
  known(id: string): boolean {
    return this.inserted.has(id) || this.claimedAt.has(id)
  }

  private pending(id: string): boolean {
    return this.inbox.nextTurn.some((m) => m.id === id) || this.inbox.nextStep.some((m) => m.id === id)
  }
}
