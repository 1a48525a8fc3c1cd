/**
 * Group commit for the SQLite store: the transactions asked for in one turn of the event loop (an
 * app that sends to many sessions at once, `Promise.all` of `store.send`; the appends of a worker's
 * sessions), and those asked for while another process holds the write lock, run in ONE `BEGIN
 * IMMEDIATE` transaction, so they share one lock acquisition and one WAL sync instead of one each.
 * The group is flushed by `setImmediate`, not a microtask: a session's next append is several
 * promise hops after the last one resolved, and a microtask flush cut the sessions of one round
 * into several groups (B8 on one file, 8 processes: 7.3-7.6x one worker with microtasks, 7.7x and
 * half the worker CPU with setImmediate). Each runs
 * inside its own savepoint: one that throws is rolled back alone and rejects alone; the others
 * commit. Every promise settles only after the COMMIT (durable when it resolves, as before); a
 * COMMIT that fails, or a lock never got, rejects them all (nothing of them written).
 */
import type { SqlDb } from './driver.js'

/** What a group needs of its store (`SqliteStore`). */
export interface GroupHost {
  readonly db: SqlDb
  tx<T>(fn: () => T): Promise<T>
}

interface Item {
  fn: () => unknown
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
}

export class TxGroup {
  #queued: Item[] | null = null

  constructor(private readonly host: GroupHost) {}

  /** Runs `fn` (synchronous) in the next group transaction; resolves with its value once committed. */
  run<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#queued === null) {
        this.#queued = []
        setImmediate(() => void this.#flush())
      }
      this.#queued.push({ fn, resolve: resolve as (v: unknown) => void, reject })
    })
  }

  async #flush(): Promise<void> {
    // the queue stays open until the write lock is ours: what is asked for while another process
    // holds it joins this transaction (group commit under contention), not the next one
    let items: Item[] | null = null
    // the first call closes the queue; later ones return what it took (a queue opened since then
    // belongs to the next flush, already scheduled: nulling it here would lose its items)
    const take = (): Item[] => {
      if (items === null) {
        items = this.#queued ?? []
        this.#queued = null
      }
      return items
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = []
    try {
      await this.host.tx(() => {
        const db = this.host.db
        for (const item of take()) {
          db.exec('SAVEPOINT turnlog_group_item')
          try {
            const value = item.fn()
            db.exec('RELEASE turnlog_group_item')
            outcomes.push({ ok: true, value })
          } catch (error) {
            db.exec('ROLLBACK TO turnlog_group_item')
            db.exec('RELEASE turnlog_group_item')
            outcomes.push({ ok: false, error })
          }
        }
      })
    } catch (err) {
      for (const item of take()) item.reject(err)
      return
    }
    take().forEach((item, i) => {
      const o = outcomes[i]!
      if (o.ok) item.resolve(o.value)
      else item.reject(o.error)
    })
  }
}
