/**
 * The SQLite store's read and write handles. A writer holds the session's lease (fencing `token`);
 * every group-committed batch is ONE `BEGIN IMMEDIATE` transaction that checks the token, the
 * lease's expiry and the expected seq, inserts the batch, marks the sent messages it moves and the
 * decisions it logs, and updates the session row (length, lease, due time, parked, title): a
 * writer that lost its lease can never append (`LEASE_LOST`), and the primary key makes a
 * duplicate seq impossible. The transaction commits with the file's `synchronous` setting
 * (decision record "sqlite-durability" (docs/decisions/ in the repository)): when `append` resolves, the batch is durable.
 *
 * Over ~400 lines (451), knowingly: the write transaction and the reads share one set of prepared
 * statements and the lease checks; the decisions' and answers' rows are the next seam to split.
 */
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import type { LogHeader } from '../../events/jsonl.js'
import type { EventRegistry } from '../../events/registry.js'
import { checkBatch } from '../batch.js'
import { GroupCommit } from '../group-commit.js'
import type { AnswerRecord, AppendOptions, AppendResult, DecisionChannel, DecisionRecord, LogReader, LogWriter } from '../types.js'
import { SqliteDecisionChannel } from './decision-channel.js'
import type { SqlDb, SqlStatement } from './driver.js'
import { sqlError } from './driver.js'
import { SessionFold, titleOf } from './fold.js'
import { unloggedDecisions } from './rows.js'
import type { SqliteHost } from './host.js'

export type { SqliteHost } from './host.js'

const PAGE = 2000

function checkFrom(fromSeq: unknown, sessionId: string): number {
  if (fromSeq === undefined) return 0
  if (typeof fromSeq !== 'number' || !Number.isSafeInteger(fromSeq) || fromSeq < 0) {
    throw new TurnlogError('INVALID_ARGUMENT', 'events(fromSeq): fromSeq must be a non-negative integer', { sessionId, field: 'fromSeq' })
  }
  return fromSeq
}

/** The stored events [from, to) of a session, validated, without a gap (synchronous). */
export function* readStored(store: SqliteHost, id: string, from: number, to: number): Generator<LogEvent> {
  let next = from
  const stmt = store.db.prepare('SELECT seq, event FROM turnlog_events WHERE session_id = ? AND seq >= ? AND seq < ? ORDER BY seq LIMIT ?')
  while (next < to) {
    let rows: Array<{ seq: number; event: string }>
    try {
      rows = stmt.all(id, next, to, PAGE) as typeof rows
    } catch (err) {
      throw sqlError(err, id, 'read failed')
    }
    if (rows.length === 0) break
    for (const row of rows) {
      if (row.seq !== next) {
        throw new TurnlogError('BAD_SEQ', `the stored log jumps from seq ${next - 1} to ${row.seq}`, { sessionId: id, seq: row.seq, expectedSeq: next })
      }
      yield store.decodeEvent(id, row.event, row.seq)
      next++
    }
  }
  if (next < to) throw new TurnlogError('BAD_SEQ', `the stored log ends at seq ${next - 1}, its length says ${to}`, { sessionId: id, expectedSeq: next })
}

/** Streams in pages: each page is one synchronous read, the consumer runs between pages. */
async function* readEvents(store: SqliteHost, id: string, from: number, to: number): AsyncGenerator<LogEvent> {
  yield* readStored(store, id, from, to)
}

export class SqliteReader implements LogReader {
  readonly mode = 'read' as const
  constructor(readonly store: SqliteHost, readonly sessionId: string, readonly header: LogHeader, readonly length: number) {}
  events(fromSeq?: number): AsyncIterable<LogEvent> {
    return readEvents(this.store, this.sessionId, checkFrom(fromSeq, this.sessionId), this.length)
  }
  async close(): Promise<void> {}
}

