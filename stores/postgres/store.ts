/**
 * `postgresStore({ connectionString } | { pool })`: the store contract on PostgreSQL, for sessions
 * shared by many processes and machines (docs/spec/api.md "Stores" → "Across machines"). See schema.ts for
 * the tables and decision record "postgres-workers" (docs/decisions/ in the repository).
 *
 * - `open(id, 'write')` takes the session's **lease**: it succeeds when nobody holds it or the
 *   holder's lease expired (server clock), and bumps the fencing `token`. The writer extends the
 *   lease with every append and a heartbeat every `leaseMs / 3`; `close()` releases it.
 * - Every append is one call of `turnlog_append` (one statement): token, expiry and expected seq
 *   are checked under the session row's lock in the same transaction as the multi-row INSERT.
 *   A writer whose lease was taken over or ran out gets `LEASE_LOST` and stops for good.
 * - `send(sessionId, message, { target })`: durable input from any process without the lease.
 */
import { requestCancel, type CancelRequest, type CancelRequestCause } from './cancels.js'
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import pg from 'pg'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import type { LogHeader } from '../../events/jsonl.js'
import { decodeStoredEvent, parseStoredHeader, positiveOption } from '../stored-text.js'
import { defaultRegistry, type EventRegistry } from '../../events/registry.js'
import { assertSessionId } from '../ids.js'
import { makeHeader } from '../memory.js'
import type { DecisionRecord, HeaderInit, LogReader, LogStore, LogWriter, OpenMode, OpenWriteOptions } from '../types.js'
import { pgError } from './errors.js'
import { MIGRATE_LOCK, MIGRATION } from './schema.js'
import { DUE_MIGRATION } from './wakeup-due.js'
import { DECISIONS_MIGRATION, UNLOGGED_JSON, unloggedDecisions } from './decisions.js'
import { decidePg } from './decide.js'
import { decideThroughChildren } from '../decide-children.js'
import { pendingSendsPg, sendPg, type MessageLike, type SendOptions } from './sends.js'
import type { StoreDecided, StoreDecideOptions, StoreDecisionInput } from '../decide.js'
import { PgReader, PgWriter } from './writer.js'
import { DecisionListener } from './listen.js'
import { PG_DECISION_POLL_MS } from './decision-channel.js'

export type { MessageLike, SendOptions } from './sends.js'

export interface PostgresStoreOptions {
  /** A `postgres://` URL; the store makes (and `close()` ends) its own pool. */
  connectionString?: string
  /** Your pool instead (the store never ends it). */
  pool?: pg.Pool
  registry?: EventRegistry
  /** Epoch ms for headers. Default `Date.now`. */
  clock?: () => number
  /** Lease length of `open(id, 'write')` (heartbeat every third of it). Default 30 000 ms. */
  leaseMs?: number
  /** Who holds the leases this store takes (shown by `turnlog sessions`). Default `host:pid:random`. */
  owner?: string
  /**
   * An append whose connection broke (terminated backend, server restart) has an unknown outcome:
   * the writer, still holding its lease, reads back the session's length and either finds the
   * batch committed or sends it again. It tries this many times, `retryDelayMs` apart (doubling),
   * then stops with `IO_ERROR`. Default 6 attempts from 100 ms.
   */
  retryAttempts?: number
  retryDelayMs?: number
  /**
   * An app's parked agents (not workers: they have their own LISTEN) hear of decisions other
   * processes record by LISTEN/NOTIFY on one connection per store (listen.ts); this is the
   * fallback poll for a lost notification, one statement for all the process's parked sessions.
   * While that connection is down they are read every min(this, 500) ms. Default 30 000 ms.
   */
  decisionPollMs?: number
  /** Test seam: the writer's heartbeat scheduler. */
  setInterval?: (fn: () => void, ms: number) => { unref?(): void } | unknown
  clearInterval?: (t: unknown) => void
}

/** One row of `sessions()` (and `turnlog sessions`). */
export interface SessionRow {
  id: string
  events: number
  /** `running`: a live lease; `expired`: a lease ran out (its holder died or stalled); `waiting`:
   * sent input and no holder; `idle`: nothing owed. */
  status: 'running' | 'expired' | 'waiting' | 'idle'
  pending: number
  leaseOwner: string | null
  leaseUntil: string | null
  token: number
  lastActivity: string
  createdAt: string
  /** Resume's give-ups (docs/spec/lifecycle.md §8, `resume/given-up`): the acknowledged messages it left
   * unanswered, with the event's seq and the turn it stopped re-running. Empty for most sessions. */
  givenUp: Array<{ seq: number; turn: number; runs: number; messages: string[] }>
}

