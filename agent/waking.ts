/**
 * Waking the turn loop: what a waking delivery, `wake()` and the end of maintenance do to an idle
 * or busy agent, and the state that shapes the next turn opened from idle (resume's armed turn,
 * the errors held until the owed work starts). Split from agent.ts, which keeps the status.
 */
import type { MachineRunner } from '../machines/lean-actor.js'
import type { TurnContext, TurnEvent } from '../machines/turn.js'
import type { InboxDriver } from './inbox-driver.js'
import type { RestoredStep } from './restore.js'
import type { TurnLoop } from './turn-driver.js'
import type { AgentStatus } from './types.js'

/** What waking reads of its agent. */
export interface WakingHost {
  readonly turnActor: MachineRunner<TurnContext, TurnEvent>
  readonly inboxDriver: InboxDriver
  readonly restoreStep: RestoredStep | null
  readonly abort: AbortController | null
  readonly status: AgentStatus
  reportError(error: unknown, where: string): void
}

export class Waking {
  /** The interrupted turn the next turn opened from idle re-runs (docs/spec/lifecycle.md §8; `arm`). */
  #resumeOf: number | null = null
  /** The limit the resume turn records on its cause (docs/spec/lifecycle.md §8; `arm`). */
  limit: number | null = null
  /** Errors held until the owed work starts (`defer`): resume's `RESUME_LIMIT`. */
  #deferred: Array<{ error: unknown; where: string }> = []

  constructor(private readonly host: WakingHost, private readonly turns: () => TurnLoop) {}

  /** A resume turn is armed and not yet opened. */
  get armed(): boolean {
    return this.#resumeOf !== null
  }

  /** The next turn opened from idle is `turn/start {cause: {kind: 'resume', of}}`. */
  arm(of: number, maxResumeRuns?: number): void {
    this.#resumeOf = of
    this.limit = maxResumeRuns ?? null
  }

  defer(error: unknown, where: string): void {
    this.#deferred.push({ error, where })
  }

  /** Reports the held errors (once), as the owed work starts. */
  reportDeferred(): void {
    const held = this.#deferred
    if (held.length === 0) return
    this.#deferred = []
    for (const d of held) this.host.reportError(d.error, d.where)
  }

  /** `wake()`'s first half: opens a turn for what is owed (a parked step, queued prompts, an armed resume). */
  queued(): boolean {
    const host = this.host
    if (host.status !== 'idle' || !host.turnActor.getSnapshot().matches('idle')) return false
    if (host.restoreStep !== null) {
      this.turns().restore(host.restoreStep)
      return true
    }
    if (host.inboxDriver.list('next-turn').length === 0 && this.#resumeOf === null) return false
    this.now()
    return true
  }

  /** A waking delivery (`id`: its message, which the latch remembers): opens a turn from idle, latches during maintenance or an aborted turn. */
  now(id?: string): void {
    const host = this.host
    this.reportDeferred()
    const ts = host.turnActor.getSnapshot()
    if (ts.matches('idle') && host.status === 'idle' && host.restoreStep !== null) {
      this.turns().restore(host.restoreStep) // the parked step first; the input waits for its boundary
      return
    }
    if (ts.matches('idle') && host.status === 'idle') {
      const resumeOf = this.#resumeOf
      this.#resumeOf = null
      this.turns().start(resumeOf)
      return
    }
    if (ts.matches('maintaining') || host.abort?.signal.aborted) {
      if (id !== undefined) host.inboxDriver.latch(id)
      else host.inboxDriver.send({ type: 'LATCH' })
    }
    // A running, healthy turn picks the input up at its next boundary.
  }
}
