/**
 * Wakeups in the PostgreSQL store (docs/spec/lifecycle.md §10: "PostgreSQL workers claim sessions with a due
 * wakeup"). `turnlog_sessions.due_at` is the session's ONE due time: the earlier of its next due
 * wakeup (the `schedules` reducer, folded here) and its next approval expiry (decisions.ts). A batch
 * that moves either is appended with `turnlog_append_decided(…, p_set_due, p_due_ms)`, which runs
 * `turnlog_append` and sets the column in the same transaction, so the column never disagrees with
 * a committed log. Workers claim an idle session whose `due_at` has passed (`DUE`), resume it, and
 * the resumed agent fires what is due (`wake()`), once: the firing's append moves the column on.
 *
 * The due time is the agent's clock (epoch ms of the machine that scheduled); the claim compares it
 * with the server's clock, so clock skew between app machines and the server delays or advances a
 * claim by the skew (the firing itself is decided by the claiming agent's clock, W2).
 */
import type { LogEvent } from '../../events/envelope.js'
import { nextDue, schedulesReducer, type SchedulesState } from '../../reducers/schedules.js'

/**
 * The one due column (run by `migrate()` after `DECISIONS_MIGRATION`, which adds `due_at`;
 * idempotent). Schema version 2 kept wakeups in a column of their own, `wakeup_due_at`, written by
 * `turnlog_append_due`: a database made by it keeps every due time (`due_at` becomes the earlier
 * of the two), then the old column (with its index) and function are dropped. Processes of the
 * previous version must be stopped before this runs (their claims name the old column).
 */
export const DUE_MIGRATION = `
DO $mig$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = 'turnlog_sessions' AND column_name = 'wakeup_due_at') THEN
    UPDATE turnlog_sessions SET due_at = CASE WHEN due_at IS NULL THEN wakeup_due_at ELSE least(due_at, wakeup_due_at) END
      WHERE wakeup_due_at IS NOT NULL;
    ALTER TABLE turnlog_sessions DROP COLUMN wakeup_due_at;
  END IF;
END
$mig$;
DROP FUNCTION IF EXISTS turnlog_append_due(text, bigint, integer, json, text[], integer[], integer, bigint);
`

/** A query the tracker needs (the store's pool). */
export type DueQuery = (sql: string, params: unknown[]) => Promise<{ rows: unknown[] }>

/**
 * The writer's view of the session's schedules: folded from the stored `schedule/*` events the
 * first time a batch holds one (one indexed read of that session's rows), then from each batch.
 */
export class DueTracker {
  #state: SchedulesState | null = null

  /** Whether a batch moves the next wakeup. */
  static holds(batch: readonly LogEvent[]): boolean {
    return batch.some((e) => e.type.startsWith('schedule/'))
  }

  constructor(readonly sessionId: string, readonly query: DueQuery, readonly decode: (text: string, seq: number) => LogEvent) {}

  /**
   * The next due wakeup after `batch` (epoch ms, or null when nothing is pending) when the batch
   * holds a `schedule/*` event or `force` (the approvals moved the one due time: it needs this
   * half too); `undefined` otherwise (the column does not change).
   */
  async after(batch: readonly LogEvent[], expected: number, force = false): Promise<number | null | undefined> {
    if (!force && !DueTracker.holds(batch)) return undefined
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
