/**
 * `sqliteStore(file, options?)`: the store contract in ONE SQLite file for any number of sessions,
 * indexed (list, parked, due wakeups, leases), shared by several processes on one machine with
 * the same single-writer fencing as PostgreSQL (docs/spec/api.md "Stores"; schema.ts for the tables;
 * decision record "sqlite-durability" (docs/decisions/ in the repository) for `journal_mode = WAL`, `synchronous = FULL`).
 *
 * - `open(id, 'write')` takes the session's lease (nobody holds it, or the holder's lease expired)
 *   and bumps the fencing `token`; the writer extends it with every append and a heartbeat every
 *   `leaseMs / 3`; `close()` releases it. Every append checks token, expiry and expected seq in
 *   its own savepoint of a `BEGIN IMMEDIATE` transaction that the appends and sends of the same
 *   tick (or of the wait for another process's lock) share: one lock, one WAL sync (group-tx.ts).
 * - `send`, `decide`, `cancel`: durable input, decisions and stop requests from any process
 *   without the lease (side.ts); `runWorkers({ store: sqliteStore(file) })` serves them.
 * - Both drivers are synchronous: a statement that waits for another process's write lock waits
 *   up to `busyTimeoutMs` (SQLite's busy handler), then fails with `IO_ERROR` (nothing written).
 */
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { resolve } from 'node:path'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import type { LogHeader } from '../../events/jsonl.js'
import { decodeStoredEvent, parseStoredHeader, positiveOption } from '../stored-text.js'
import { defaultRegistry, type EventRegistry } from '../../events/registry.js'
import { answerThroughChildren, decideThroughChildren } from '../decide-children.js'
import type { StoreAnswered, StoreAnswerOptions } from '../answer.js'
import type { StoreDecided, StoreDecideOptions, StoreDecisionInput } from '../decide.js'
import { assertSessionId } from '../ids.js'
import { makeHeader } from '../memory.js'
import type { AnswerRecord, DecisionRecord, HeaderInit, LogReader, LogStore, LogWriter, OpenMode, OpenWriteOptions } from '../types.js'
import { isBusy, openDb, sqlError, type SqlArrayStatement, type SqlDb, type SqlStatement, type SqliteDriverName } from './driver.js'
import { unloggedAnswers, unloggedDecisions } from './rows.js'
import { migrate, SQLITE_SCHEMA_VERSION } from './schema.js'
import { sessionRows, type SqliteSessionFilter, type SqliteSessionRow } from './sessions.js'
import { answerSqlite, cancelSqlite, decideSqlite, pendingSendsSqlite, sendSqlite, type CancelRequest, type CancelRequestCause, type MessageLike, type SendOptions } from './side.js'
import { TxGroup } from './group-tx.js'
import { SqliteReader, SqliteWriter } from './writer.js'

/**
 * How long one statement may block the process waiting for another process's write lock (SQLite's
 * own busy handler): as short as it goes, because both drivers are synchronous and the wait blocks
 * every session the process serves; `tx` retries asynchronously. B8 on one file with 8 worker
 * processes: 20 ms here and retries backing off to 50 ms gave 44 sessions/s (4.7x one worker), 2 ms
 * and 4 ms 56/s, 1 ms and 2 ms 58/s (6.2x).
 */
export const SYNC_BUSY_MS = 1

/** `map`'s entry for `key`, made and kept on first use. */
function cached<T>(map: Map<string, T>, key: string, make: () => T): T {
  let v = map.get(key)
  if (v === undefined) {
    v = make()
    map.set(key, v)
  }
  return v
}

