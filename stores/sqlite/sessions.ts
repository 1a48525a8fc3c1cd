/**
 * `SqliteStore.sessions(filter?)` and `turnlog sessions sqlite:FILE`: one row per session, from the
 * session table alone (the log is the index: no session's events are read; resume's rare give-up
 * records come from their own table). The filters `parked`, `due` and `running` are
 * each one statement on its partial index, named (`INDEXED BY`: the plan cannot fall back to a
 * scan of every session) and prepared once (B11: the question over 10,000 sessions).
 */
import { isoTime } from '../iso-time.js'
import { sqlError } from './driver.js'
import type { SqlArrayStatement, SqlDb, SqlStatement } from './driver.js'
import { LISTED_COLUMNS } from './schema.js'

/** What the listing needs of its store (`SqliteStore` provides it). */
export interface SessionsHost {
  readonly db: SqlDb
  readonly file: string
  now(): number
  /** A cached prepared statement. */
  prep(sql: string): SqlStatement
  /** A cached prepared statement returning arrays. */
  prepArrays(sql: string): SqlArrayStatement
}

/** Which sessions `sessions(filter)` lists. */
export type SqliteSessionFilter = 'parked' | 'due' | 'running'

/** One row of `sessions()`. */
export interface SqliteSessionRow {
  id: string
  events: number
  /**
   * `running`: a live lease; `expired`: a lease ran out (its holder died or stalled); `waiting`:
   * sent input or a recorded decision and no holder; `due`: a wakeup or approval expiry has passed
   * and no holder; `parked`: open approval requests and nothing else owed (docs/spec/lifecycle.md §9); `idle`.
   */
  status: 'running' | 'expired' | 'waiting' | 'due' | 'parked' | 'idle'
  pending: number
  leaseOwner: string | null
  leaseUntil: string | null
  token: number
  lastActivity: string
  createdAt: string
  /** The session's next due time (wakeup or approval expiry), or null. */
  dueAt: string | null
  parked: boolean
  /** The first user message's text (shortened), or null. */
  title: string | null
  /** Resume's give-ups (docs/spec/lifecycle.md §8, `resume/given-up`). */
  givenUp: Array<{ seq: number; turn: number; runs: number; messages: string[] }>
}

/** Each filter's partial index (stores/sqlite/schema.ts) and the condition it answers. */
const WHERE: Record<SqliteSessionFilter, string> = {
  parked: 'INDEXED BY turnlog_sessions_parked WHERE parked = 1',
  due: 'INDEXED BY turnlog_sessions_due WHERE due_at IS NOT NULL AND due_at <= ?',
  running: 'INDEXED BY turnlog_sessions_leased WHERE lease_owner IS NOT NULL AND lease_until > ?',
}

/**
 * The statement `sessions(filter)` runs (exported for the plan test): `id` and the columns the
 * filters' indexes cover, in that order (the row mapping below reads them by position). @internal
 */
export function sessionsSql(filter?: SqliteSessionFilter): string {
  return `SELECT id, ${LISTED_COLUMNS} FROM turnlog_sessions ${filter === undefined ? '' : WHERE[filter]} ORDER BY id`
}

const iso = (ms: number | null) => (ms === null ? null : isoTime(Number(ms)))

export async function sessionRows(store: SessionsHost, filter?: SqliteSessionFilter): Promise<SqliteSessionRow[]> {
  if (filter !== undefined && !Object.hasOwn(WHERE, filter)) {
    const { TurnlogError } = await import('../../events/errors.js')
    throw new TurnlogError('INVALID_ARGUMENT', `filter must be 'parked', 'due' or 'running', got ${String(filter)}`, { field: 'filter' })
  }
  const now = store.now()
  let rows: unknown[][]
  let given: Array<{ session_id: string; seq: number; event: string }>
  try {
    rows = store.prepArrays(sessionsSql(filter)).all(...(filter === 'due' || filter === 'running' ? [now] : []))
    given = store.prep('SELECT session_id, seq, event FROM turnlog_given_up ORDER BY session_id, seq').all() as typeof given
  } catch (err) {
    throw sqlError(err, undefined, 'sessions failed', store.file)
  }
  const givenUp = new Map<string, SqliteSessionRow['givenUp']>()
  for (const row of given) {
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
  return rows.map((r) => {
    // by position: id, then LISTED_COLUMNS' order
    const [id, length, pending, leaseOwner, leaseUntilMs, token, lastActivity, createdAt, dueAt, parked, title] = r
    const leaseUntil = leaseUntilMs === null ? null : Number(leaseUntilMs)
    const live = leaseOwner !== null && leaseUntil !== null && leaseUntil > now
    const due = dueAt !== null && Number(dueAt) <= now
    const isParked = Number(parked) === 1
    const status: SqliteSessionRow['status'] = live ? 'running' : leaseOwner !== null ? 'expired'
      : Number(pending) > 0 ? 'waiting' : due ? 'due' : isParked ? 'parked' : 'idle'
    return {
      id: String(id), events: Number(length), status, pending: Number(pending),
      leaseOwner: (leaseOwner as string | null) ?? null, leaseUntil: iso(leaseUntil), token: Number(token),
      lastActivity: iso(Number(lastActivity))!, createdAt: iso(Number(createdAt))!,
      dueAt: iso(dueAt === null ? null : Number(dueAt)), parked: isParked, title: (title as string | null) ?? null,
      givenUp: givenUp.get(String(id)) ?? [],
    }
  })
}