export function postgresStore(opts: PostgresStoreOptions): PostgresStore {
  return new PostgresStore(opts)
}

export class PostgresStore implements LogStore {
  readonly kind = 'postgres'
  /** @internal */ readonly pool: pg.Pool
  /** @internal */ readonly registry: EventRegistry
  /** @internal */ readonly clock: () => number
  readonly leaseMs: number
  readonly owner: string
  /** @internal */ readonly decisionPollMs: number
  /** @internal the LISTEN connection of this process's parked app-owned agents (listen.ts) */
  readonly decisionListener: DecisionListener
  /** @internal */ readonly retryAttempts: number
  /** @internal */ readonly retryDelayMs: number
  /** @internal */ readonly timers: { set: (fn: () => void, ms: number) => unknown; clear: (t: unknown) => void }
  readonly #ownsPool: boolean
  /** The connection string, when given (workers open their LISTEN connection with it). */
  readonly connectionString: string | undefined

  constructor(opts: PostgresStoreOptions) {
    if (typeof opts !== 'object' || opts === null || (!opts.pool && typeof opts.connectionString !== 'string')) {
      throw new TurnlogError('INVALID_ARGUMENT', 'postgresStore needs { connectionString } or { pool }', { field: 'connectionString' })
    }
    this.#ownsPool = !opts.pool
    this.connectionString = opts.connectionString
    this.pool = opts.pool ?? new pg.Pool({ connectionString: opts.connectionString, max: 10 })
    // an idle client whose backend is terminated emits 'error' on the pool: without a listener
    // that would crash the process; the pool drops the client and the next query reconnects
    this.pool.on('error', () => {})
    this.registry = opts.registry ?? defaultRegistry
    this.clock = opts.clock ?? Date.now
    this.leaseMs = positiveOption(opts.leaseMs, 30_000, 'leaseMs')
    this.decisionPollMs = positiveOption(opts.decisionPollMs, PG_DECISION_POLL_MS, 'decisionPollMs')
    this.decisionListener = new DecisionListener(this, this.decisionPollMs)
    this.owner = opts.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    this.retryAttempts = positiveOption(opts.retryAttempts, 6, 'retryAttempts')
    this.retryDelayMs = positiveOption(opts.retryDelayMs, 100, 'retryDelayMs')
    this.timers = {
      set: opts.setInterval ?? ((fn, ms) => {
        const t = setInterval(fn, ms)
        t.unref()
        return t
      }),
      clear: (opts.clearInterval ?? ((t: unknown) => clearInterval(t as NodeJS.Timeout))) as (t: unknown) => void,
    }
  }

