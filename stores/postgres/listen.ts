/**
 * How an **app's** parked agents on a PostgreSQL store hear of decisions other processes record
 * (docs/spec/lifecycle.md §9: "a running owner receives it at once"; decision-channel.ts).
 *
 * `turnlog_decide` NOTIFYs `turnlog_input` with the session id in the transaction that records
 * the row: the same channel, from the same function, that wakes the workers (workers/pool.ts). So
 * one LISTEN connection per store serves every parked app-owned session of the process:
 *
 * - `subscribe(sessionId, …)` (the channel's `keepAlive(true)`: the agent parked) registers the
 *   session and reads its unlogged rows once (a decision committed after the agent's last read
 *   and before it listened was notified to nobody). The connection is opened with the first
 *   subscriber and ended with the last one (a process with no parked agent holds no extra
 *   connection, and one that waits for a person stays alive: the socket and the fallback timer).
 * - A notification for a subscribed session reads that session's rows. Reads asked for in the
 *   same tick are one statement (`session_id = ANY($1)`): a burst of notifications, or 10,000
 *   sessions parking at once, costs one query per tick, not one per session.
 * - NOTIFY is an early wake only (lost while the connection is down or reconnecting), so a slow
 *   fallback poll reads **all** subscribed sessions in one statement every `pollMs` while
 *   listening, and every min(`pollMs`, 500 ms) while the connection is down; a (re)connect reads
 *   them all at once after its LISTEN (catch-up). Every delivery is made from table rows, never
 *   from a notification's payload.
 * - A lost connection is reopened after a backoff (doubling from 500 ms up to 5 s); errors go
 *   to the subscribers' `onError` (once per outage), never out of here.
 */
import pg from 'pg'
import type { AnswerRecord, DecisionRecord } from '../types.js'
import { isAnswerRow, parseAnswerRecord } from '../answer-records.js'
import { parseRecord } from './decisions.js'
import { INPUT_CHANNEL } from './schema.js'

/** What the listener needs of its store. */
export interface ListenHost {
  readonly pool: pg.Pool
  /** When given, the LISTEN connection is a client of its own (else one of the pool's, held). */
  readonly connectionString: string | undefined
}

/** The poll while the LISTEN connection is down (the pre-LISTEN polling interval). */
export const PG_DECISION_DOWN_POLL_MS = 500

interface Sub {
  /** The unlogged rows by id: decisions, and answers of input rounds (the same table). */
  deliver: (rows: ReadonlyMap<string, DecisionRecord | AnswerRecord>) => void
  onError: (err: unknown) => void
}

export class DecisionListener {
  readonly #subs = new Map<string, Set<Sub>>()
  #client: pg.Client | pg.PoolClient | null = null
  #connecting = false
  #timer: NodeJS.Timeout | null = null
  #retry: NodeJS.Timeout | null = null
  #failures = 0
  #closed = false
  /** Sessions to read at the next flush (coalesced per tick). */
  readonly #want = new Set<string>()
  #flushing: Promise<void> | null = null
  #flushQueued = false
  /** Statements that read `turnlog_decisions` here, and notifications heard (tests and the bench read them). */
  readonly stats = { reads: 0, notifications: 0, connects: 0 }

  /** @param pollMs the fallback poll while listening (a lost notification is found within it) */
  constructor(readonly host: ListenHost, readonly pollMs: number) {}

  /** True while the LISTEN connection is up. */
  get listening(): boolean {
    return this.#client !== null
  }

  /** True when no read is asked for or running (tests wait for it before counting). */
  get quiet(): boolean {
    return !this.#flushQueued && this.#flushing === null && this.#want.size === 0
  }

