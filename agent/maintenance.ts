/**
 * `runMaintenance` (docs/spec/lifecycle.md §3: the turn machine's `maintaining` state): a task the app runs from
 * idle with the turn loop held, and dispose's share of it (the task is told at once through its
 * signal, then awaited within the cancel grace period). Split from agent.ts, which owns the status.
 */
import { TurnlogError } from '../events/index.js'
import type { MachineRunner } from '../machines/lean-actor.js'
import type { TurnContext, TurnEvent } from '../machines/turn.js'
import { GracePeriod, type GraceHost } from './grace.js'
import type { InboxDriver } from './inbox-driver.js'

/** What maintenance reads of its agent. */
export interface MaintenanceHost extends GraceHost {
  readonly turnActor: MachineRunner<TurnContext, TurnEvent>
  readonly inboxDriver: InboxDriver
}

/** What maintenance does to its agent's private state (as the turn loop's `LoopControl`). */
export interface MaintenanceControl {
  /** Throws AGENT_DISPOSED / PERSISTENCE_FAILED when the agent takes no new work. */
  assertUsable(): void
  /** The status is idle. */
  idle(): boolean
  /** Disposing, disposed or halted: no queued work starts. */
  winding(): boolean
  wake(): void
  settle(): void
}

export class Maintenance {
  /** The running task: its signal (aborted by dispose) and its settlement. */
  #current: { controller: AbortController; task: Promise<unknown> } | null = null

  constructor(private readonly host: MaintenanceHost, private readonly control: MaintenanceControl) {}

  async run<T>(task: (signal: AbortSignal) => Promise<T> | T): Promise<T> {
    const host = this.host
    const control = this.control
    control.assertUsable()
    if (!control.idle() || !host.turnActor.getSnapshot().matches('idle')) {
      throw new TurnlogError('AGENT_BUSY', 'runMaintenance runs only from idle', { sessionId: host.sessionId })
    }
    host.turnActor.send({ type: 'MAINTAIN' })
    const controller = new AbortController()
    let running: Promise<T>
    try {
      running = Promise.resolve(task(controller.signal))
    } catch (err) {
      running = Promise.reject(err)
    }
    this.#current = { controller, task: running }
    try {
      return await running
    } finally {
      this.#current = null
      host.turnActor.send({ type: 'MAINTAINED' })
      // A wake latched during maintenance is replayed now (once), if a message that latched it is
      // still pending (not merely injected context: docs/spec/lifecycle.md §3.8, choice 7); never after
      // dispose() (which starts no queued work).
      const replay = !control.winding() && host.inboxDriver.latchedOwnWork()
      host.inboxDriver.send({ type: 'UNLATCH' })
      if (replay) control.wake()
      else control.settle()
    }
  }

  /**
   * Dispose: aborts the running task's signal now and returns the wait for it, bounded by the
   * grace period (a task that ignores its signal is abandoned, reported, never awaited forever).
   */
  abort(graceMs: number): () => Promise<void> {
    const m = this.#current
    if (!m) return () => Promise.resolve()
    const grace = new GracePeriod(this.host, m.controller.signal, graceMs)
    m.controller.abort({ kind: 'disposed' })
    return async () => {
      await grace.within(m.task, 'runMaintenance').catch(() => {})
      grace.close()
    }
  }
}
