/**
 * The SQLite store's side inputs, from any process and without the lease, as PostgreSQL's (the same
 * semantics; stores/postgres/sends.ts, decide.ts, cancels.ts): `send` (durable input in
 * `turnlog_inbox`), `decide` (a decision in `turnlog_decisions`, first one wins), `cancel` (a stop
 * request in `turnlog_cancels`). Each is one `BEGIN IMMEDIATE` transaction (sends of one tick share
 * one: group-tx.ts), durable when it resolves; `pending` counts what a worker owes the session, so
 * a worker claims it.
 */
import { checkMessageSize } from '../../events/input-size.js'
import { TurnlogError } from '../../events/errors.js'
import {
  checkBy, checkDecision, checkedDraft, decided, loggedDecision, readAll,
  type StoreDecided, type StoreDecideOptions, type StoreDecisionInput,
} from '../decide.js'
import { assertSessionId } from '../ids.js'
import { answered, answerEvent, loggedAnswer, type StoreAnswered, type StoreAnswerOptions } from '../answer.js'
import { refusal } from '../postgres/answer.js'
import { makeHeader } from '../memory.js'
import type { CancelRequest, CancelRequestCause } from '../postgres/cancels.js'
import { toMessage, type MessageLike, type SendOptions } from '../postgres/sends.js'
import { sqlError } from './driver.js'
import type { SqlDb } from './driver.js'
import type { LogStore } from '../types.js'

/** What the side inputs need of their store (`SqliteStore` provides it; structural, so the store imports this file and not the other way round). */
interface SqliteStore extends LogStore {
  readonly db: SqlDb
  readonly file: string
  readonly clock: () => number
  now(): number
  tx<T>(fn: () => T): Promise<T>
  txGrouped<T>(fn: () => T): Promise<T>
}

export type { CancelRequest, CancelRequestCause } from '../postgres/cancels.js'
export type { MessageLike, SendOptions } from '../postgres/sends.js'

/** `SqliteStore.send`. */
export async function sendSqlite(store: SqliteStore, sessionId: string, message: MessageLike, opts: SendOptions = {}): Promise<string> {
  assertSessionId(sessionId)
  const target = opts.target ?? 'next-turn'
  if (target !== 'next-turn' && target !== 'next-step') {
    throw new TurnlogError('INVALID_ARGUMENT', `target must be 'next-turn' or 'next-step', got ${String(target)}`, { sessionId, field: 'target' })
  }
  const wake = (opts.wake ?? true) === true
  const m = toMessage(message, sessionId)
  checkMessageSize(m, 'message', sessionId)
  const header = makeHeader(sessionId, {}, store.clock)
  try {
    // sends of one tick share one transaction (group-tx.ts: one lock, one WAL sync)
    await store.txGrouped(() => {
      const now = store.now()
      const db = store.db
      db.prepare('INSERT INTO turnlog_sessions (id, header, created_at, last_activity) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING')
        .run(sessionId, JSON.stringify(header), now, now)
      const r = db.prepare(`INSERT INTO turnlog_inbox (session_id, message_id, target, wake, message, sent_at)
        VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, message_id) DO NOTHING`).run(sessionId, m.id, target, wake ? 1 : 0, JSON.stringify(m), now)
      if (Number(r.changes) > 0) db.prepare('UPDATE turnlog_sessions SET pending = pending + 1, last_activity = ? WHERE id = ?').run(now, sessionId)
    })
  } catch (err) {
    throw sqlError(err, sessionId, 'send failed', store.file)
  }
  return m.id
}

/** `SqliteStore.pendingSends`. */
export async function pendingSendsSqlite(store: SqliteStore, sessionId: string): Promise<string[]> {
  assertSessionId(sessionId)
  try {
    return (store.db.prepare('SELECT message_id FROM turnlog_inbox WHERE session_id = ? AND moved_seq IS NULL ORDER BY n').all(sessionId) as Array<{ message_id: string }>)
      .map((x) => x.message_id)
  } catch (err) {
    throw sqlError(err, sessionId, 'pendingSends failed', store.file)
  }
}

/** `SqliteStore.decide` for one session (the store routes a child's approval first). */
export async function decideSqlite(
  store: SqliteStore, id: string, approvalId: string, input: StoreDecisionInput, opts: StoreDecideOptions = {},
): Promise<StoreDecided> {
  const decision = checkDecision(input)
  const by = checkBy(opts.by)
  const time = (opts.clock ?? Date.now)()
  const draft = checkedDraft(id, await readAll(store, id), approvalId, decision, by, time)
  let won: boolean
  try {
    won = await store.tx(() => {
      const db = store.db
      if (db.prepare('SELECT 1 AS x FROM turnlog_sessions WHERE id = ?').get(id) === undefined) {
        throw new TurnlogError('SESSION_NOT_FOUND', 'no such session', { sessionId: id })
      }
      const now = store.now()
      const r = db.prepare(`INSERT INTO turnlog_decisions (session_id, approval_id, record, decided_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (session_id, approval_id) DO NOTHING`).run(id, approvalId, JSON.stringify({ approvalId, decision, by, time }), now)
      if (Number(r.changes) === 0) return false
      db.prepare('UPDATE turnlog_sessions SET pending = pending + 1, last_activity = ? WHERE id = ?').run(now, id)
      return true
    })
  } catch (err) {
    throw sqlError(err, id, 'decide failed', store.file)
  }
  if (!won) {
    const row = store.db.prepare('SELECT record, logged_seq FROM turnlog_decisions WHERE session_id = ? AND approval_id = ?').get(id, approvalId) as
      { record: string; logged_seq: number | null } | undefined
    let what = ''
    try {
      const rec = JSON.parse(row?.record ?? 'null') as { decision?: { kind?: string }; by?: { kind?: string } } | null
      what = rec ? ` (${rec.decision?.kind ?? '?'} by ${rec.by?.kind ?? '?'}${row?.logged_seq != null ? `, seq ${row.logged_seq}` : ', not logged yet'})` : ''
    } catch {
      // an unreadable row: the refusal stands without the detail
    }
    throw new TurnlogError('APPROVAL_DECIDED', `approval ${approvalId} was already decided${what}`, { sessionId: id, field: 'approvalId', info: { approvalId } })
  }
  const until = Date.now() + (opts.waitMs ?? 0)
  for (let delay = 20; ; delay = Math.min(delay * 2, 200)) {
    const logged = loggedDecision(await readAll(store, id), approvalId)
    if (logged !== undefined) return decided(id, logged, logged.seq)
    if (Date.now() + delay > until) return decided(id, draft, null)
    await new Promise((res) => setTimeout(res, delay))
  }
}

