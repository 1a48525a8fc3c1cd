/**
 * The cancel grace period (docs/spec/lifecycle.md §6, issue 9 item 2): cancel and dispose are always bounded.
 *
 * Every hook and tool gets the turn's `AbortSignal`. When it aborts, a timer of `cancelGraceMs`
 * starts (the agent's injectable timers). Whatever user code the driver is still waiting for when
 * it fires — a hook that never settles, a tool body that ignores its signal — is **abandoned**: the
 * driver stops waiting (the step and turn end `aborted`, an abandoned call gets its `tool/result`
 * `ABORTED`), reports `agent/error` (`ABANDONED`, where = the hook), and if that code settles later
 * its answer is ignored and reported (`LATE_SETTLEMENT`). Nothing is cancelled by force: JavaScript
 * cannot stop a promise, so an abandoned body may still run; it just no longer holds the agent.
 */
import { TurnlogError } from '../events/index.js'
import type { Timers } from './types.js'

/** The rejection of `GracePeriod.within` when the grace period ran out first. */
export class Abandoned extends Error {
  constructor(readonly where: string) {
    super(`${where} did not settle within the cancel grace period: abandoned`)
    this.name = 'Abandoned'
  }
}

export function isAbandoned(e: unknown): e is Abandoned {
  return e instanceof Abandoned
}

export interface GraceHost {
  readonly timers: Timers
  reportError(error: unknown, where: string): void
  readonly sessionId: string
}

/** One turn's grace period: armed by the turn's signal, disarmed when the turn closes. */
export class GracePeriod {
  readonly #host: GraceHost
  readonly #ms: number
  readonly #signal: AbortSignal
  #timer: unknown = undefined
  #expired = false
  #closed = false
  readonly #waiters = new Set<() => void>()
  readonly #onAbort = (): void => this.#arm()

  constructor(host: GraceHost, signal: AbortSignal, ms: number) {
    this.#host = host
    this.#ms = ms
    this.#signal = signal
    if (signal.aborted) this.#arm()
    else signal.addEventListener('abort', this.#onAbort, { once: true })
  }

  /** True once the grace period after the abort has run out. */
  get expired(): boolean {
    return this.#expired
  }

  #arm(): void {
    if (this.#closed || this.#timer !== undefined || this.#expired) return
    this.#timer = this.#host.timers.setTimeout(() => this.expire(), this.#ms)
  }

  /** Ends the grace period now (the timer fired, or dispose ran out of patience): abandon every waiter. */
  expire(): void {
    if (this.#expired) return
    this.#expired = true
    this.#timer = undefined
    const ws = [...this.#waiters]
    this.#waiters.clear()
    for (const w of ws) w()
  }

  /**
   * Waits for `value` (user code: a hook's result, a tool body's promise). Resolves or rejects as
   * it does, unless the grace period after the abort runs out first: then rejects with `Abandoned`
   * (reported once as `agent/error` `ABANDONED`), and a later settlement is reported as
   * `LATE_SETTLEMENT` and otherwise ignored.
   */
  within<T>(value: T | PromiseLike<T>, where: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false
      const abandon = (): void => {
        if (done) return
        done = true
        this.#host.reportError(new TurnlogError('ABANDONED', `${where} did not settle within ${this.#ms} ms after the cancel: abandoned`, {
          sessionId: this.#host.sessionId, field: where, info: { cancelGraceMs: this.#ms },
        }), where)
        reject(new Abandoned(where))
      }
      const late = (outcome: string): void => {
        this.#host.reportError(new TurnlogError('LATE_SETTLEMENT', `${where} ${outcome} after it was abandoned: ignored`, {
          sessionId: this.#host.sessionId, field: where,
        }), where)
      }
      let p: Promise<T>
      try {
        p = Promise.resolve(value)
      } catch (err) {
        p = Promise.reject(err)
      }
      p.then(
        (v) => {
          if (done) return late('resolved')
          done = true
          this.#waiters.delete(abandon)
          resolve(v)
        },
        (err: unknown) => {
          if (done) return late('rejected')
          done = true
          this.#waiters.delete(abandon)
          reject(err)
        },
      )
      if (this.#expired) queueMicrotask(abandon) // a settled value still wins this one microtask
      else this.#waiters.add(abandon)
    })
  }

  /** The turn closed: no timer stays behind. Waiters still pending are abandoned (nobody waits any more). */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#signal.removeEventListener('abort', this.#onAbort)
    if (this.#timer !== undefined) this.#host.timers.clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