export interface SqliteStoreOptions {
  /** `'auto'` (default): `node:sqlite` where this Node has it, else `better-sqlite3`. */
  driver?: SqliteDriverName
  registry?: EventRegistry
  /** Epoch ms for headers. Default `Date.now`. */
  clock?: () => number
  /** Lease length of `open(id, 'write')` (heartbeat every third of it). Default 30 000 ms. */
  leaseMs?: number
  /** Who holds the leases this store takes (`turnlog sessions`). Default `host:pid:random`. */
  owner?: string
  /** How long a statement waits for another process's write lock (`PRAGMA busy_timeout`). Default 5000 ms. */
  busyTimeoutMs?: number
  /**
   * `PRAGMA synchronous`: `'full'` (default) syncs the WAL at every commit, so an append is durable
   * when it resolves, across a power loss too (as the JSONL store's fsync); `'normal'` survives a
   * process crash but may lose the last commits on a power loss (decision record "sqlite-durability" (docs/decisions/ in the repository)).
   */
  synchronous?: 'full' | 'normal'
  /** How often a parked app owner reads decisions recorded by other processes. Default 250 ms. */
  decisionPollMs?: number
  /** Test seam: the writer's heartbeat scheduler. */
  setInterval?: (fn: () => void, ms: number) => unknown
  clearInterval?: (t: unknown) => void
}

/** `new SqliteStore(file, options)`. */
export function sqliteStore(file: string, opts: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(file, opts)
}

export class SqliteStore implements LogStore {
  readonly kind = 'sqlite'
  /** The database file (absolute). */
  readonly file: string
  /** @internal */ readonly registry: EventRegistry
  /** @internal */ readonly clock: () => number
  readonly leaseMs: number
  readonly owner: string
  /** @internal */ readonly decisionPollMs: number
  /** @internal */ readonly busyTimeoutMs: number
  readonly synchronous: 'full' | 'normal'
  /** @internal */ readonly timers: { set: (fn: () => void, ms: number) => unknown; clear: (t: unknown) => void }
  readonly #driver: SqliteDriverName
  #db: SqlDb | null = null
  #closed = false

  constructor(file: string, opts: SqliteStoreOptions = {}) {
    if (typeof file !== 'string' || file === '') {
      throw new TurnlogError('INVALID_ARGUMENT', 'sqliteStore needs a file path', { field: 'file' })
    }
    if (typeof opts !== 'object' || opts === null) throw new TurnlogError('INVALID_ARGUMENT', 'sqliteStore options must be an object', { field: 'options' })
    this.file = file === ':memory:' ? file : resolve(file)
    this.#driver = opts.driver ?? 'auto'
    this.registry = opts.registry ?? defaultRegistry
    this.clock = opts.clock ?? Date.now
    this.leaseMs = positiveOption(opts.leaseMs, 30_000, 'leaseMs')
    this.busyTimeoutMs = positiveOption(opts.busyTimeoutMs, 5000, 'busyTimeoutMs')
    this.decisionPollMs = positiveOption(opts.decisionPollMs, 250, 'decisionPollMs')
    const sync = opts.synchronous ?? 'full'
    if (sync !== 'full' && sync !== 'normal') throw new TurnlogError('INVALID_OPTION', `synchronous must be 'full' or 'normal', got ${String(sync)}`, { field: 'synchronous' })
    this.synchronous = sync
    this.owner = opts.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    this.timers = {
      set: opts.setInterval ?? ((fn, ms) => {
        const t = setInterval(fn, ms)
        t.unref()
        return t
      }),
      clear: opts.clearInterval ?? ((t: unknown) => clearInterval(t as NodeJS.Timeout)),
    }
  }

  /** The driver that opened (or will open) the file. */
  get driver(): 'node:sqlite' | 'better-sqlite3' {
    return this.db.driver
  }