/**
 * `SqliteStore.answer` for one session (docs/spec/lifecycle.md §11): as `decideSqlite`, an answer of an input
 * round is a row of `turnlog_decisions` keyed by its request id (first answer wins; `pending`
 * makes the session claimable); checked against the log first (refusals record nothing).
 */
export async function answerSqlite(store: SqliteStore, id: string, requestId: string, input: unknown, opts: StoreAnswerOptions = {}): Promise<StoreAnswered> {
  const by = checkBy(opts.by)
  const time = (opts.clock ?? Date.now)()
  const draft = await answerEvent(id, await readAll(store, id), requestId, input, by, time)
  let won: boolean
  try {
    won = await store.tx(() => {
      const db = store.db
      if (db.prepare('SELECT 1 AS x FROM turnlog_sessions WHERE id = ?').get(id) === undefined) {
        throw new TurnlogError('SESSION_NOT_FOUND', 'no such session', { sessionId: id })
      }
      const now = store.now()
      const r = db.prepare(`INSERT INTO turnlog_decisions (session_id, approval_id, record, decided_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (session_id, approval_id) DO NOTHING`).run(id, requestId, JSON.stringify({ requestId, answer: draft.data.answer, by, time }), now)
      if (Number(r.changes) === 0) return false
      db.prepare('UPDATE turnlog_sessions SET pending = pending + 1, last_activity = ? WHERE id = ?').run(now, id)
      return true
    })
  } catch (err) {
    throw sqlError(err, id, 'answer failed', store.file)
  }
  if (!won) {
    throw refusal(id, requestId, store.db.prepare('SELECT record, logged_seq FROM turnlog_decisions WHERE session_id = ? AND approval_id = ?').get(id, requestId) as
      { record: string; logged_seq: number | null } | undefined)
  }
  const until = Date.now() + (opts.waitMs ?? 0)
  for (let delay = 20; ; delay = Math.min(delay * 2, 200)) {
    const logged = loggedAnswer(await readAll(store, id), requestId)
    if (logged !== undefined) return answered(id, logged, logged.seq)
    if (Date.now() + delay > until) return answered(id, draft, null)
    await new Promise((res) => setTimeout(res, delay))
  }
}

/**
 * `SqliteStore.cancel`: records a stop under the write lock (ordered against every append, send,
 * claim and hand-back), with the log's length and the last sent message, as PostgreSQL's
 * `turnlog_request_cancel`. `idle` when nobody holds the session and nothing waits.
 */
export async function cancelSqlite(store: SqliteStore, sessionId: string, cause: CancelRequestCause = { kind: 'user' }): Promise<CancelRequest> {
  assertSessionId(sessionId)
  if (cause === null || typeof cause !== 'object' || (cause.kind !== 'user' && !(cause.kind === 'hook' && typeof cause.reason === 'string'))) {
    throw new TurnlogError('INVALID_ARGUMENT', 'cause must be { kind: \'user\' } or { kind: \'hook\', reason }', { sessionId, field: 'cause' })
  }
  try {
    return await store.tx(() => {
      const db = store.db
      const s = db.prepare('SELECT length, pending, lease_owner FROM turnlog_sessions WHERE id = ?').get(sessionId) as
        { length: number; pending: number; lease_owner: string | null } | undefined
      if (!s) throw new TurnlogError('SESSION_NOT_FOUND', 'no such session', { sessionId })
      const w = Number((db.prepare('SELECT coalesce(max(n), 0) AS w FROM turnlog_inbox WHERE session_id = ?').get(sessionId) as { w: number }).w)
      const now = store.now()
      const idle = s.lease_owner === null && Number(s.pending) === 0
      const r = db.prepare(`INSERT INTO turnlog_cancels (session_id, cause, sent_before, length_at, requested_at, handled_at, outcome)
        VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING n`).get(sessionId, JSON.stringify(cause), w, Number(s.length), now, idle ? now : null, idle ? 'idle' : null) as { n: number }
      return { id: String(r.n), state: idle ? 'idle' as const : 'requested' as const }
    })
  } catch (err) {
    throw sqlError(err, sessionId, 'cancel failed', store.file)
  }
}
