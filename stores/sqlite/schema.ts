/**
 * The schema of `sqliteStore` (one file, any number of sessions), versioned by SQLite's own
 * `PRAGMA user_version` and migrated idempotently when the store first opens the file: every step
 * runs inside one `BEGIN IMMEDIATE` transaction (one migrator at a time across processes; a second
 * one waits on the lock, then finds the version current and does nothing).
 *
 * The tables mirror the PostgreSQL store's (stores/postgres/schema.ts), with times as epoch ms of
 * the one machine's clock (every process on the file shares it):
 * - `turnlog_sessions`: header, length, lease (`token`, `lease_owner`, `lease_until`), `pending`
 *   (sent input and recorded decisions not logged yet), `due_at` (the session's one due time: next
 *   wakeup or approval expiry), `parked` (open approval requests at the end of the log), `title`
 *   (the first user message's text), `child` (a subagent's child session: served by its parent).
 * - `turnlog_events`: `PRIMARY KEY (session_id, seq)`: a duplicate seq is impossible. The event's
 *   JSON text as given (byte-equal copies), its `type` beside it. No index but the key: every
 *   append writes each index of this table (version 2's partial index of give-ups cost B11's
 *   appends ~6%, though it held no row).
 * - `turnlog_given_up`: resume's give-up records (`resume/given-up`, rare), copied here by the
 *   append that logs them, for the listing.
 * - `turnlog_inbox`, `turnlog_decisions`, `turnlog_cancels`: durable input from `send`, decisions
 *   from `decide`, stop requests from `cancel`, as in PostgreSQL.
 */
import type { SqlDb } from './driver.js'

/** The schema version this code writes (`PRAGMA user_version`). */
export const SQLITE_SCHEMA_VERSION = 3

/**
 * The columns `sessions()` lists besides `id` (sessions.ts). Version 2's parked and due indexes
 * carry them, so those filters read their index alone: a `WITHOUT ROWID` table answers a plain
 * index's row with one more B-tree search by `id`, which was most of the time of "which sessions
 * are parked / due / running" over 10,000 sessions (B11). The leased index stays keyed on
 * `lease_until` alone: its sessions are the ones being appended to, and a covering entry would be
 * rewritten by every append (`length`, `last_activity`): B11's appends measured 0.78-0.79x raw with
 * it covering, 0.80-0.82x without.
 */
export const LISTED_COLUMNS = 'length, pending, lease_owner, lease_until, token, last_activity, created_at, due_at, parked, title'

/** `LISTED_COLUMNS` after `first` and `id`: the key and the covered columns of one index. */
function covering(first: string): string {
  return [first, 'id', ...LISTED_COLUMNS.split(', ').filter((c) => c !== first)].join(', ')
}

/**
 * Each step takes the file from version `i` to `i + 1` (index 0: an empty file to version 1;
 * index 1: version 1's parked and due indexes replaced by covering ones under the same names;
 * index 2: the give-ups moved from a partial index of the events to a table of their own).
 */
export const MIGRATIONS: readonly string[] = [
  `
CREATE TABLE IF NOT EXISTS turnlog_sessions (
  id TEXT PRIMARY KEY,
  header TEXT NOT NULL,
  length INTEGER NOT NULL DEFAULT 0,
  token INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_until INTEGER,
  pending INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  last_activity INTEGER NOT NULL,
  due_at INTEGER,
  parked INTEGER NOT NULL DEFAULT 0,
  title TEXT,
  child INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS turnlog_sessions_pending ON turnlog_sessions (last_activity) WHERE pending > 0;
CREATE INDEX IF NOT EXISTS turnlog_sessions_due ON turnlog_sessions (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS turnlog_sessions_parked ON turnlog_sessions (parked) WHERE parked = 1;
CREATE INDEX IF NOT EXISTS turnlog_sessions_leased ON turnlog_sessions (lease_until) WHERE lease_owner IS NOT NULL;
CREATE TABLE IF NOT EXISTS turnlog_events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  event TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS turnlog_events_given_up ON turnlog_events (session_id, seq) WHERE type = 'resume/given-up';
CREATE TABLE IF NOT EXISTS turnlog_inbox (
  n INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  target TEXT NOT NULL,
  wake INTEGER NOT NULL,
  message TEXT NOT NULL,
  sent_at INTEGER NOT NULL,
  moved_seq INTEGER,
  UNIQUE (session_id, message_id)
);
CREATE INDEX IF NOT EXISTS turnlog_inbox_unmoved ON turnlog_inbox (session_id, n) WHERE moved_seq IS NULL;
CREATE TABLE IF NOT EXISTS turnlog_decisions (
  session_id TEXT NOT NULL,
  approval_id TEXT NOT NULL,
  record TEXT NOT NULL,
  decided_at INTEGER NOT NULL,
  logged_seq INTEGER,
  PRIMARY KEY (session_id, approval_id)
);
CREATE INDEX IF NOT EXISTS turnlog_decisions_unlogged ON turnlog_decisions (session_id) WHERE logged_seq IS NULL;
CREATE TABLE IF NOT EXISTS turnlog_cancels (
  n INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  cause TEXT NOT NULL,
  sent_before INTEGER NOT NULL,
  length_at INTEGER NOT NULL,
  requested_at INTEGER NOT NULL,
  handled_at INTEGER,
  outcome TEXT,
  end_seq INTEGER
);
CREATE INDEX IF NOT EXISTS turnlog_cancels_open ON turnlog_cancels (session_id, n) WHERE handled_at IS NULL;
`,
  `
DROP INDEX IF EXISTS turnlog_sessions_due;
DROP INDEX IF EXISTS turnlog_sessions_parked;
CREATE INDEX turnlog_sessions_due ON turnlog_sessions (${covering('due_at')}) WHERE due_at IS NOT NULL;
CREATE INDEX turnlog_sessions_parked ON turnlog_sessions (${covering('parked')}) WHERE parked = 1;
`,
  `
CREATE TABLE IF NOT EXISTS turnlog_given_up (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
INSERT OR IGNORE INTO turnlog_given_up (session_id, seq, event)
  SELECT session_id, seq, event FROM turnlog_events WHERE type = 'resume/given-up';
DROP INDEX IF EXISTS turnlog_events_given_up;
`,
]

/**
 * Brings the file to `SQLITE_SCHEMA_VERSION` (idempotent; safe from several processes at once).
 * A file written by a newer version is refused (`FUTURE_FORMAT`): its tables may mean more.
 * Returns the version found before.
 */
export function migrate(db: SqlDb, onFuture: (found: number) => never): number {
  const read = () => Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version)
  // the common case: current already (no write lock taken)
  const seen = read()
  if (seen === SQLITE_SCHEMA_VERSION) return seen
  if (seen > SQLITE_SCHEMA_VERSION) onFuture(seen)
  db.exec('BEGIN IMMEDIATE')
  try {
    const at = read()
    if (at > SQLITE_SCHEMA_VERSION) onFuture(at)
    for (let v = at; v < SQLITE_SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!)
    if (at < SQLITE_SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`)
    db.exec('COMMIT')
    return seen
  } catch (err) {
    try {
      db.exec('ROLLBACK')
    } catch {
      // no transaction left to roll back
    }
    throw err
  }
}