  /**
   * The connection, opened (and the schema migrated) on first use: WAL, `synchronous` as
   * configured, `busy_timeout`. @internal
   */
  get db(): SqlDb {
    if (this.#db) return this.#db
    if (this.#closed) throw new TurnlogError('SESSION_CLOSED', 'the store is closed', { file: this.file })
    const db = openDb(this.file, this.#driver)
    try {
      // opening waits for the lock in SQLite's own handler (once per process: switching to WAL
      // and migrating need the write lock); every later statement waits at most SYNC_BUSY_MS
      db.exec(`PRAGMA busy_timeout = ${Math.round(this.busyTimeoutMs)}`)
      db.exec('PRAGMA journal_mode = WAL')
      db.exec(`PRAGMA synchronous = ${this.synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
      migrate(db, (found) => {
        throw new TurnlogError('FUTURE_FORMAT', `${this.file} has schema version ${found}; this turnlog writes version ${SQLITE_SCHEMA_VERSION} and cannot use it`, { file: this.file, field: 'user_version' })
      })
      db.exec(`PRAGMA busy_timeout = ${Math.min(SYNC_BUSY_MS, Math.round(this.busyTimeoutMs))}`)
    } catch (err) {
      try {
        db.close()
      } catch {
        // closing a connection that failed to set up
      }
      throw sqlError(err, undefined, `cannot open ${this.file}`, this.file)
    }
    this.#db = db
    return db
  }

  /** Opens the file and brings its schema to this version (idempotent; also done on first use). */
  async migrate(): Promise<void> {
    void this.db
  }

  readonly #stmts = new Map<string, SqlStatement>()
  readonly #arrayStmts = new Map<string, SqlArrayStatement>()
  readonly #group = new TxGroup(this)
  /** `tx`, grouped with the other `txGrouped` calls of the same loop turn into one transaction (group-tx.ts). @internal */
  txGrouped<T>(fn: () => T): Promise<T> {
    return this.#group.run(fn)
  }

  /** A prepared statement, cached per connection (appends prepare nothing). @internal */
  prep(sql: string): SqlStatement {
    return cached(this.#stmts, sql, () => this.db.prepare(sql))
  }

  /** A prepared statement returning rows as arrays, cached per connection. @internal */
  prepArrays(sql: string): SqlArrayStatement {
    return cached(this.#arrayStmts, sql, () => this.db.prepareArrays(sql))
  }

  /** The lease clock (epoch ms). @internal */
  now(): number {
    return Date.now()
  }

  /**
   * Runs `fn` in one `BEGIN IMMEDIATE` transaction; rolled back when it throws. The write lock is
   * waited for without blocking the event loop: the connection's own busy handler waits at most
   * `SYNC_BUSY_MS` (a synchronous driver blocks the whole process while it waits), and a lock still
   * held by another process is retried here asynchronously (after 1 ms, then every 2 ms: a write
   * transaction of another process lasts about one fsync, and the waiter is on a step's path) until
   * `busyTimeoutMs`, then `IO_ERROR` (nothing written). Inside the transaction nothing waits: in
   * WAL mode the lock taken first is the only one a write needs. @internal
   */
  async tx<T>(fn: () => T): Promise<T> {
    const db = this.db
    const deadline = Date.now() + this.busyTimeoutMs
    for (let delay = 1; ; delay = Math.min(2, delay * 2)) {
      try {
        db.exec('BEGIN IMMEDIATE')
        break
      } catch (err) {
        if (!isBusy(err) || Date.now() >= deadline) throw err
      }
      await new Promise((r) => setTimeout(r, delay))
    }
    try {
      const r = fn()
      db.exec('COMMIT')
      return r
    } catch (err) {
      try {
        db.exec('ROLLBACK')
      } catch {
        // the failed COMMIT rolled back already
      }
      throw err
    }
  }

  async create(id: string, init: HeaderInit = {}): Promise<LogHeader> {
    assertSessionId(id)
    const header = makeHeader(id, init, this.clock)
    let changes: number
    try {
      const now = this.now()
      changes = await this.txGrouped(() => Number(this.db.prepare(`INSERT INTO turnlog_sessions (id, header, created_at, last_activity, child)
        VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`).run(id, JSON.stringify(header), now, now, header.parent?.callId !== undefined ? 1 : 0).changes))
    } catch (err) {
      throw sqlError(err, id, 'create failed', this.file)
    }
    if (changes === 0) throw new TurnlogError('SESSION_EXISTS', 'the session exists already', { sessionId: id })
    return header
  }

  open(id: string, mode: 'read'): Promise<LogReader>
  open(id: string, mode: 'write', opts?: OpenWriteOptions): Promise<LogWriter>
  open(id: string, mode: OpenMode, opts?: OpenWriteOptions): Promise<LogReader | LogWriter>
  async open(id: string, mode: OpenMode, _opts?: OpenWriteOptions): Promise<LogReader | LogWriter> {
    assertSessionId(id)
    if (mode === 'read') {
      let row: { header: string; length: number } | undefined
      try {
        row = this.db.prepare('SELECT header, length FROM turnlog_sessions WHERE id = ?').get(id) as typeof row
      } catch (err) {
        throw sqlError(err, id, 'open failed', this.file)
      }
      if (!row) throw new TurnlogError('SESSION_NOT_FOUND', 'no such session', { sessionId: id })
      return new SqliteReader(this, id, this.parseHeader(id, row.header), Number(row.length))
    }
    if (mode !== 'write') {
      throw new TurnlogError('INVALID_ARGUMENT', `open mode must be 'read' or 'write', got ${String(mode)}`, { sessionId: id })
    }
    let got: { token: number; length: number; header: string; parked: number; title: string | null; decisions: Map<string, DecisionRecord>; answers: Map<string, AnswerRecord> } | null
    try {
      got = await this.txGrouped(() => {
        const now = this.now()
        const r = this.db.prepare(`UPDATE turnlog_sessions SET token = token + 1, lease_owner = ?, lease_until = ?
          WHERE id = ? AND (lease_owner IS NULL OR lease_until IS NULL OR lease_until <= ?)`).run(this.owner, now + Math.round(this.leaseMs), id, now)
        if (Number(r.changes) === 0) return null
        const row = this.db.prepare('SELECT token, length, header, parked, title FROM turnlog_sessions WHERE id = ?').get(id) as
          { token: number; length: number; header: string; parked: number; title: string | null }
        const answers = new Map<string, AnswerRecord>()
        return { ...row, decisions: unloggedDecisions(this.db, id, undefined, answers), answers }
      })
    } catch (err) {
      throw sqlError(err, id, 'open failed', this.file)
    }
    if (got === null) {
      const s = this.db.prepare('SELECT lease_owner, lease_until, token FROM turnlog_sessions WHERE id = ?').get(id) as
        { lease_owner: string | null; lease_until: number | null; token: number } | undefined
      if (!s) throw new TurnlogError('SESSION_NOT_FOUND', 'no such session', { sessionId: id })
      throw new TurnlogError('SESSION_OWNED', `the session is leased by ${s.lease_owner ?? '?'} (token ${s.token})`, {
        sessionId: id, info: { owner: s.lease_owner, token: Number(s.token), leaseUntil: s.lease_until === null ? null : new Date(Number(s.lease_until)).toISOString() },
      })
    }
    const w = this.adopt(id, Number(got.token), Number(got.length), got.header, this.leaseMs, true, got)
    w.openedWith(got.decisions, got.answers)
    return w
  }

  /** A writer for a lease already taken (a worker's claim). @internal */
  adopt(id: string, token: number, length: number, headerText: string, leaseMs = this.leaseMs, heartbeat = true,
    row: { parked: number; title: string | null } = { parked: 0, title: null }): SqliteWriter {
    return new SqliteWriter(this, id, this.parseHeader(id, headerText), token, length, leaseMs, heartbeat, row)
  }

  async list(): Promise<string[]> {
    try {
      // the primary key's order is the binary (C) collation: sorted as the other stores sort
      return (this.db.prepare('SELECT id FROM turnlog_sessions ORDER BY id').all() as Array<{ id: string }>).map((x) => x.id)
    } catch (err) {
      throw sqlError(err, undefined, 'list failed', this.file)
    }
  }

  async has(id: string): Promise<boolean> {
    assertSessionId(id)
    try {
      return this.db.prepare('SELECT 1 AS x FROM turnlog_sessions WHERE id = ?').get(id) !== undefined
    } catch (err) {
      throw sqlError(err, id, 'has failed', this.file)
    }
  }

  /**
   * Durable input from any process, without the lease (as PostgreSQL's `send`): resolves once the
   * message is committed, with the id its logged message will carry; creates the session if
   * needed; the same message id again is a no-op. The lease holder (a worker) moves it into the
   * log once, in send order. `INVALID_MESSAGE` for a message the agent would refuse.
   */
  async send(sessionId: string, message: MessageLike, opts: SendOptions = {}): Promise<string> {
    return sendSqlite(this, sessionId, message, opts)
  }

  /** The ids of sent messages not moved into the log yet, in send order. */
  async pendingSends(sessionId: string): Promise<string[]> {
    return pendingSendsSqlite(this, sessionId)
  }

  /**
   * Decides an open approval from any process, with or without a worker running the session
   * (docs/spec/lifecycle.md §9): checked against the log, recorded in `turnlog_decisions` (first decision wins),
   * durable when this resolves; the owner (or the worker that claims the session) logs it once.
   * `seq` is where it was logged within `waitMs` (default 0), else null. A running child's
   * approval is decided in that child (docs/spec/lifecycle.md §10).
   */
  decide(id: string, approvalId: string, decision: StoreDecisionInput, opts: StoreDecideOptions = {}): Promise<StoreDecided> {
    return decideThroughChildren(this, id, approvalId, (sid) => decideSqlite(this, sid, approvalId, decision, opts))
  }

  /**
   * Answers an open input round from any process, with or without a worker or an app running the
   * session (docs/spec/lifecycle.md §11; side.ts): checked against the log (an invalid answer is refused
   * naming the field, nothing recorded), recorded beside the decisions (the first answer wins:
   * `INPUT_ANSWERED`), durable when this resolves; the owner (its poll, or the worker that claims
   * the session: `pending`) logs it once and runs the body's next round. `seq` is where it was
   * logged within `waitMs` (default 0), else null. A running child's request is answered in that child.
   */
  answer(id: string, requestId: string, answer: unknown, opts: StoreAnswerOptions = {}): Promise<StoreAnswered> {
    return answerThroughChildren(this, id, requestId, (sid) => answerSqlite(this, sid, requestId, answer, opts))
  }

  /** The session's decisions recorded and not logged yet (what `turnlog approvals` shows). */
  async decisionsNotLogged(id: string): Promise<Map<string, DecisionRecord>> {
    assertSessionId(id)
    return unloggedDecisions(this.db, id)
  }

  /** The session's answers of input rounds recorded and not logged yet, by request id (what `turnlog inputs` shows). */
  async answersNotLogged(id: string): Promise<Map<string, AnswerRecord>> {
    assertSessionId(id)
    return unloggedAnswers(this.db, id)
  }

  /** Asks the worker that holds (or next takes) the session to stop (as PostgreSQL's `cancel`). */
  async cancel(sessionId: string, opts: { cause?: CancelRequestCause } = {}): Promise<CancelRequest> {
    return cancelSqlite(this, sessionId, opts.cause)
  }

  /**
   * One row per session (status, events, pending, lease, last activity, due time, parked, title),
   * or only those a filter names: `'parked'`, `'due'`, `'running'` (each one indexed statement).
   */
  async sessions(filter?: SqliteSessionFilter): Promise<SqliteSessionRow[]> {
    return sessionRows(this, filter)
  }

  /** Closes the connection (handles still open stop working). */
  async close(): Promise<void> {
    this.#closed = true
    const db = this.#db
    this.#db = null
    this.#stmts.clear()
    this.#arrayStmts.clear()
    try {
      db?.close()
    } catch {
      // closing twice
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

