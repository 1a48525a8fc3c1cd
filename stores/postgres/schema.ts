/**
 * The PostgreSQL schema of `postgresStore` and its two server-side functions (decision record "postgres-workers" (docs/decisions/ in the repository)). `migrate()` runs `MIGRATION` under a transaction-level
 * advisory lock, so several processes migrating at once do not race on `CREATE ... IF NOT EXISTS`.
 *
 * - `turnlog_sessions`: one row per session: the header, the log's length, the lease (`token`
 *   grows with every ownership; `lease_owner`, `lease_until` on the server's clock), `pending`
 *   (sent messages not yet moved into the log).
 * - `turnlog_events`: one row per event, `PRIMARY KEY (session_id, seq)` (the unique key that
 *   makes a duplicate or a second writer's seq impossible). Stored as `json` (the text as given,
 *   so `\u0000` in a tool's output survives, which `jsonb` refuses).
 * - `turnlog_inbox`: durable input from `send`, in send order (`n`), `moved_seq` set by the
 *   append that logs its splice.
 * - `turnlog_append(...)`: the only way events get in: checks the token, the lease's expiry and
 *   the expected seq under the session row's lock, inserts the batch with one multi-row INSERT,
 *   marks the moved input, extends the lease, all in the caller's single statement.
 * - `turnlog_send(...)`: creates the session if needed, inserts the message (idempotent on its id),
 *   counts it pending, and NOTIFYs `turnlog_input` (delivered at commit).
 * - `turnlog_cancels` / `turnlog_request_cancel(...)`: cross-process stops (cancels.ts).
 */

import { CANCEL_MIGRATION } from './cancels.js'

/**
 * Bumped when the schema changes; `migrate()` records it in `turnlog_meta`. 2: `turnlog_cancels`
 * (cancels.ts). 3: one due column (`due_at`; `wakeup_due_at` merged into it and dropped, wakeup-due.ts).
 */
export const SCHEMA_VERSION = 3

/** The advisory lock key `migrate()` holds (any fixed 64-bit number; "turnlog" in ASCII). */
export const MIGRATE_LOCK = 0x7475726e6c6f67

/** The NOTIFY channel: the payload is the session id. */
export const INPUT_CHANNEL = 'turnlog_input'

/** Custom SQLSTATEs raised by the functions (class "TL", outside the standard classes). */
export const SQLSTATE = {
  notFound: 'TLNF0',
  leaseLost: 'TLLL0',
  seqConflict: 'TLSC0',
  inputMoved: 'TLIM0',
  /** decisions.ts: a batch logs a decision other than the one recorded first. */
  decisionConflict: 'TLDC0',
} as const

