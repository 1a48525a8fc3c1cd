/**
 * The agent's status and the promises waiting on it (`whenIdle`, `whenSettled`). Split from
 * agent.ts: the status changes in many places (the turn loop, parking, dispose), and every change
 * must notify `agent/status` once and release the waiters the new status satisfies.
 */
import type { AgentStatus } from './types.js'

/** What the cell reads from its agent: quiet means idle with nothing pending to start. */
export interface StatusHost {
  quiet(): boolean
  disposed(): boolean
  notify(status: AgentStatus): void
  /**
   * True while a decision the store accepted is held for the parked step and about to be logged
   * (claimed-decisions.ts): parked then is not settled yet (the agent settles again after it).
   */
  holding?(): boolean
}

export class StatusCell {
  #value: AgentStatus = 'idle'
  #idleWaiters: Array<() => void> = []
  #settleWaiters: Array<(s: 'idle' | 'parked') => void> = []

  constructor(private readonly host: StatusHost) {}

  get value(): AgentStatus {
    return this.#value
  }

  /** Changes the status and tells `agent/status` listeners (nothing when unchanged). */
  set(s: AgentStatus): void {
    if (this.#value === s) return
    this.#value = s
    this.host.notify(s)
  }

  whenIdle(): Promise<void> {
    if (this.host.quiet()) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  whenSettled(): Promise<'idle' | 'parked'> {
    if (this.#parkedForGood() || this.host.quiet() || this.host.disposed()) return Promise.resolve(this.#settledAs())
    return new Promise((resolve) => this.#settleWaiters.push(resolve))
  }

  /** Releases the waiters the current state satisfies: settled ones when parked or quiet, idle ones when quiet. */
  settle(): void {
    const disposed = this.host.disposed()
    if (this.#parkedForGood() || this.host.quiet() || disposed) {
      const s = this.#settleWaiters
      this.#settleWaiters = []
      for (const w of s) w(this.#settledAs())
    }
    if (!this.host.quiet() && !disposed) return
    const waiters = this.#idleWaiters
    this.#idleWaiters = []
    for (const w of waiters) w()
  }

  /** Parked with nothing held back: what `whenSettled` resolves 'parked' for (a person owes a decision). */
  get settledParked(): boolean {
    return this.#parkedForGood()
  }

  #parkedForGood(): boolean {
    return this.#value === 'parked' && this.host.holding?.() !== true
  }

  #settledAs(): 'idle' | 'parked' {
    return this.#value === 'parked' ? 'parked' : 'idle'
  }
}
