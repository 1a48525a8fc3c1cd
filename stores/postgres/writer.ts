/**
 * The postgres store's read and write handles. A writer holds the session's lease (token): every
 * group-committed batch is one `turnlog_append` call, which checks the token, the lease's expiry
 * and the expected seq under the session row's lock and inserts the batch with one multi-row
 * INSERT. See schema.ts and decision record "postgres-workers" (docs/decisions/ in the repository).
 */
import type pg from 'pg'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import type { LogHeader } from '../../events/jsonl.js'
import type { EventRegistry } from '../../events/registry.js'
import { checkBatch } from '../batch.js'
import { GroupCommit } from '../group-commit.js'
import type { AppendOptions, AppendResult, AnswerRecord, DecisionChannel, DecisionRecord, LogReader, LogWriter } from '../types.js'
import { PgDecisionChannel } from './decision-channel.js'
import { ApprovalTracker, parseUnlogged, unloggedDecisions } from './decisions.js'
import { isConnectionError, pgError } from './errors.js'
import type { DecisionListener } from './listen.js'
import { DueTracker } from './wakeup-due.js'

const PAGE = 2000

/** What the handles need of their store (`PostgresStore` provides it). */
export interface PgStoreHost {
  readonly pool: pg.Pool
  /** The store's LISTEN connection for parked app owners' decisions (listen.ts). */
  readonly decisionListener: DecisionListener
  readonly registry: EventRegistry
  /** The default lease length of a writer. */
  readonly leaseMs: number
  /** Read-back attempts after a broken connection, `retryDelayMs` apart (doubling). */
  readonly retryAttempts: number
  readonly retryDelayMs: number
  /** The heartbeat scheduler. */
  readonly timers: { set: (fn: () => void, ms: number) => unknown; clear: (t: unknown) => void }
  /** A parameterised query with a coded error. */
  query(sql: string, params: unknown[], sessionId: string | undefined, what: string): Promise<pg.QueryResult>
  /** Decodes and validates one stored event. */
  decodeEvent(id: string, text: string, seq: number): LogEvent
}

function checkFrom(fromSeq: unknown, sessionId: string): number {
  if (fromSeq === undefined) return 0
  if (typeof fromSeq !== 'number' || !Number.isSafeInteger(fromSeq) || fromSeq < 0) {
    throw new TurnlogError('INVALID_ARGUMENT', 'events(fromSeq): fromSeq must be a non-negative integer', { sessionId, field: 'fromSeq' })
  }
  return fromSeq
}

/** Streams events [from, to) in pages, validating each and checking that seqs run without a gap. */
async function* readEvents(store: PgStoreHost, id: string, from: number, to: number): AsyncGenerator<LogEvent> {
  let next = from
  while (next < to) {
    const r = await store.query(
      'SELECT seq, event::text AS e FROM turnlog_events WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq LIMIT $4',
      [id, next, to, PAGE], id, 'read failed',
    )
    const rows = r.rows as Array<{ seq: number; e: string }>
    if (rows.length === 0) break
    for (const row of rows) {
      if (row.seq !== next) {
        throw new TurnlogError('BAD_SEQ', `the stored log jumps from seq ${next - 1} to ${row.seq}`, { sessionId: id, seq: row.seq, expectedSeq: next })
      }
      yield store.decodeEvent(id, row.e, row.seq)
      next++
    }
  }
  if (next < to) throw new TurnlogError('BAD_SEQ', `the stored log ends at seq ${next - 1}, its length says ${to}`, { sessionId: id, expectedSeq: next })
}

