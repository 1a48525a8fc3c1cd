/**
 * The agent's persistence: every event the session commits is forwarded to a `LogStore` write
 * handle, in batches (one `append` per microtask; the jsonl store then coalesces the appends that
 * arrive during an fsync into one write + one fsync). `flush()` resolves when everything committed
 * so far is durable.
 *
 * Failure (opening the store, a refused or failed append): the error (coded) is reported once as
 * `agent/error` (where `'store'`), persistence stops for good (an fsync is never retried), every
 * later `flush()` rejects with it, and the agent halts: the open turn is cancelled with
 * `{kind:'hook', reason:'persistence failed: CODE'}` keeping the inbox (the durable log still holds
 * those messages as pending, so `resumeAgent` runs them), no new turn starts, and new input is
 * refused with `PERSISTENCE_FAILED`. The in-memory log goes on recording the cancel (it stays a
 * valid log); the durable log ends at the last durable batch, and repair closes its open turn.
 *
 * Only the store's types are imported (erased at compile): `agent` does not load any store.
 */
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import type { Session } from '../events/session.js'
import type { AnswerRecord, DecisionChannel, DecisionRecord, DecisionWatch, LogStore, LogWriter } from '../stores/types.js'

/** The store's decision side channel, as the agent sees it (its one sanctioned type import of stores). */
export type { AnswerRecord, DecisionChannel, DecisionRecord, DecisionWatch }

export interface PersistenceHost {
  readonly sessionId: string
  readonly session: Session
  reportError(error: unknown, where: string): void
  /** Stop the agent: persistence failed. */
  halt(error: TurnlogError): void
  /** The write handle has a decision side channel (JSONL): the agent watches it while it owns the session. */
  onDecisionChannel?(channel: DecisionChannel): void
}

export interface PersistenceOptions {
  store?: LogStore
  /** An open write handle (resumeAgent's, after repair); the agent owns and closes it. */
  writer?: LogWriter
}

interface Waiter {
  target: number
  resolve: () => void
  reject: (e: unknown) => void
}

export class Persistence {
  readonly #host: PersistenceHost
  #writer: LogWriter | null = null
  readonly #opening: Promise<void>
  #buffer: LogEvent[] = []
  #scheduled = false
  /** Events durable in the store (the length of the durable log). */
  #durable: number
  #failed: TurnlogError | null = null
  #waiters: Waiter[] = []
  /** The last append in flight (close waits for it). */
  #last: Promise<unknown> = Promise.resolve()
  #closed = false
  #answered = false

  constructor(host: PersistenceHost, opts: PersistenceOptions) {
    this.#host = host
    const prefix = host.session.length
    this.#durable = prefix
    host.session.addFold((e) => this.#onEvent(e))
    this.#opening = this.#open(opts, prefix).finally(() => {
      this.#answered = true
    })
  }

  /**
   * Until the store has answered (opened the session, or refused it): the promise of that answer
   * (it never rejects; a refusal halts the agent). Then null. The driver awaits it before the
   * first hook of a turn, so no hook and no model call runs on a session the agent cannot own.
   */
  get opening(): Promise<void> | null {
    return this.#answered ? null : this.#opening
  }

  /** The error that stopped persistence, or null. */
  get failed(): TurnlogError | null {
    return this.#failed
  }

  /** Number of events known durable. */
  get durableLength(): number {
    return this.#durable
  }

  async #open(opts: PersistenceOptions, prefix: number): Promise<void> {
    const id = this.#host.sessionId
    let w: LogWriter | undefined = opts.writer
    try {
      if (!w) {
        const store = opts.store!
        if (prefix === 0) {
          try {
            await store.create(id)
          } catch (err) {
            if (!TurnlogError.is(err, 'SESSION_EXISTS')) throw err
          }
        }
        w = await store.open(id, 'write')
      }
      if (w.length !== prefix) {
        const n = w.length
        await w.close().catch(() => {})
        throw prefix === 0
          ? new TurnlogError('SESSION_EXISTS', `the session already holds ${n} events: continue it with resumeAgent`, {
            sessionId: id, info: { storedEvents: n },
          })
          : new TurnlogError('SEQ_CONFLICT', `the store holds ${n} events, the agent's prefix ${prefix}`, {
            sessionId: id, expectedSeq: prefix, actualSeq: n,
          })
      }
      this.#writer = w
      if (w.decisions !== undefined) this.#host.onDecisionChannel?.(w.decisions)
      this.#drain()
      this.#settle()
    } catch (err) {
      this.#fail(err)
    }
  }

  #onEvent(e: LogEvent): void {
    if (this.#failed) return
    this.#buffer.push(e)
    if (!this.#scheduled) {
      this.#scheduled = true
      queueMicrotask(() => {
        this.#scheduled = false
        this.#drain()
      })
    }
  }

  #drain(): void {
    const w = this.#writer
    if (!w || this.#failed || this.#buffer.length === 0) return
    const batch = this.#buffer
    this.#buffer = []
    // trusted: the session validated, checked and froze every event before committing it
    const p = w.append(batch, { expectedSeq: batch[0]!.seq, trusted: true }).then(
      (r) => {
        if (r.length > this.#durable) this.#durable = r.length
        this.#settle()
      },
      (err: unknown) => this.#fail(err),
    )
    this.#last = p
  }

  #settle(): void {
    if (!this.#writer) return
    const keep: Waiter[] = []
    for (const w of this.#waiters) {
      if (w.target <= this.#durable) w.resolve()
      else keep.push(w)
    }
    this.#waiters = keep
  }

  #fail(err: unknown): void {
    if (this.#failed) return
    const e = TurnlogError.is(err)
      ? err
      : new TurnlogError('IO_ERROR', `persistence failed: ${(err as Error)?.message ?? String(err)}`, {
        sessionId: this.#host.sessionId,
      }, { cause: err })
    this.#failed = e
    this.#buffer = []
    const waiters = this.#waiters
    this.#waiters = []
    for (const w of waiters) w.reject(e)
    this.#host.reportError(e, 'store')
    this.#host.halt(e)
  }

  /** Resolves when every event committed so far is durable; rejects with the coded failure. */
  flush(): Promise<void> {
    return this.pending() ?? Promise.resolve()
  }

  /**
   * `flush()`, or null when every event committed so far is durable already: the wait before each
   * tool body (R10) costs nothing then (no promise, no tick).
   */
  pending(): Promise<void> | null {
    if (this.#failed) return Promise.reject(this.#failed)
    const target = this.#host.session.length
    if (this.#writer && this.#durable >= target) return null
    return new Promise((resolve, reject) => this.#waiters.push({ target, resolve, reject }))
  }

  /** Appends what is left, waits until it is durable, closes the handle (releasing the lock). Never throws. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#opening
    this.#drain()
    await this.#last.catch(() => {})
    await this.#writer?.close().catch(() => {})
  }
}
