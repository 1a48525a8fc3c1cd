/**
 * `turnlog sessions URL`: which sessions stand parked (docs/spec/lifecycle.md §9: their last `step/parked` is
 * followed by nothing but inbox splices, wakeups and decisions) and their oldest open approval
 * request, for the listing. Two queries for the whole store (not one per session): the parked
 * positions, then the events of each parked step (from its `step/start`), folded with the
 * approvals reducer. A decision recorded in `turnlog_decisions` and not logged yet (a worker logs
 * it) no longer counts as open. Log content is read inside a guard: a malformed row is skipped.
 */
import { EVENT_DATA, type LogEvent } from '../events/index.js'
import { approvalsReducer, openApprovals } from '../reducers/approvals.js'
import { endsWait } from '../reducers/transcript-waits.js'
import type { PostgresStore } from '../stores/postgres/store.js'

export interface ParkedInfo {
  /** The seq of the session's last `step/parked`. */
  seq: number
  /** Open requests (decisions recorded but not logged yet excluded). */
  open: number
  /** Recorded in the store, not logged yet: the worker that claims the session logs them. */
  decidedNotLogged: number
  oldest: { approvalId: string; callId: string; name: string; requestedAt: string; ageMs: number } | null
}

/** Parked sessions by id. `now` is the CLI's clock (the age of the oldest request). */
export async function parkedSessions(store: PostgresStore, now: number): Promise<Map<string, ParkedInfo>> {
  const ending = Object.keys(EVENT_DATA).filter(endsWait)
  const r = await store.query(
    `WITH lp AS (
       SELECT session_id, max(seq) AS parked_seq FROM turnlog_events WHERE (event->>'type') = 'step/parked' GROUP BY session_id
     )
     SELECT lp.session_id, lp.parked_seq,
       (SELECT max(s.seq) FROM turnlog_events s
         WHERE s.session_id = lp.session_id AND s.seq < lp.parked_seq AND (s.event->>'type') = 'step/start') AS step_seq
     FROM lp
     WHERE NOT EXISTS (SELECT 1 FROM turnlog_events x
       WHERE x.session_id = lp.session_id AND x.seq > lp.parked_seq AND (x.event->>'type') = ANY($1::text[]))`,
    [ending], undefined, 'sessions failed',
  )
  const rows = r.rows as Array<{ session_id: string; parked_seq: number; step_seq: number | null }>
  const out = new Map<string, ParkedInfo>()
  if (rows.length === 0) return out
  const e = await store.query(
    `SELECT e.session_id, e.event::text AS event FROM turnlog_events e
     JOIN unnest($1::text[], $2::int[]) AS p(sid, from_seq) ON e.session_id = p.sid AND e.seq >= p.from_seq
     WHERE (e.event->>'type') IN ('step/start', 'assistant/message', 'tool/approval-requested', 'tool/approval-decided', 'step/parked')
     ORDER BY e.session_id, e.seq`,
    [rows.map((x) => x.session_id), rows.map((x) => Number(x.step_seq ?? 0))], undefined, 'sessions failed',
  )
  const unlogged = new Map<string, Set<string>>()
  try {
    const d = await store.query('SELECT session_id, approval_id FROM turnlog_decisions WHERE logged_seq IS NULL', [], undefined, 'sessions failed')
    for (const x of d.rows as Array<{ session_id: string; approval_id: string }>) {
      const set = unlogged.get(x.session_id) ?? new Set<string>()
      set.add(x.approval_id)
      unlogged.set(x.session_id, set)
    }
  } catch {
    // a store migrated before approvals: no recorded decisions
  }
  const states = new Map<string, ReturnType<typeof approvalsReducer.initial>>()
  for (const row of e.rows as Array<{ session_id: string; event: string }>) {
    let st = states.get(row.session_id)
    if (st === undefined) states.set(row.session_id, (st = approvalsReducer.initial()))
    try {
      approvalsReducer.apply(st, JSON.parse(row.event) as LogEvent)
    } catch {
      // log content: a malformed event is skipped (turnlog verify names it)
    }
  }
  for (const row of rows) {
    const st = states.get(row.session_id) ?? approvalsReducer.initial()
    const skip = unlogged.get(row.session_id) ?? new Set<string>()
    const open = openApprovals(st).filter((a) => !skip.has(a.approvalId))
    const oldest = open.reduce<(typeof open)[number] | null>((m, a) => (m === null || a.time < m.time ? a : m), null)
    out.set(row.session_id, {
      seq: Number(row.parked_seq), open: open.length, decidedNotLogged: openApprovals(st).length - open.length,
      oldest: oldest === null ? null : {
        approvalId: oldest.approvalId, callId: oldest.callId, name: oldest.name,
        requestedAt: Number.isFinite(oldest.time) ? new Date(oldest.time).toISOString() : '?', ageMs: Math.max(0, now - oldest.time),
      },
    })
  }
  return out
}
