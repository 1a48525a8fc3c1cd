/**
 * The workers' statements on PostgreSQL (backend.ts; the protocol is in pool.ts): the claim
 * (`FOR UPDATE SKIP LOCKED`: two workers never wait on, or both take, one session), the batched
 * heartbeat (on the LISTEN connection, so a pool busy with appends cannot delay it), the
 * fallback check (checks.ts), and LISTEN `turnlog_input` / `turnlog_cancel` as early wakes (NOTIFY
 * is not durable: the pool polls anyway). A lost LISTEN connection is retried with backoff; it
 * never throws.
 */
import type pg from 'pg'
import { CANCEL_CHANNEL } from '../stores/postgres/cancels.js'
import { DUE } from '../stores/postgres/decisions.js'
import { INPUT_CHANNEL } from '../stores/postgres/schema.js'
import type { PostgresStore } from '../stores/postgres/store.js'
import type { CancelInboxRow, CancelRequestRow, ClaimRound, InboxRow, WakeHandlers, WorkerBackend, WorkerStore } from './backend.js'
import { CHECK_SQL } from './checks.js'

export class PgBackend implements WorkerBackend {
  #listener: pg.Client | pg.PoolClient | null = null
  #listenerRetry: NodeJS.Timeout | null = null
  #listenFailures = 0
  #closed = false
  #handlers: WakeHandlers | null = null

  constructor(readonly pgStore: PostgresStore, readonly pollMs: number, readonly report: (err: unknown) => void) {}

  get store(): WorkerStore {
    return this.pgStore as unknown as WorkerStore
  }

  get listening(): boolean {
    return this.#listener !== null
  }

