/**
 * The worker's fallback check (pool.ts): NOTIFY is only an early wake (not durable), so a worker
 * also asks the table, for every session it serves, whether input (a sent message, a decision)
 * or a stop request waits — **one statement** for all three (round 14: two statements per poll
 * before, `checkInboxes` and `checkCancels`; B8 counted ~0.85 of each per session).
 *
 * How often: every `pollMs` while the LISTEN connection is down or was just (re)connected, and
 * every `quietMs` while it is up. A connected listener receives every NOTIFY committed while it
 * listens, and every handler re-reads the table (a pull, a cancel) rather than trusting the
 * payload; the check then only covers a handler's own failed query, so it need not run at the
 * wake-up rate. When the listener (re)connects, the worker checks at once (what was committed
 * while nobody listened).
 */
import { handleCancels, type CancelRun } from './cancel-worker.js'

/** A session served here, as the check needs it. */
export interface CheckedRun extends CancelRun {
  pull(): Promise<void>
}

type Query = (sql: string, params: unknown[]) => Promise<{ rows: unknown[] }>

/** The PostgreSQL check (`$1` the served ids, `$2` their children): one statement for all three. */
export const CHECK_SQL = `SELECT session_id, false AS cancel FROM turnlog_inbox WHERE session_id = ANY($1) AND moved_seq IS NULL
       UNION SELECT session_id, false FROM turnlog_decisions WHERE session_id = ANY($1 || $2::text[]) AND logged_seq IS NULL
       UNION SELECT session_id, true FROM turnlog_cancels WHERE session_id = ANY($1) AND handled_at IS NULL`

/**
 * One statement: which of `runs` have unmoved input, unlogged decisions or open stop requests, and
 * which of `children` (child sessions served inside those runs, docs/spec/lifecycle.md §10) have unlogged
 * decisions (`pokeChild` hands them over).
 */
export async function checkSessions(
  query: Query, runs: ReadonlyMap<string, CheckedRun>, report: (err: unknown) => void,
  children: readonly string[] = [], pokeChild: (id: string) => void = () => {},
): Promise<void> {
  const ids = [...runs.keys()]
  if (ids.length === 0) return
  await checkWith(async () => (await query(CHECK_SQL, [ids, children])).rows as CheckRow[], runs, report, children, pokeChild)
}

/** A row of the check: a session with something owed (`cancel`: an open stop request). */
export interface CheckRow { session_id: string; cancel: boolean }

/** Runs a store's check (`find`) and hands each session what it found. Never throws. */
export async function checkWith(
  find: () => Promise<CheckRow[]>, runs: ReadonlyMap<string, CheckedRun>, report: (err: unknown) => void,
  children: readonly string[] = [], pokeChild: (id: string) => void = () => {},
): Promise<void> {
  if (runs.size === 0) return
  try {
    for (const row of await find()) {
      const run = runs.get(row.session_id)
      if (!run) {
        if (children.includes(row.session_id)) pokeChild(row.session_id)
        continue
      }
      if (row.cancel) void handleCancels(run)
      else void run.pull()
    }
  } catch (err) {
    report(err)
  }
}