export class PgReader implements LogReader {
  readonly mode = 'read' as const
  constructor(readonly store: PgStoreHost, readonly sessionId: string, readonly header: LogHeader, readonly length: number) {}
  events(fromSeq?: number): AsyncIterable<LogEvent> {
    return readEvents(this.store, this.sessionId, checkFrom(fromSeq, this.sessionId), this.length)
  }
  async close(): Promise<void> {}
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export class PgWriter implements LogWriter {
  readonly mode = 'write' as const
  #length: number
  #durableLength: number
  #failed: TurnlogError | null = null
  #closed = false
  #closing: Promise<void> | null = null
  /** True once the lease was handed back (or released): nothing more may be written. */
  #released = false
  readonly #heartbeat: unknown
  /** Ids of sent messages (turnlog_inbox) whose splice this writer will log: marked moved with it. */
  readonly #moves = new Set<string>()
  readonly #commits = new GroupCommit<readonly LogEvent[]>({
    commit: (batch) => this.#commit(batch),
    stop: (err) => {
      this.#stop(err)
      return this.#failed!
    },
    failed: () => this.#failed,
    // a commit is a round trip: a step's appends of one event-loop turn share it (group-commit.ts;
    // B8: 16 appends per session of 4 steps with a microtask, see the bench's queriesByKind)
  }, setImmediate)
  /** Appends whose connection broke and were resolved by reading back (tests read it). */
  retries = 0
  /** The session's next due wakeup, half of the one `due_at` (wakeup-due.ts). */
  readonly #due: DueTracker

  /** The session's approvals: the decisions a batch logs and the next expiry (decisions.ts). */
  readonly #approvals: ApprovalTracker

  /**
   * Decisions recorded by other processes, for an app's own writer (decision-channel.ts). A
   * worker's writer (`heartbeat` false) has none: the worker pulls them (pull-decisions.ts).
   */
  readonly decisions?: DecisionChannel

  constructor(
    readonly store: PgStoreHost,
    readonly sessionId: string,
    readonly header: LogHeader,
    readonly token: number,
    length: number,
    /** The lease length this writer extends to with each append and heartbeat. */
    readonly leaseMs: number = store.leaseMs,
    /** False when the owner heartbeats the lease itself (workers: one batched statement for all). */
    heartbeat = true,
  ) {
    this.#length = length
    this.#durableLength = length
    this.#due = new DueTracker(sessionId, (sql, params) => store.query(sql, params, sessionId, 'read failed'), (text, seq) => store.decodeEvent(sessionId, text, seq))
    this.#approvals = new ApprovalTracker(sessionId, (sql, params) => store.query(sql, params, sessionId, 'read failed'), (text, seq) => store.decodeEvent(sessionId, text, seq))
    if (heartbeat) this.decisions = new PgDecisionChannel((sql, params) => store.pool.query(sql, params), sessionId, store.decisionListener)
    this.#heartbeat = heartbeat ? store.timers.set(() => void this.#beat(), Math.max(10, Math.floor(leaseMs / 3))) : undefined
  }

  get length(): number {
    return this.#length
  }
  get durableLength(): number {
    return this.#durableLength
  }
  get failed(): TurnlogError | null {
    return this.#failed
  }
  /** Number of `turnlog_append` calls that committed (tests and the bench read it). */
  get batches(): number {
    return this.#commits.batches
  }

  events(fromSeq?: number): AsyncIterable<LogEvent> {
    return readEvents(this.store, this.sessionId, checkFrom(fromSeq, this.sessionId), this.#durableLength)
  }

  /**
   * Registers the id of a sent message this writer's owner is about to splice into the log: the
   * append that carries that splice marks the message moved, in the same transaction (and is
   * refused with `INPUT_MOVED` if it was moved already). @internal (workers)
   */
  expectMove(messageId: string): void {
    this.#moves.add(messageId)
  }

  append(events: readonly LogEvent[], opts: AppendOptions): Promise<AppendResult> {
    try {
      if (this.#failed) throw this.#failed
      if (this.#closed || this.#released) throw new TurnlogError('SESSION_CLOSED', 'the write handle is closed', { sessionId: this.sessionId })
      checkBatch(this.sessionId, events, opts?.expectedSeq, this.#length, this.store.registry, opts?.trusted === true)
    } catch (err) {
      return Promise.reject(err)
    }
    const firstSeq = this.#length
    this.#length += events.length
    if (events.length === 0) return this.#commits.barrier().then(() => ({ firstSeq, length: firstSeq }))
    // appends made in the same tick share one statement
    return this.#commits.enqueue(events, { firstSeq, length: this.#length })
  }

  async #commit(batch: ReadonlyArray<readonly LogEvent[]>): Promise<void> {
    const expected = this.#durableLength
    let text = '['
    let n = 0
    const moves: string[] = []
    const moveSeqs: number[] = []
    for (const events of batch) {
      for (const e of events) {
        text += (n++ ? ',' : '') + JSON.stringify(e)
        if (this.#moves.size > 0 && e.type === 'agent/inbox/spliced') {
          const inserted = (e.data as { inserted?: Array<{ id?: unknown }> }).inserted ?? []
          for (const m of inserted) {
            if (typeof m.id === 'string' && this.#moves.has(m.id)) {
              moves.push(m.id)
              moveSeqs.push(e.seq)
            }
          }
        }
      }
    }
    text += ']'
    const params: unknown[] = [this.sessionId, this.token, expected, text, moves, moveSeqs, Math.round(this.leaseMs)]
    // a batch that moves the session's one due time (approval events: their decisions and the
    // next expiry, decisions.ts; schedule events: the next wakeup, wakeup-due.ts) sets `due_at` =
    // the earlier of the two in the same transaction
    const flat = batch.flat()
    let sql = 'SELECT turnlog_append($1, $2, $3, $4, $5, $6, $7)'
    if (ApprovalTracker.holds(flat) || DueTracker.holds(flat)) {
      const a = (await this.#approvals.after(flat, expected, true))!
      const w = (await this.#due.after(flat, expected, true))!
      const due = a.dueMs === null ? w : w === null ? a.dueMs : Math.min(a.dueMs, w)
      // a delay from the batch's own time (the agent's clock): the server adds it to its own
      // clock, so no machine's skew reaches the claim (decisions.ts "Clock skew")
      const at = flat[flat.length - 1]!.time
      params.push(a.decided, true, due === null ? null : Math.round(due - at))
      sql = 'SELECT turnlog_append_decided($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)'
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await this.store.pool.query(sql, params)
        break
      } catch (err) {
        if (!isConnectionError(err)) throw pgError(err, this.sessionId, 'append failed')
        // the connection broke: the batch may or may not have committed. We still hold the token
        // (nobody else can have written), so the session's length tells which.
        const outcome = await this.#readBack(expected, n, attempt, err)
        if (outcome === 'committed') break
      }
    }
    for (const id of moves) this.#moves.delete(id)
    this.#durableLength = expected + n
  }

  /** After a broken connection: 'committed', or 'retry' (send it again); throws when lost. */
  async #readBack(expected: number, n: number, attempt: number, cause: unknown): Promise<'committed' | 'retry'> {
    for (let a = attempt; a < this.store.retryAttempts; a++) {
      await sleep(this.store.retryDelayMs * 2 ** a)
      let row: { length: number; token: string } | undefined
      try {
        const r = await this.store.pool.query('SELECT length, token FROM turnlog_sessions WHERE id = $1', [this.sessionId])
        row = r.rows[0] as typeof row
      } catch (err) {
        if (isConnectionError(err)) continue
        throw pgError(err, this.sessionId, 'append failed')
      }
      if (!row) throw new TurnlogError('SESSION_NOT_FOUND', `session ${JSON.stringify(this.sessionId)} is gone`, { sessionId: this.sessionId })
      this.retries++
      if (Number(row.token) !== this.token) {
        throw new TurnlogError('LEASE_LOST', `the lease was taken over (token ${row.token}) while this writer's connection was down`, {
          sessionId: this.sessionId, info: { token: this.token, current: Number(row.token) },
        })
      }
      if (row.length === expected + n) return 'committed'
      if (row.length === expected) return 'retry'
      throw new TurnlogError('SEQ_CONFLICT', `after a broken connection the log has ${row.length} events, expected ${expected} or ${expected + n}`, {
        sessionId: this.sessionId, expectedSeq: expected, actualSeq: row.length,
      })
    }
    throw pgError(cause, this.sessionId, `append failed: the connection stayed down for ${this.store.retryAttempts} attempts`)
  }

  #stop(err: unknown): void {
    if (this.#failed) return
    this.#failed = TurnlogError.is(err) ? err : pgError(err, this.sessionId, 'append failed')
    if (this.#heartbeat !== undefined) this.store.timers.clear(this.#heartbeat)
  }

  /** The owner's heartbeat found the lease gone: the handle stops (`LEASE_LOST`). @internal (workers) */
  leaseLost(): void {
    if (this.#released || this.#closed) return
    this.#stop(new TurnlogError('LEASE_LOST', 'the lease expired or was taken over (heartbeat)', {
      sessionId: this.sessionId, info: { token: this.token },
    }))
  }

  /** True while the handle may still append (the owner's heartbeat covers it). @internal */
  get live(): boolean {
    return !this.#failed && !this.#closed && !this.#released
  }

  /** Extends the lease; finding it lost stops the handle (`LEASE_LOST`). */
  async #beat(): Promise<void> {
    if (this.#failed || this.#closed || this.#released) return
    try {
      const r = await this.store.pool.query(
        `UPDATE turnlog_sessions SET lease_until = clock_timestamp() + $3 * interval '1 millisecond'
         WHERE id = $1 AND token = $2 AND lease_until > clock_timestamp() RETURNING 1`,
        [this.sessionId, this.token, Math.round(this.leaseMs)],
      )
      if (r.rowCount === 0 && !this.#released && !this.#closed) {
        this.#stop(new TurnlogError('LEASE_LOST', 'the lease expired or was taken over (heartbeat)', {
          sessionId: this.sessionId, info: { token: this.token },
        }))
      }
    } catch {
      // a broken connection: the next beat (or the append's own check) decides
    }
  }

  /**
   * The session's next due time in the log's own time base (the agents' clocks that wrote it):
   * the earlier of the earliest open approval expiry and the next due wakeup, or null; the same
   * value the last batch that moved `due_at` stored as a delay. Folded by the writer's trackers,
   * which keep the fold for the next batch that moves either. Call before appending. @internal (workers)
   */
  async nextDue(): Promise<number | null> {
    const expected = this.#durableLength
    const a = (await this.#approvals.after([], expected, true))!
    const w = (await this.#due.after([], expected, true))!
    return a.dueMs === null ? w : w === null ? a.dueMs : Math.min(a.dueMs, w)
  }

  /** The unlogged decisions `open` read with the lease, until the first `acceptedDecisions()`. */
  #opened: Map<string, DecisionRecord> | null = null

  /**
   * `open(id, 'write')` read the session's unlogged decisions with the lease (UNLOGGED_JSON):
   * the channel delivers them when the agent attaches, and repair's first read uses them. @internal
   */
  openedWith(text: string | null): void {
    const answers = new Map<string, AnswerRecord>()
    this.#opened = parseUnlogged(text, undefined, answers)
    if (this.decisions instanceof PgDecisionChannel) this.decisions.prime(this.#opened, answers)
  }

  /** The session's recorded, unlogged decisions (decisions.ts; read by repair, replay/closers.ts). */
  acceptedDecisions(): Promise<ReadonlyMap<string, DecisionRecord>> {
    const first = this.#opened
    this.#opened = null
    // repair reads right after `open`, under this lease: the rows read with it are current
    if (first !== null) return Promise.resolve(first)
    return unloggedDecisions((sql, params) => this.store.pool.query(sql, params), this.sessionId)
  }

  /**
   * Hands the session back when nothing sent is waiting (`pending = 0`) and no stop request is
   * open (`turnlog_hand_back`, cancels.ts): releases the lease and closes the handle; returns false
   * (and keeps everything) when input or a stop is waiting or the lease is gone. Waits for every
   * accepted append first. @internal (workers)
   */
  async handBack(): Promise<boolean> {
    await this.#commits.running?.catch(() => {})
    if (this.#failed || this.#closed || this.#released) return false
    let r
    try {
      // not while a stop request is open either (cancels.ts: it would be stranded)
      r = await this.store.pool.query('SELECT turnlog_hand_back($1, $2) AS released', [this.sessionId, this.token])
    } catch {
      return false
    }
    if ((r.rows[0] as { released?: boolean } | undefined)?.released !== true) return false
    this.#released = true
    if (this.#heartbeat !== undefined) this.store.timers.clear(this.#heartbeat)
    return true
  }

  /**
   * Waits for the appends in flight, then gives up the lease: released when the handle is healthy;
   * when it failed (other than a lost lease) the lease is expired at once instead, so a worker
   * takes the session over, repairs and resumes it. Never throws.
   */
  close(): Promise<void> {
    if (!this.#closing) {
      this.#closed = true
      this.#closing = (async () => {
        await this.#commits.running?.catch(() => {})
        if (this.#heartbeat !== undefined) this.store.timers.clear(this.#heartbeat)
        if (this.#released) return
        this.#released = true
        const sql = this.#failed
          ? `UPDATE turnlog_sessions SET lease_until = clock_timestamp() WHERE id = $1 AND token = $2 AND lease_owner IS NOT NULL`
          : `UPDATE turnlog_sessions SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND token = $2`
        if (this.#failed?.code === 'LEASE_LOST') return
        await this.store.pool.query(sql, [this.sessionId, this.token]).catch(() => {})
      })()
    }
    return this.#closing
  }

  /** Stops using the lease without releasing it (a worker abandoning a session it cannot finish:
   * it expires and another worker resumes the session). @internal */
  async abandon(): Promise<void> {
    this.#stop(new TurnlogError('LEASE_LOST', 'the session was abandoned by its worker', { sessionId: this.sessionId }))
    this.#closed = true
    await this.#commits.running?.catch(() => {})
    await this.store.pool.query(
      `UPDATE turnlog_sessions SET lease_until = clock_timestamp() WHERE id = $1 AND token = $2 AND lease_owner IS NOT NULL`,
      [this.sessionId, this.token],
    ).catch(() => {})
  }
}