  /** Creates the tables and functions (idempotent; safe from several processes at once). */
  async migrate(): Promise<void> {
    const c = await this.#connect()
    try {
      await c.query('BEGIN')
      await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK])
      await c.query(MIGRATION)
      await c.query(DECISIONS_MIGRATION)
      await c.query(DUE_MIGRATION)
      await c.query('COMMIT')
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {})
      throw pgError(err, undefined, 'migrate failed')
    } finally {
      c.release()
    }
  }

  async create(id: string, init: HeaderInit = {}): Promise<LogHeader> {
    assertSessionId(id)
    const header = makeHeader(id, init, this.clock)
    const r = await this.query(
      'INSERT INTO turnlog_sessions (id, header) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id',
      [id, JSON.stringify(header)], id, 'create failed',
    )
    if (r.rowCount === 0) throw new TurnlogError('SESSION_EXISTS', `session ${JSON.stringify(id)} exists already`, { sessionId: id })
    return header
  }

  open(id: string, mode: 'read'): Promise<LogReader>
  open(id: string, mode: 'write', opts?: OpenWriteOptions): Promise<LogWriter>
  open(id: string, mode: OpenMode, opts?: OpenWriteOptions): Promise<LogReader | LogWriter>
  async open(id: string, mode: OpenMode, _opts?: OpenWriteOptions): Promise<LogReader | LogWriter> {
    assertSessionId(id)
    if (mode === 'read') {
      const r = await this.query('SELECT header::text AS header, length FROM turnlog_sessions WHERE id = $1', [id], id, 'open failed')
      const row = r.rows[0] as { header: string; length: number } | undefined
      if (!row) throw new TurnlogError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)} in the store`, { sessionId: id })
      return new PgReader(this, id, this.parseHeader(id, row.header), row.length)
    }
    if (mode !== 'write') {
      throw new TurnlogError('INVALID_ARGUMENT', `open mode must be 'read' or 'write', got ${String(mode)}`, { sessionId: id })
    }
    const r = await this.query(
      `UPDATE turnlog_sessions SET token = token + 1, lease_owner = $2,
         lease_until = clock_timestamp() + $3 * interval '1 millisecond'
       WHERE id = $1 AND (lease_owner IS NULL OR lease_until IS NULL OR lease_until <= clock_timestamp())
       RETURNING token, length, header::text AS header, (${UNLOGGED_JSON}) AS decisions`,
      [id, this.owner, this.leaseMs], id, 'open failed',
    )
    const row = r.rows[0] as { token: string; length: number; header: string; decisions: string | null } | undefined
    if (!row) {
      const seen = await this.query('SELECT lease_owner, lease_until, token FROM turnlog_sessions WHERE id = $1', [id], id, 'open failed')
      const s = seen.rows[0] as { lease_owner: string | null; lease_until: Date | null; token: string } | undefined
      if (!s) throw new TurnlogError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)} in the store`, { sessionId: id })
      throw new TurnlogError('SESSION_OWNED', `the session is leased by ${s.lease_owner ?? '?'} (token ${s.token})`, {
        sessionId: id, info: { owner: s.lease_owner, token: Number(s.token), leaseUntil: s.lease_until?.toISOString() ?? null },
      })
    }
    const w = this.adopt(id, Number(row.token), row.length, row.header)
    // the decisions recorded while nobody ran the session, read by the same statement (no extra
    // round trip): the agent finds them when it attaches (decision-channel.ts)
    w.openedWith(row.decisions)
    return w
  }

  /**
   * Decides an open approval from any machine, with or without a worker running the session
   * (docs/spec/lifecycle.md §9; stores/postgres/decide.ts): checked against the log, recorded in
   * `turnlog_decisions` (the first decision wins), durable when this resolves; the worker that
   * owns the session (NOTIFY) or claims it (`pending`) logs it once. `seq` is where it was logged
   * if that happened within `waitMs` (default 0: do not wait), else null.

   * An approval id of a request of a running child (the parent's `approvals()` lists them) is
   * decided in that child, as `agent.decide` of the parent does (docs/spec/lifecycle.md §10,
   * stores/decide-children.ts); the result's `sessionId` names the child.
   */
  decide(id: string, approvalId: string, decision: StoreDecisionInput, opts: StoreDecideOptions = {}): Promise<StoreDecided> {
    // an id of a running child's request is decided in that child (docs/spec/lifecycle.md §10, decide-children.ts)
    return decideThroughChildren(this, id, approvalId, (sid) => decidePg(this, sid, approvalId, decision, opts))
  }

  /**
   * The session's decisions recorded in `turnlog_decisions` that its log does not hold yet (a
   * worker or the next owner logs them), by approval id, with who decided and when: what
   * `turnlog approvals` lists as "decided, not logged yet". A malformed row is skipped.
   */
  async decisionsNotLogged(id: string): Promise<Map<string, DecisionRecord>> {
    assertSessionId(id)
    try {
      return await unloggedDecisions((sql, params) => this.pool.query(sql, params), id)
    } catch (err) {
      throw pgError(err, id, 'reading the recorded decisions failed')
    }
  }

  /** A writer for a lease already taken (by a worker's claim): token, length, header text. @internal */
  adopt(id: string, token: number, length: number, headerText: string, leaseMs = this.leaseMs, heartbeat = true): PgWriter {
    return new PgWriter(this, id, this.parseHeader(id, headerText), token, length, leaseMs, heartbeat)
  }

  async list(): Promise<string[]> {
    const r = await this.query('SELECT id FROM turnlog_sessions ORDER BY id COLLATE "C"', [], undefined, 'list failed')
    return (r.rows as Array<{ id: string }>).map((x) => x.id)
  }

  async has(id: string): Promise<boolean> {
    assertSessionId(id)
    const r = await this.query('SELECT 1 FROM turnlog_sessions WHERE id = $1', [id], id, 'has failed')
    return (r.rowCount ?? 0) > 0
  }

  /**
   * Durable input from any process, without the lease: resolves once the message is committed,
   * with the id its logged message will carry. Creates the session if it does not exist. The
   * session's lease holder (a worker) moves it into the log as an ordinary inbox splice, exactly
   * once, in send order; a NOTIFY wakes the workers early. Sending the same message id again is a
   * no-op that resolves with the id (so a retried HTTP request does not duplicate input).
   * `INVALID_MESSAGE` for a message the agent would refuse.
   */
  async send(sessionId: string, message: MessageLike, opts: SendOptions = {}): Promise<string> {
    return sendPg(this, sessionId, message, opts)
  }


  /**
   * The ids of the messages `send` made durable for this session that no holder has moved into the
   * log yet, in send order: acknowledged input the log does not show (an HTTP resume waits for the
   * turn that will answer it). `[]` for a session with none, or none at all.
   */
  pendingSends(sessionId: string): Promise<string[]> {
    return pendingSendsPg(this, sessionId)
  }


  /**
   * Asks the worker that holds (or next takes) the session to cancel what it is answering and the
   * input sent before now that is not answered yet (`POST /chat/:id/stop` with workers; cancels.ts
   * says exactly what a request covers). Durable when it resolves; the cancel itself happens in the
   * worker. `state: 'idle'` when nothing was running or waiting. SESSION_NOT_FOUND for an unknown
   * session.
   */
  cancel(sessionId: string, opts: { cause?: CancelRequestCause } = {}): Promise<CancelRequest> {
    return requestCancel(this, sessionId, opts.cause)
  }

  /** One row per session, for `turnlog sessions`. */
  async sessions(): Promise<SessionRow[]> {
    const r = await this.query(
      `SELECT id, length, pending, lease_owner, lease_until, token, last_activity, created_at,
              (lease_owner IS NOT NULL AND lease_until > clock_timestamp()) AS live
       FROM turnlog_sessions ORDER BY id COLLATE "C"`, [], undefined, 'sessions failed',
    )
    const g = await this.query(
      `SELECT session_id, seq, event::text AS event FROM turnlog_events
       WHERE (event->>'type') = 'resume/given-up' ORDER BY session_id, seq`, [], undefined, 'sessions failed',
    )
    const givenUp = new Map<string, SessionRow['givenUp']>()
    for (const row of g.rows as Array<{ session_id: string; seq: number; event: string }>) {
      // log content: read inside a guard (a malformed record is listed with what it holds)
      let d: Record<string, unknown> = {}
      try {
        d = (JSON.parse(row.event) as { data?: Record<string, unknown> }).data ?? {}
      } catch {
        // listed with no messages
      }
      const list = givenUp.get(row.session_id) ?? []
      list.push({
        seq: Number(row.seq), turn: Number(d.turn) || 0, runs: (Number(d.runs) || 0) + (Number(d.unreachedRuns) || 0),
        messages: Array.isArray(d.messages) ? d.messages.map(String) : [],
      })
      givenUp.set(row.session_id, list)
    }
    return (r.rows as Array<Record<string, unknown>>).map((x) => ({
      id: String(x.id),
      events: Number(x.length),
      status: x.live ? 'running' : x.lease_owner ? 'expired' : Number(x.pending) > 0 ? 'waiting' : 'idle',
      pending: Number(x.pending),
      leaseOwner: (x.lease_owner as string | null) ?? null,
      leaseUntil: x.lease_until instanceof Date ? x.lease_until.toISOString() : null,
      token: Number(x.token),
      lastActivity: (x.last_activity as Date).toISOString(),
      createdAt: (x.created_at as Date).toISOString(),
      givenUp: givenUp.get(String(x.id)) ?? [],
    }))
  }

  /** Ends the pool when the store made it. */
  async close(): Promise<void> {
    this.decisionListener.close()
    if (this.#ownsPool) await this.pool.end().catch(() => {})
  }

  /** A parameterised query with a coded error. @internal */
  async query(sql: string, params: unknown[], sessionId: string | undefined, what: string): Promise<pg.QueryResult> {
    try {
      return await this.pool.query(sql, params)
    } catch (err) {
      throw pgError(err, sessionId, what)
    }
  }

  async #connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect()
    } catch (err) {
      throw pgError(err, undefined, 'cannot connect')
    }
  }

  /** @internal */
  parseHeader(id: string, text: string): LogHeader {
    return parseStoredHeader(id, text)
  }

  /** Decodes and validates one stored event (a database is not trusted more than a file). @internal */
  decodeEvent(id: string, text: string, seq: number): LogEvent {
    return decodeStoredEvent(this.registry, id, text, seq)
  }
}

