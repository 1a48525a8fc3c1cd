/**
 * Retry chains (docs/spec/lifecycle.md §3–§4): a transient model failure ends its turn `error`
 * after an `llm/retry`, and the retry opens a new turn with `cause: {kind: 'retry', of: <turn>}`
 * at once. For a person it is one answer that took several attempts, so the chat shows a chain as
 * one UI message (the id of its first turn), and a chat stream follows it to the end of its last
 * turn. Pure: fed the log in seq order.
 */
import type { LogEvent } from '../events/envelope.js'

function rec(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {}
}

export class RetryChains {
  /** Index of the `turn/start` of the first turn of the last chain (null before any turn). */
  head: number | null = null
  /** The turn number of that first turn (its message is `turn-N`). */
  headTurn: number | null = null
  /** True while the last chain goes on: its turn is open, or it failed with a retry owed. */
  open = false
  /** Each turn's chain head: turn number → index of the chain's first `turn/start`. */
  readonly headOf = new Map<number, number>()
  private turn: number | null = null
  private retried = false
  private owed: number | null = null

  /**
   * Feeds the event at `index`; for a `turn/start`, says whether it continues the open chain (a
   * retry of the turn whose retry was owed) or begins a message of its own.
   */
  push(e: LogEvent, index: number): 'continues' | 'begins' | null {
    if (e.type === 'turn/start') {
      const d = rec(e.data)
      const cause = rec(d['cause'])
      const turn = typeof d['turn'] === 'number' ? d['turn'] : -1
      const continues = this.owed !== null && cause['kind'] === 'retry' && cause['of'] === this.owed && this.head !== null
      if (!continues) { this.head = index; this.headTurn = turn }
      this.owed = null
      this.turn = turn
      this.retried = false
      this.open = true
      this.headOf.set(turn, this.head!)
      return continues ? 'continues' : 'begins'
    }
    if (e.type === 'step/start') this.retried = false
    else if (e.type === 'llm/retry') this.retried = true
    else if (e.type === 'turn/end') {
      const kind = rec(rec(e.data)['reason'])['kind']
      if (kind === 'error' && this.retried && this.turn !== null) this.owed = this.turn
      else { this.owed = null; this.open = false }
      this.turn = null
    }
    return null
  }

  /** The turn that just ended failed and its retry turn is owed (its message goes on). */
  get retryOwed(): boolean { return this.owed !== null }
}