export const MIGRATION = `
CREATE TABLE IF NOT EXISTS turnlog_meta (
  key text PRIMARY KEY,
  value text NOT NULL
);
CREATE TABLE IF NOT EXISTS turnlog_sessions (
  id text PRIMARY KEY,
  header json NOT NULL,
  length integer NOT NULL DEFAULT 0,
  token bigint NOT NULL DEFAULT 0,
  lease_owner text,
  lease_until timestamptz,
  pending integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_activity timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS turnlog_sessions_claimable ON turnlog_sessions (last_activity)
  WHERE pending > 0 OR lease_owner IS NOT NULL;
CREATE TABLE IF NOT EXISTS turnlog_events (
  session_id text NOT NULL,
  seq integer NOT NULL,
  event json NOT NULL,
  CONSTRAINT turnlog_events_session_seq PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS turnlog_inbox (
  n bigserial PRIMARY KEY,
  session_id text NOT NULL,
  message_id text NOT NULL,
  target text NOT NULL,
  wake boolean NOT NULL,
  message json NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT now(),
  moved_seq integer,
  CONSTRAINT turnlog_inbox_session_message UNIQUE (session_id, message_id)
);
CREATE INDEX IF NOT EXISTS turnlog_inbox_unmoved ON turnlog_inbox (session_id, n) WHERE moved_seq IS NULL;
-- resume's give-up records (docs/spec/lifecycle.md §8), listed by sessions() without reading every event
CREATE INDEX IF NOT EXISTS turnlog_events_given_up ON turnlog_events (session_id, seq)
  WHERE (event->>'type') = 'resume/given-up';

CREATE OR REPLACE FUNCTION turnlog_append(
  p_session text, p_token bigint, p_expected integer, p_events json,
  p_moves text[], p_move_seqs integer[], p_lease_ms integer
) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  s record;
  n integer;
  moved integer;
BEGIN
  -- the session row's lock orders this append against every claim, heartbeat and hand-back
  SELECT token, length, lease_until INTO s FROM turnlog_sessions WHERE id = p_session FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no such session' USING ERRCODE = '${SQLSTATE.notFound}';
  END IF;
  IF s.token <> p_token OR s.lease_until IS NULL OR s.lease_until <= clock_timestamp() THEN
    RAISE EXCEPTION 'lease lost: this writer holds token %, the session has token %', p_token, s.token
      USING ERRCODE = '${SQLSTATE.leaseLost}';
  END IF;
  IF s.length <> p_expected THEN
    RAISE EXCEPTION 'expected seq %, but the log''s next seq is %', p_expected, s.length
      USING ERRCODE = '${SQLSTATE.seqConflict}';
  END IF;
  INSERT INTO turnlog_events (session_id, seq, event)
    SELECT p_session, p_expected + (t.i - 1)::integer, t.e
    FROM json_array_elements(p_events) WITH ORDINALITY AS t(e, i);
  GET DIAGNOSTICS n = ROW_COUNT;
  IF coalesce(cardinality(p_moves), 0) > 0 THEN
    UPDATE turnlog_inbox AS i SET moved_seq = m.seq
      FROM unnest(p_moves, p_move_seqs) AS m(id, seq)
      WHERE i.session_id = p_session AND i.message_id = m.id AND i.moved_seq IS NULL;
    GET DIAGNOSTICS moved = ROW_COUNT;
    IF moved <> cardinality(p_moves) THEN
      RAISE EXCEPTION 'a sent message in this batch is not pending (already moved into the log)'
        USING ERRCODE = '${SQLSTATE.inputMoved}';
    END IF;
  ELSE
    moved := 0;
  END IF;
  UPDATE turnlog_sessions SET
    length = p_expected + n,
    pending = pending - moved,
    last_activity = now(),
    lease_until = greatest(lease_until, clock_timestamp() + p_lease_ms * interval '1 millisecond')
  WHERE id = p_session;
  RETURN p_expected + n;
END
$fn$;

CREATE OR REPLACE FUNCTION turnlog_send(
  p_session text, p_header json, p_message_id text, p_target text, p_wake boolean, p_message json
) RETURNS boolean LANGUAGE plpgsql AS $fn$
DECLARE
  inserted integer;
BEGIN
  INSERT INTO turnlog_sessions (id, header) VALUES (p_session, p_header) ON CONFLICT (id) DO NOTHING;
  INSERT INTO turnlog_inbox (session_id, message_id, target, wake, message)
    VALUES (p_session, p_message_id, p_target, p_wake, p_message)
    ON CONFLICT (session_id, message_id) DO NOTHING;
  GET DIAGNOSTICS inserted = ROW_COUNT;
  IF inserted > 0 THEN
    UPDATE turnlog_sessions SET pending = pending + 1 WHERE id = p_session;
    PERFORM pg_notify('${INPUT_CHANNEL}', p_session);
  END IF;
  RETURN inserted > 0;
END
$fn$;

${CANCEL_MIGRATION}

INSERT INTO turnlog_meta (key, value) VALUES ('schema', '${SCHEMA_VERSION}')
  ON CONFLICT (key) DO UPDATE SET value = excluded.value;
`