  /**
   * Registers a parked session: `deliver` receives its unlogged rows (a map by approval id; the
   * same row may come again: the caller dedups) after the first read, each notification and
   * each fallback poll. Returns the unsubscribe.
   */
  subscribe(sessionId: string, deliver: Sub['deliver'], onError: Sub['onError']): () => void {
    const sub: Sub = { deliver, onError }
    if (this.#closed) return () => {}
    let set = this.#subs.get(sessionId)
    if (!set) this.#subs.set(sessionId, (set = new Set()))
    set.add(sub)
    this.#read([sessionId])
    this.#ensure()
    let done = false
    return () => {
      if (done) return
      done = true
      const s = this.#subs.get(sessionId)
      s?.delete(sub)
      if (s && s.size === 0) this.#subs.delete(sessionId)
      if (this.#subs.size === 0) this.#idle()
    }
  }

  /** Ends the connection and every subscription (the store's `close()`). */
  close(): void {
    this.#closed = true
    this.#subs.clear()
    this.#idle()
  }

  // ------------------------------------------------------------------ reads

  #read(ids: Iterable<string>): void {
    for (const id of ids) this.#want.add(id)
    if (this.#flushQueued) return
    this.#flushQueued = true
    setImmediate(() => void this.#flush())
  }

  async #flush(): Promise<void> {
    // one statement at a time: what is asked meanwhile waits for the next one
    if (this.#flushing) await this.#flushing.catch(() => {})
    this.#flushQueued = false
    const ids = [...this.#want].filter((id) => this.#subs.has(id))
    this.#want.clear()
    if (ids.length === 0) return
    this.#flushing = this.#query(ids)
    await this.#flushing
    this.#flushing = null
  }

  async #query(ids: string[]): Promise<void> {
    let rows: Array<{ session_id: string; approval_id: string; record: string }>
    try {
      this.stats.reads++
      const r = await this.host.pool.query(
        `SELECT session_id, approval_id, record::text AS record FROM turnlog_decisions
         WHERE session_id = ANY($1) AND logged_seq IS NULL ORDER BY decided_at`,
        [ids],
      )
      rows = r.rows as typeof rows
    } catch (err) {
      // the fallback poll (or the reconnect's catch-up) reads them again
      for (const id of ids) this.#report(id, err)
      return
    }
    const by = new Map<string, Map<string, DecisionRecord | AnswerRecord>>()
    for (const row of rows) {
      let rec: DecisionRecord | AnswerRecord
      try {
        const parsed = JSON.parse(row.record) as unknown
        rec = isAnswerRow(parsed) ? parseAnswerRecord(row.session_id, row.approval_id, parsed) : parseRecord(row.session_id, row.approval_id, row.record)
      } catch (err) {
        this.#report(row.session_id, err)
        continue
      }
      let m = by.get(row.session_id)
      if (!m) by.set(row.session_id, (m = new Map()))
      m.set(row.approval_id, rec)
    }
    for (const [id, m] of by) {
      for (const sub of [...(this.#subs.get(id) ?? [])]) {
        try {
          sub.deliver(m)
        } catch (err) {
          this.#report(id, err)
        }
      }
    }
  }

  #report(sessionId: string | null, err: unknown): void {
    const targets = sessionId === null ? [...this.#subs.values()].flatMap((s) => [...s]) : [...(this.#subs.get(sessionId) ?? [])]
    for (const sub of targets) {
      try {
        sub.onError(err)
      } catch {
        // an observer that throws changes nothing
      }
    }
  }

  // ------------------------------------------------------------------ the fallback poll

  #arm(): void {
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
    if (this.#closed || this.#subs.size === 0) return
    const ms = this.#client !== null ? this.pollMs : Math.min(this.pollMs, PG_DECISION_DOWN_POLL_MS)
    this.#timer = setTimeout(() => {
      this.#timer = null
      this.#read(this.#subs.keys())
      this.#arm()
    }, ms)
  }

  // ------------------------------------------------------------------ the connection

  #ensure(): void {
    if (this.#timer === null) this.#arm()
    if (this.#closed || this.#client !== null || this.#connecting || this.#retry !== null) return
    void this.#connect()
  }

  async #connect(): Promise<void> {
    this.#connecting = true
    let c: pg.Client | pg.PoolClient | null = null
    // the 'error' handler is attached before the client can emit (an unhandled 'error' would
    // end the process): a lost connection is reopened after a backoff; polling serves meanwhile
    const lost = (err?: unknown): void => {
      if (c === null || this.#client !== c) return
      this.#client = null
      if (err !== undefined && this.#failures === 0) this.#report(null, err)
      endClient(c)
      this.#later()
      this.#arm()
    }
    try {
      if (this.host.connectionString) {
        const client = new pg.Client({ connectionString: this.host.connectionString })
        client.on('error', lost)
        client.on('end', () => lost())
        c = client
        await client.connect()
      } else {
        const client = await this.host.pool.connect()
        client.on('error', lost)
        client.on('end', () => lost())
        c = client
      }
      c.on('notification', (msg) => {
        if (msg.channel !== INPUT_CHANNEL || !msg.payload) return
        this.stats.notifications++
        if (this.#subs.has(msg.payload)) this.#read([msg.payload])
      })
      await c.query(`LISTEN ${INPUT_CHANNEL}`)
    } catch (err) {
      this.#connecting = false
      if (this.#failures === 0) this.#report(null, err)
      if (c) endClient(c)
      this.#later()
      return
    }
    this.#connecting = false
    if (this.#closed || this.#subs.size === 0) {
      endClient(c)
      return
    }
    this.#client = c
    this.#failures = 0
    this.stats.connects++
    // catch-up: everything committed before the LISTEN took effect is in the table now
    this.#read(this.#subs.keys())
    this.#arm()
  }

  /** Reopens the connection after a backoff (doubling per failure in a row, up to 5 s). */
  #later(): void {
    if (this.#closed || this.#subs.size === 0 || this.#retry !== null) return
    const delay = Math.min(5000, PG_DECISION_DOWN_POLL_MS * 2 ** Math.min(this.#failures++, 4))
    this.#retry = setTimeout(() => {
      this.#retry = null
      this.#ensure()
    }, delay)
  }

  /** No subscriber left: no connection, no timer (the process may exit). */
  #idle(): void {
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
    if (this.#retry !== null) clearTimeout(this.#retry)
    this.#retry = null
    this.#want.clear()
    const c = this.#client
    this.#client = null
    if (c) endClient(c)
  }
}

/** Ends a LISTEN connection: a pool's client is destroyed, not returned (it still listens). */
function endClient(c: pg.Client | pg.PoolClient): void {
  try {
    if ('release' in c && typeof c.release === 'function') c.release(true)
    else void (c as pg.Client).end().catch(() => {})
  } catch {
    // released already
  }
}
