/**
 * Group commit, shared by the jsonl, postgres and sqlite writers. Appends accepted before the
 * batch starts (the same microtask, or the same event-loop turn for a writer that defers to
 * `setImmediate`: jsonl and postgres) share one batch (one write + fsync, or one statement); while
 * a batch commits, new appends queue for the next one. The first failure stops the handle: the failing batch and every append queued behind
 * it reject with the handle's failure, and nothing more is committed.
 */
import type { TurnlogError } from '../events/errors.js'
import type { AppendResult } from './types.js'

/** What a writer gives its group commit. */
export interface Committer<T> {
  /** Makes one batch durable, in order; throws when it could not (the handle then stops). */
  commit(batch: readonly T[]): Promise<void>
  /** Records the failure of a commit; returns the error every pending append rejects with. */
  stop(err: unknown): TurnlogError
  /** The handle's failure so far, or null (a barrier rejects with it). */
  failed(): TurnlogError | null
}

interface Pending<T> {
  item: T
  result: AppendResult
  resolve: (r: AppendResult) => void
  reject: (e: unknown) => void
}

export class GroupCommit<T> {
  readonly #committer: Committer<T>
  readonly #defer: ((fn: () => void) => void) | null
  #queue: Array<Pending<T>> = []
  #running: Promise<void> | null = null
  #batches = 0

  /**
   * `defer`: when an idle handle's first append starts its batch. Default: the next microtask
   * (appends of the same synchronous run share it). A store whose commit is a round trip may
   * pass `setImmediate`, so the appends one agent makes in the promise chains of one event-loop
   * turn (a step's last chunks, its message and its `tool/call`) share one statement.
   */
  constructor(committer: Committer<T>, defer?: (fn: () => void) => void) {
    this.#committer = committer
    this.#defer = defer ?? null
  }

  /** Batches committed so far (tests and the bench read it). */
  get batches(): number {
    return this.#batches
  }

  /** The drain in flight, or null when the queue is idle (it never rejects). */
  get running(): Promise<void> | null {
    return this.#running
  }

  /** Queues one accepted append: resolves with `result` once its batch is durable, rejects with the failure. */
  enqueue(item: T, result: AppendResult): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.#queue.push({ item, result, resolve, reject })
      // one batch per microtask (or per `defer`): appends made in the same tick share one commit
      if (!this.#running) {
        const defer = this.#defer
        this.#running = defer === null ? Promise.resolve().then(() => this.#drain())
          : new Promise<void>((resolve) => defer(resolve)).then(() => this.#drain())
      }
    })
  }

  /** Resolves when everything queued so far is durable; rejects with the failure. */
  barrier(): Promise<void> {
    return new Promise((resolve, reject) => {
      const failed = this.#committer.failed()
      if (failed) return reject(failed)
      if (!this.#running) return resolve()
      this.#running.then(() => {
        const f = this.#committer.failed()
        return f ? reject(f) : resolve()
      })
    })
  }

  /** While a batch commits, new appends queue for the next one. */
  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue
      this.#queue = []
      try {
        await this.#committer.commit(batch.map((p) => p.item))
      } catch (err) {
        const e = this.#committer.stop(err)
        const rest = this.#queue
        this.#queue = []
        for (const p of [...batch, ...rest]) p.reject(e)
        break
      }
      this.#batches++
      for (const p of batch) p.resolve(p.result)
    }
    this.#running = null
  }
}