export class SqliteWriter implements LogWriter {
  readonly mode = 'write' as const
  #length: number
  #durableLength: number
  #failed: TurnlogError | null = null
  #closed = false
  #closing: Promise<void> | null = null
  #released = false
  readonly #heartbeat: unknown
  readonly #moves = new Set<string>()
  readonly #fold = new SessionFold()
  /** The row's parked flag as this writer last left it (a fold clears it). */
  #parked: boolean
  #titled: boolean
  /** The lease's end as this writer last wrote it (0: not known yet, so the first append extends it). */
  #leaseUntil = 0
  readonly #commits = new GroupCommit<readonly LogEvent[]>({
    commit: (batch) => this.#commit(batch),
    stop: (err) => {
      this.#stop(err)
      return this.#failed!
    },
    failed: () => this.#failed,
  })
  /** Decisions recorded by other processes, for an app's own writer (a worker's pulls them). */
  readonly decisions?: DecisionChannel

  constructor(
    readonly store: SqliteHost,
    readonly sessionId: string,
    readonly header: LogHeader,
    readonly token: number,
    length: number,
    readonly leaseMs: number = store.leaseMs,
    /** False when the owner heartbeats the lease itself (workers: one statement for all). */
    heartbeat = true,
    row: { parked: number; title: string | null } = { parked: 0, title: null },
  ) {
    this.#length = length
    this.#durableLength = length
    this.#parked = row.parked === 1
    this.#titled = row.title !== null
    if (heartbeat) this.decisions = new SqliteDecisionChannel(store, sessionId)
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
  /** Transactions committed (tests and the bench read it). */
  get batches(): number {
    return this.#commits.batches
  }
  /** True while the handle may still append. @internal */
  get live(): boolean {
    return !this.#failed && !this.#closed && !this.#released
  }

  events(fromSeq?: number): AsyncIterable<LogEvent> {
    return readEvents(this.store, this.sessionId, checkFrom(fromSeq, this.sessionId), this.#durableLength)
  }

  /** The append that logs this sent message's splice marks it moved (workers). @internal */
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
    return this.#commits.enqueue(events, { firstSeq, length: this.#length })
  }

  async #commit(batch: ReadonlyArray<readonly LogEvent[]>): Promise<void> {
    const flat = batch.flat()
    const expected = this.#durableLength
    const id = this.sessionId
    const db = this.store.db
    const moves: Array<[string, number]> = []
    if (this.#moves.size > 0) {
      for (const e of flat) {
        if (e.type !== 'agent/inbox/spliced') continue
        for (const m of (e.data as { inserted?: Array<{ id?: unknown }> }).inserted ?? []) {
          if (typeof m.id === 'string' && this.#moves.has(m.id)) moves.push([m.id, e.seq])
        }
      }
    }
    const title = this.#titled ? null : titleOf(flat)
    try {
      // grouped with the other sessions' appends of this process (group-tx.ts): one lock, one sync
      await this.store.txGrouped(() => {
        const now = this.store.now()
        // the fold first (pure, but its first load reads the stored events: inside this transaction)
        let folded: ReturnType<SessionFold['apply']> | null = null
        if (this.#fold.loaded || this.#parked || SessionFold.holds(flat)) {
          if (!this.#fold.loaded) this.#fold.load(readStored(this.store, id, 0, expected))
          folded = this.#fold.apply(flat)
        }
        let sets = ''
        const params: Array<string | number | null> = []
        if (folded !== null) {
          // a delay from the batch's own time (the agent's clock) added to the lease clock, so a
          // test clock or a skewed agent clock cannot make a session due early or late
          const at = flat[flat.length - 1]!.time
          sets += ', due_at = ?, parked = ?'
          params.push(folded.dueMs === null ? null : now + Math.round(folded.dueMs - at), folded.parked ? 1 : 0)
        }
        if (title !== null) {
          sets += ', title = coalesce(title, ?)'
          params.push(title)
        }
        // the lease is extended only when less than half of it is left by what this writer last
        // wrote or saw (a lower bound: the heartbeat keeps it anyway), so an append mostly writes no
        // index entry of the lease
        const extend = this.#leaseUntil - now < this.leaseMs / 2
        if (extend) {
          sets += ', lease_until = ?'
          params.push(now + Math.round(this.leaseMs))
        }
        // one statement fences the batch (token, live lease, expected seq) and moves the row;
        // only when it changes nothing is the row read, to say why
        const changed = Number(this.store.prep(`UPDATE turnlog_sessions SET length = ?, last_activity = ?${sets}
          WHERE id = ? AND token = ? AND length = ? AND lease_until > ?`).run(expected + flat.length, now, ...params, id, this.token, expected, now).changes)
        if (changed !== 1) this.#refused(now, expected)
        if (extend) this.#leaseUntil = now + Math.round(this.leaseMs)
        insertEvents(this.store, id, flat)
        let freed = 0
        if (moves.length > 0) {
          const mv = db.prepare('UPDATE turnlog_inbox SET moved_seq = ? WHERE session_id = ? AND message_id = ? AND moved_seq IS NULL')
          for (const [mid, seq] of moves) {
            if (Number(mv.run(seq, id, mid).changes) !== 1) {
              throw new TurnlogError('INPUT_MOVED', 'a sent message in this batch is not pending (already moved into the log)', { sessionId: id, info: { messageId: mid } })
            }
            freed++
          }
        }
        if (folded !== null) {
          freed += this.#settleDecisions(folded.decided)
          this.#parked = folded.parked
        }
        if (freed > 0) this.store.prep('UPDATE turnlog_sessions SET pending = pending - ? WHERE id = ?').run(freed, id)
      })
    } catch (err) {
      throw sqlError(err, id, 'append failed')
    }
    if (title !== null) this.#titled = true
    for (const [mid] of moves) this.#moves.delete(mid)
    this.#durableLength = expected + flat.length
  }

  /** Why the fencing update changed no row: the session is gone, the lease lost, or the seq moved. */
  #refused(now: number, expected: number): never {
    const id = this.sessionId
    const s = this.store.prep('SELECT token, length, lease_until FROM turnlog_sessions WHERE id = ?').get(id) as
      { token: number; length: number; lease_until: number | null } | undefined
    if (!s) throw new TurnlogError('SESSION_NOT_FOUND', 'no such session', { sessionId: id })
    if (Number(s.token) !== this.token || s.lease_until === null || Number(s.lease_until) <= now) {
      throw new TurnlogError('LEASE_LOST', `lease lost: this writer holds token ${this.token}, the session has token ${s.token}`, {
        sessionId: id, info: { token: this.token, current: Number(s.token) },
      })
    }
    throw new TurnlogError('SEQ_CONFLICT', `expected seq ${expected}, but the log's next seq is ${s.length}`, { sessionId: id, expectedSeq: expected, actualSeq: Number(s.length) })
  }

  /**
   * The decisions a batch logs against `turnlog_decisions` (docs/spec/lifecycle.md §9, as PostgreSQL's
   * `turnlog_append_decided`): a new row is inserted logged; a row another decider recorded first
   * is marked logged when the batch logs that same decision (or closes the step: `by: canceled`);
   * any other decision for it is refused (`APPROVAL_DECIDED`: the writer stops, the next owner
   * logs the row's). Returns how many recorded rows it settled (they leave `pending`).
   */
  #settleDecisions(decided: ReturnType<SessionFold['apply']>['decided']): number {
    const db = this.store.db
    let freed = 0
    for (const d of decided) {
      const cur = db.prepare('SELECT record, logged_seq FROM turnlog_decisions WHERE session_id = ? AND approval_id = ?')
        .get(this.sessionId, d.approvalId) as { record: string; logged_seq: number | null } | undefined
      if (!cur) {
        db.prepare('INSERT INTO turnlog_decisions (session_id, approval_id, record, decided_at, logged_seq) VALUES (?, ?, ?, ?, ?)')
          .run(this.sessionId, d.approvalId, JSON.stringify(d.record), this.store.now(), d.seq)
        continue
      }
      if (cur.logged_seq !== null) {
        throw new TurnlogError('APPROVAL_DECIDED', `approval ${d.approvalId} was logged already at seq ${cur.logged_seq}`, { sessionId: this.sessionId, info: { approvalId: d.approvalId } })
      }
      let same = false
      try {
        // a decision, or an answer of an input round (a row of the same table, keyed by request id)
        const rec = JSON.parse(cur.record) as { decision?: unknown; answer?: unknown; by?: unknown }
        same = JSON.stringify(canon(rec.decision)) === JSON.stringify(canon(d.record.decision)) && JSON.stringify(canon(rec.answer)) === JSON.stringify(canon(d.record.answer)) &&
          JSON.stringify(canon(rec.by)) === JSON.stringify(canon(d.record.by))
      } catch {
        same = false
      }
      if (!same && d.record.by.kind !== 'canceled') {
        throw new TurnlogError('APPROVAL_DECIDED', `approval ${d.approvalId} was decided first by another decider: that decision is logged, not this one`, {
          sessionId: this.sessionId, info: { approvalId: d.approvalId },
        })
      }
      db.prepare('UPDATE turnlog_decisions SET logged_seq = ? WHERE session_id = ? AND approval_id = ?').run(d.seq, this.sessionId, d.approvalId)
      freed++
    }
    return freed
  }

  #stop(err: unknown): void {
    if (this.#failed) return
    this.#failed = TurnlogError.is(err) ? err : sqlError(err, this.sessionId, 'append failed')
    if (this.#heartbeat !== undefined) this.store.timers.clear(this.#heartbeat)
  }

  /** The owner's heartbeat found the lease gone: the handle stops (`LEASE_LOST`). @internal (workers) */
  leaseLost(): void {
    if (this.#released || this.#closed) return
    this.#stop(new TurnlogError('LEASE_LOST', 'the lease expired or was taken over (heartbeat)', { sessionId: this.sessionId, info: { token: this.token } }))
  }

  async #beat(): Promise<void> {
    if (this.#failed || this.#closed || this.#released) return
    try {
      let until = 0
      const changes = await this.store.txGrouped(() => {
        const now = this.store.now()
        until = now + Math.round(this.leaseMs)
        return Number(this.store.prep('UPDATE turnlog_sessions SET lease_until = ? WHERE id = ? AND token = ? AND lease_until > ?')
          .run(until, this.sessionId, this.token, now).changes)
      })
      if (changes === 1) this.#leaseUntil = Math.max(this.#leaseUntil, until)
      if (changes === 0 && !this.#released && !this.#closed) this.leaseLost()
    } catch {
      // busy past the timeout: the next beat (or the append's own check) decides
    }
  }

  /** The session's next due time in the log's time base (workers' `logClock`). @internal */
  async nextDue(): Promise<number | null> {
    if (!this.#fold.loaded) this.#fold.load(readStored(this.store, this.sessionId, 0, this.#durableLength))
    return this.#fold.apply([]).dueMs
  }

  /** The unlogged decisions `open` read with the lease, until the first `acceptedDecisions()`. */
  #opened: Map<string, DecisionRecord> | null = null

  /** @internal `open(id, 'write')` read the unlogged decisions with the lease. */
  openedWith(rows: Map<string, DecisionRecord>, answers?: Map<string, AnswerRecord>): void {
    this.#opened = rows
    if (this.decisions instanceof SqliteDecisionChannel) this.decisions.prime(rows, answers)
  }

  /** The session's recorded, unlogged decisions (read by repair, replay/closers.ts). */
  async acceptedDecisions(): Promise<ReadonlyMap<string, DecisionRecord>> {
    const first = this.#opened
    this.#opened = null
    if (first !== null) return first
    return unloggedDecisions(this.store.db, this.sessionId)
  }

  /**
   * Hands the session back when nothing sent is waiting and no stop request is open: releases the
   * lease and closes the handle; false (everything kept) otherwise. @internal (workers)
   */
  async handBack(): Promise<boolean> {
    await this.#commits.running?.catch(() => {})
    if (this.#failed || this.#closed || this.#released) return false
    let released = false
    try {
      released = await this.store.tx(() => {
        const open = this.store.db.prepare('SELECT 1 FROM turnlog_cancels WHERE session_id = ? AND handled_at IS NULL LIMIT 1').get(this.sessionId)
        if (open) return false
        const r = this.store.db.prepare(`UPDATE turnlog_sessions SET lease_owner = NULL, lease_until = NULL
          WHERE id = ? AND token = ? AND pending = 0 AND lease_until > ?`).run(this.sessionId, this.token, this.store.now())
        return Number(r.changes) === 1
      })
    } catch {
      return false
    }
    if (!released) return false
    this.#released = true
    if (this.#heartbeat !== undefined) this.store.timers.clear(this.#heartbeat)
    return true
  }

  /**
   * Waits for the appends in flight, then gives up the lease: released when healthy; expired at
   * once when the handle failed (other than a lost lease), so a worker takes the session over.
   * Never throws.
   */
  close(): Promise<void> {
    if (!this.#closing) {
      this.#closed = true
      this.#closing = (async () => {
        await this.#commits.running?.catch(() => {})
        if (this.#heartbeat !== undefined) this.store.timers.clear(this.#heartbeat)
        ;(this.decisions as SqliteDecisionChannel | undefined)?.stopAll()
        if (this.#released) return
        this.#released = true
        if (this.#failed?.code === 'LEASE_LOST') return
        try {
          const failed = this.#failed !== null
          await this.store.txGrouped(() => {
            if (failed) {
              this.store.db.prepare('UPDATE turnlog_sessions SET lease_until = ? WHERE id = ? AND token = ? AND lease_owner IS NOT NULL')
                .run(this.store.now(), this.sessionId, this.token)
            } else {
              this.store.db.prepare('UPDATE turnlog_sessions SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND token = ?')
                .run(this.sessionId, this.token)
            }
          })
        } catch {
          // busy past the timeout: the lease runs out on its own
        }
      })()
    }
    return this.#closing
  }

  /** Stops using the lease without releasing it: it is expired, and a worker resumes the session. @internal */
  async abandon(): Promise<void> {
    this.#stop(new TurnlogError('LEASE_LOST', 'the session was abandoned by its worker', { sessionId: this.sessionId }))
    this.#closed = true
    await this.#commits.running?.catch(() => {})
    try {
      await this.store.tx(() => this.store.db.prepare('UPDATE turnlog_sessions SET lease_until = ? WHERE id = ? AND token = ? AND lease_owner IS NOT NULL')
        .run(this.store.now(), this.sessionId, this.token))
    } catch {
      // the lease runs out on its own
    }
  }
}

/** Rows per multi-row INSERT (4 parameters each: far below SQLite's parameter limit). */
const ROWS_PER_INSERT = 64

/**
 * Inserts a batch's events: one multi-row `INSERT` per 64 events (a cached statement per row
 * count), so a batch costs a statement, not one per event. The event's JSON text as given.
 */
function insertEvents(store: SqliteHost, id: string, flat: readonly LogEvent[]): void {
  for (let i = 0; i < flat.length; i += ROWS_PER_INSERT) {
    const n = Math.min(ROWS_PER_INSERT, flat.length - i)
    const params: Array<string | number> = new Array(n * 4)
    for (let k = 0; k < n; k++) {
      const e = flat[i + k]!
      const text = JSON.stringify(e)
      params[4 * k] = id
      params[4 * k + 1] = e.seq
      params[4 * k + 2] = e.type
      params[4 * k + 3] = text
      // the listing's give-ups (schema.ts): a table of their own, not an index every append writes
      if (e.type === 'resume/given-up') store.prep('INSERT INTO turnlog_given_up (session_id, seq, event) VALUES (?, ?, ?)').run(id, e.seq, text)
    }
    store.prep(INSERT_SQL[n] ??= `INSERT INTO turnlog_events (session_id, seq, type, event) VALUES ${'(?, ?, ?, ?), '.repeat(n - 1)}(?, ?, ?, ?)`).run(...params)
  }
}
const INSERT_SQL: string[] = []

/** A JSON value with sorted keys (decisions compare by value, as PostgreSQL's jsonb does). */
function canon(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canon)
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])]))
  return v
}