  async #query(sql: string, params: unknown[]): Promise<{ rows: unknown[] }> {
    return this.pgStore.pool.query(sql, params)
  }

  /**
   * Expired leases come first (`lease_owner IS NULL` sorts false first): a session whose holder
   * died was already accepted and is mid-answer. The claim also returns, per session, whether a
   * stop request is open or a decision is unlogged, and its unmoved sent messages (one statement
   * for all the sessions it takes).
   */
  async claim(workerId: string, leaseMs: number, room: number, skip: readonly string[]): Promise<ClaimRound> {
    // `soon` (one row, always): when the first lease of another worker that missed a heartbeat runs
    // out. A live holder beats every third of a lease, so its lease has more than 0.6 of one left;
    // less means a beat was missed (a dead or stalled worker). Read in the same statement, so
    // knowing it costs no query.
    const r = await this.#query(
      `WITH picked AS (
         UPDATE turnlog_sessions s SET token = s.token + 1, lease_owner = $1,
           lease_until = clock_timestamp() + $2 * interval '1 millisecond'
         FROM (SELECT id FROM turnlog_sessions
               WHERE ((lease_owner IS NULL AND (pending > 0 OR ${DUE}))
                   OR (lease_owner IS NOT NULL AND lease_until <= clock_timestamp()))
                 AND NOT (id = ANY($4))
                 -- a child session (docs/spec/lifecycle.md §10) is served by its parent's call, never on its own
                 AND header->'parent'->>'callId' IS NULL
               ORDER BY lease_owner IS NULL, last_activity LIMIT $3 FOR UPDATE SKIP LOCKED) AS pick
         WHERE s.id = pick.id
         RETURNING s.id, s.token, s.length, s.header::text AS header,
           EXISTS (SELECT 1 FROM turnlog_cancels c WHERE c.session_id = s.id AND c.handled_at IS NULL) AS cancels,
           EXISTS (SELECT 1 FROM turnlog_decisions d WHERE d.session_id = s.id AND d.logged_seq IS NULL) AS decisions,
           (SELECT json_agg(json_build_object('message_id', i.message_id, 'target', i.target, 'wake', i.wake, 'message', i.message::text) ORDER BY i.n)::text
            FROM turnlog_inbox i WHERE i.session_id = s.id AND i.moved_seq IS NULL) AS inbox,
           CASE WHEN s.due_at <= clock_timestamp() THEN round(extract(epoch FROM clock_timestamp() - s.due_at) * 1000) END AS overdue_ms),
       soon AS (
         SELECT ceil(extract(epoch FROM min(lease_until) - clock_timestamp()) * 1000) AS stale_ms FROM turnlog_sessions
         WHERE lease_owner IS NOT NULL AND lease_owner <> $1 AND lease_until > clock_timestamp()
           AND lease_until < clock_timestamp() + $2 * 0.6 * interval '1 millisecond')
       SELECT picked.*, soon.stale_ms FROM soon LEFT JOIN picked ON true`,
      [workerId, leaseMs, room, skip],
    )
    const rows = r.rows as Array<{ id: string | null; token: string; length: number; header: string; cancels: boolean; decisions: boolean; inbox: string | null; overdue_ms: string | null; stale_ms: string | null }>
    const stale = rows[0]?.stale_ms ?? null
    return {
      claimed: rows.filter((row): row is typeof row & { id: string } => row.id !== null).map((row) => ({
        id: row.id,
        adopt: () => this.pgStore.adopt(row.id, Number(row.token), row.length, row.header, leaseMs, false),
        cancels: row.cancels, decisions: row.decisions, inbox: inboxRows(row.inbox),
        overdueMs: row.overdue_ms === null ? null : Number(row.overdue_ms),
      })),
      staleLeaseExpiresInMs: stale === null ? null : Math.max(0, Number(stale)),
    }
  }

  async beat(leaseMs: number, live: ReadonlyArray<{ id: string; token: number }>): Promise<Set<string>> {
    const q = this.#listener ?? this.pgStore.pool
    const r = await q.query(
      `UPDATE turnlog_sessions s SET lease_until = clock_timestamp() + $1 * interval '1 millisecond'
       FROM unnest($2::text[], $3::bigint[]) AS h(id, token)
       WHERE s.id = h.id AND s.token = h.token AND s.lease_owner IS NOT NULL AND s.lease_until > clock_timestamp()
       RETURNING s.id`,
      [leaseMs, live.map((x) => x.id), live.map((x) => x.token)],
    )
    return new Set((r.rows as Array<{ id: string }>).map((x) => x.id))
  }

  async check(ids: readonly string[], children: readonly string[]): Promise<Array<{ session_id: string; cancel: boolean }>> {
    const r = await this.#query(CHECK_SQL, [ids, children])
    return r.rows as Array<{ session_id: string; cancel: boolean }>
  }

  async inbox(sessionId: string): Promise<InboxRow[]> {
    const r = await this.#query(
      'SELECT message_id, target, wake, message::text AS message FROM turnlog_inbox WHERE session_id = $1 AND moved_seq IS NULL ORDER BY n',
      [sessionId],
    )
    return r.rows as InboxRow[]
  }

  async decisionRows(sessionId: string): Promise<Array<{ approval_id: string; record: string }>> {
    const r = await this.#query(
      'SELECT approval_id, record::text AS record FROM turnlog_decisions WHERE session_id = $1 AND logged_seq IS NULL ORDER BY decided_at',
      [sessionId],
    )
    return r.rows as Array<{ approval_id: string; record: string }>
  }

  async cancelRequests(sessionId: string): Promise<CancelRequestRow[]> {
    const r = await this.#query(
      `SELECT n::text AS n, cause::text AS cause, sent_before::text AS sent_before, length_at
       FROM turnlog_cancels WHERE session_id = $1 AND handled_at IS NULL ORDER BY n`, [sessionId])
    return r.rows as CancelRequestRow[]
  }

  async cancelInbox(sessionId: string, sentBefore: string, lengthAt: number, named: readonly string[]): Promise<CancelInboxRow[]> {
    const r = await this.#query(
      `SELECT message_id, moved_seq, target, message::text AS message FROM turnlog_inbox
       WHERE session_id = $1 AND n <= $2::bigint AND (moved_seq IS NULL OR moved_seq >= $3 OR message_id = ANY($4::text[]))
       ORDER BY n`, [sessionId, sentBefore, lengthAt, named])
    return r.rows as CancelInboxRow[]
  }

  async cancelHandled(n: string, outcome: string, endSeq: number | null): Promise<void> {
    await this.#query(
      'UPDATE turnlog_cancels SET handled_at = now(), outcome = $2, end_seq = $3 WHERE n = $1::bigint AND handled_at IS NULL',
      [n, outcome, endSeq])
  }

  listen(handlers: WakeHandlers): void {
    this.#handlers = handlers
    void this.#listen()
  }

  async #listen(): Promise<void> {
    if (this.#closed) return
    let c: pg.Client | pg.PoolClient | null = null
    // Issue 24 item 2: the client's 'error' handler is attached before it can emit (a server
    // restart's 57P01 admin_shutdown during or right after connect was an unhandled 'error' that
    // killed the worker). A lost LISTEN connection is retried with backoff; it never throws.
    const lost = (err?: unknown) => {
      if (err !== undefined) this.report(err)
      if (c === null || this.#listener !== c) return
      this.#listener = null
      this.#retryListen()
    }
    try {
      if (this.pgStore.connectionString) {
        // loaded here, not at the top: the workers' module is shared with the SQLite store's
        // subpath, which must load without the optional `pg` installed
        const { default: pgLib } = await import('pg')
        const client = new pgLib.Client({ connectionString: this.pgStore.connectionString })
        client.on('error', lost)
        client.on('end', () => lost())
        c = client
        await client.connect()
      } else {
        const client = await this.pgStore.pool.connect()
        client.on('error', lost)
        client.on('end', () => lost())
        c = client
      }
    } catch (err) {
      this.report(err)
      if (c) endClient(c)
      this.#retryListen()
      return
    }
    c.on('notification', (msg) => {
      if (this.#closed || !msg.payload) return
      if (msg.channel === CANCEL_CHANNEL) this.#handlers?.cancel(msg.payload)
      else if (msg.channel === INPUT_CHANNEL) this.#handlers?.input(msg.payload)
    })
    try {
      await c.query(`LISTEN ${INPUT_CHANNEL}; LISTEN ${CANCEL_CHANNEL}`)
    } catch (err) {
      this.report(err)
      endClient(c)
      this.#retryListen()
      return
    }
    if (this.#closed) {
      endClient(c)
      return
    }
    this.#listener = c
    this.#listenFailures = 0
    // input sent while we were not listening: catch up now
    this.#handlers?.connected()
  }

  /** Reconnects the LISTEN client after pollMs, doubling per failure in a row up to 5 s (a server
   * that is restarting is not hammered; polling serves the sessions meanwhile). */
  #retryListen(): void {
    if (this.#closed || this.#listenerRetry) return
    const delay = Math.min(5000, this.pollMs * 2 ** Math.min(this.#listenFailures++, 8))
    this.#listenerRetry = setTimeout(() => {
      this.#listenerRetry = null
      void this.#listen()
    }, delay)
  }

  close(): void {
    this.#closed = true
    if (this.#listenerRetry) clearTimeout(this.#listenerRetry)
    const l = this.#listener
    this.#listener = null
    if (l) endClient(l)
  }
}

/** The claim's `inbox` column (json text of the unmoved rows, or null for none); null when it
 * cannot be read (the start then reads the inbox itself). */
function inboxRows(text: string | null): InboxRow[] | null {
  if (text === null) return []
  try {
    const rows = JSON.parse(text) as unknown
    return Array.isArray(rows) ? (rows as InboxRow[]) : null
  } catch {
    return null
  }
}

function endClient(c: pg.Client | pg.PoolClient): void {
  if ('release' in c && typeof c.release === 'function') c.release(true)
  else void (c as pg.Client).end().catch(() => {})
}
