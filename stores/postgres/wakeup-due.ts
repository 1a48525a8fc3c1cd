/**
 * Wakeups in the PostgreSQL store (lifecycle.md §10: "PostgreSQL workers claim sessions with a due
 * wakeup"). `turnlog_sessions.wakeup_due_at` holds the session's next due wakeup, maintained on
 * append from the `schedules` reducer: a batch holding a `schedule/*` event is appended with
 * `turnlog_append_due`, which runs `turnlog_append` (token, lease, expected seq, unchanged) and sets
 * the column in the same transaction, so the column never disagrees with a committed log. Workers
 * claim an idle session whose `wakeup_due_at` has passed (`DUE_WAKEUP`), resume it, and the
 * resumed agent fires what is due (`wake()`), once: the firing's append moves the column on.
 *
 * The due time is the agent's clock (epoch ms of the machine that scheduled); the claim compares it
 * with the server's clock, so clock skew between app machines and the server delays or advances a
 * claim by the skew (the firing itself is decided by the claiming agent's clock, W2).
 */
import type { LogEvent } from '../../events/envelope.js'
import { nextDue, schedulesReducer, type SchedulesState } from '../../reducers/schedules.js'

/** The column, its index and the append function (run by `migrate()` after `MIGRATION`; idempotent). */
export const WAKEUP_MIGRATION = `
ALTER TABLE turnlog_sessions ADD COLUMN IF NOT EXISTS wakeup_due_at timestamptz;
CREATE INDEX IF NOT EXISTS turnlog_sessions_wakeup_due ON turnlog_sessions (wakeup_due_at)
  WHERE wakeup_due_at IS NOT NULL;

CREATE OR REPLACE FUNCTION turnlog_append_due(
  p_session text, p_token bigint, p_expected integer, p_events json,
  p_moves text[], p_move_seqs integer[], p_lease_ms integer, p_due_ms bigint
) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  n integer;
BEGIN
  n := turnlog_append(p_session, p_token, p_expected, p_events, p_moves, p_move_seqs, p_lease_ms);
  UPDATE turnlog_sessions
    SET wakeup_due_at = CASE WHEN p_due_ms IS NULL THEN NULL ELSE to_timestamp(p_due_ms / 1000.0) END
    WHERE id = p_session;
  RETURN n;
END
$fn$;
`

/** The claim condition of an idle session with a due wakeup (workers.ts). */
export const DUE_WAKEUP = 'wakeup_due_at <= clock_timestamp()'

/** A query the tracker needs (the store's pool). */
export type DueQuery = (sql: string, params: unknown[]) => Promise<{ rows: unknown[] }>

/**
 * The writer's view of the session's schedules: folded from the stored `schedule/*` events the
 * first time a batch holds one (one indexed read of that session's rows), then from each batch.
 */
export class DueTracker {
  #state: SchedulesState | null = null

  constructor(readonly sessionId: string, readonly query: DueQuery, readonly decode: (text: string, seq: number) => LogEvent) {}

  /**
   * The next due time after `batch` (epoch ms, or null when nothing is pending) when the batch holds
   * a `schedule/*` event; `undefined` when it holds none (the column does not change).
   */
  async after(batch: readonly LogEvent[], expected: number): Promise<number | null | undefined> {
    if (!batch.some((e) => e.type.startsWith('schedule/'))) return undefined
    if (this.#state === null) {
      const state = schedulesReducer.initial()
      const r = await this.query(
        `SELECT seq, event::text AS e FROM turnlog_events
         WHERE session_id = $1 AND seq < $2 AND (event->>'type') LIKE 'schedule/%' ORDER BY seq`,
        [this.sessionId, expected],
      )
      for (const row of r.rows as Array<{ seq: number; e: string }>) schedulesReducer.apply(state, this.decode(row.e, row.seq))
      this.#state = state
    }
    for (const e of batch) schedulesReducer.apply(this.#state, e)
    return nextDue(this.#state)
  }
}
