/**
 * Cross-process cancel (issue 22: `POST /chat/:id/stop` with workers): a stop asked of any process
 * is recorded durably in `turnlog_cancels`, and the worker that holds the session cancels the turn
 * (workers/cancel-worker.ts). NOTIFY `turnlog_cancel` only wakes the holder early; its poll finds the
 * request anyway, and a worker that takes a session over (its holder died) finds it on claim.
 *
 * What a request covers (decision record "http" (docs/decisions/ in the repository), "stop across processes"): the answer being
 * written when the stop was recorded, and the input sent before it that is not answered yet. It
 * records the log's length (`length_at`) and the last sent message (`sent_before`, the inbox's
 * `n`) under the session row's lock (the lock every append takes), so "before the stop" is exact.
 * Input sent after the stop is answered as usual.
 */
import { TurnlogError } from '../../events/errors.js'
import { assertSessionId } from '../ids.js'

/** The NOTIFY channel of cancel requests: the payload is the session id. */
export const CANCEL_CHANNEL = 'turnlog_cancel'

/** Part of the store's MIGRATION (schema.ts): idempotent DDL. */
export const CANCEL_MIGRATION = `
CREATE TABLE IF NOT EXISTS turnlog_cancels (
  n bigserial PRIMARY KEY,
  session_id text NOT NULL,
  cause json NOT NULL,
  sent_before bigint NOT NULL,
  length_at integer NOT NULL,
  requested_at timestamptz NOT NULL DEFAULT now(),
  handled_at timestamptz,
  outcome text,
  end_seq integer
);
CREATE INDEX IF NOT EXISTS turnlog_cancels_open ON turnlog_cancels (session_id, n) WHERE handled_at IS NULL;

CREATE OR REPLACE FUNCTION turnlog_request_cancel(p_session text, p_cause json)
RETURNS TABLE (request bigint, state text) LANGUAGE plpgsql AS $fn$
DECLARE
  s record;
  w bigint;
BEGIN
  -- the session row's lock orders the request against every append, send, claim and hand-back
  SELECT t.length, t.pending, t.lease_owner INTO s FROM turnlog_sessions t WHERE t.id = p_session FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no such session' USING ERRCODE = 'TLNF0';
  END IF;
  SELECT coalesce(max(i.n), 0) INTO w FROM turnlog_inbox i WHERE i.session_id = p_session;
  IF s.lease_owner IS NULL AND s.pending = 0 THEN
    -- nobody holds the session and nothing waits: no turn is open (a holder hands back only when
    -- idle; a dead holder's lease stays set until a worker takes the session over)
    RETURN QUERY INSERT INTO turnlog_cancels AS c (session_id, cause, sent_before, length_at, handled_at, outcome)
      VALUES (p_session, p_cause, w, s.length, now(), 'idle') RETURNING c.n, 'idle'::text;
  ELSE
    RETURN QUERY INSERT INTO turnlog_cancels AS c (session_id, cause, sent_before, length_at)
      VALUES (p_session, p_cause, w, s.length) RETURNING c.n, 'requested'::text;
    PERFORM pg_notify('${CANCEL_CHANNEL}', p_session);
  END IF;
END
$fn$;

-- A holder hands an idle session back (writer.ts handBack) only while nothing is owed: no sent
-- input (pending = 0) and no open stop request. A request recorded while the lease was held is
-- "requested" (for the holder); released under it, nobody would claim the session (no input) and
-- the request would never be handled. The row lock comes first, then the check in its own
-- statement (a VOLATILE function reads a fresh snapshot per statement): a request committed before
-- the lock is seen; one recorded after it finds the lease released and is "idle".
CREATE OR REPLACE FUNCTION turnlog_hand_back(p_session text, p_token bigint)
RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM 1 FROM turnlog_sessions WHERE id = p_session FOR UPDATE;
  IF EXISTS (SELECT 1 FROM turnlog_cancels WHERE session_id = p_session AND handled_at IS NULL) THEN
    RETURN false;
  END IF;
  UPDATE turnlog_sessions SET lease_owner = NULL, lease_until = NULL
    WHERE id = p_session AND token = p_token AND pending = 0 AND lease_until > clock_timestamp();
  RETURN FOUND;
END
$fn$;
`

/** What `store.cancel` answers. */
export interface CancelRequest {
  /** The request's id (`turnlog_cancels.n`). */
  id: string
  /**
   * `requested`: recorded; the worker that holds (or takes) the session cancels what the request
   * covers. `idle`: nothing was running or waiting, so there was nothing to cancel.
   */
  state: 'requested' | 'idle'
}

/** The cause a request records (`turn/end {reason: aborted {cause}}` carries it). */
export type CancelRequestCause = { kind: 'user' } | { kind: 'hook'; reason: string }

interface Queryable {
  query(sql: string, params: unknown[], sessionId: string | undefined, what: string): Promise<{ rows: unknown[] }>
}

/** Records a stop for `sessionId` (store.cancel). SESSION_NOT_FOUND for an unknown session. */
export async function requestCancel(store: Queryable, sessionId: string, cause: CancelRequestCause = { kind: 'user' }): Promise<CancelRequest> {
  assertSessionId(sessionId)
  if (cause === null || typeof cause !== 'object' || (cause.kind !== 'user' && !(cause.kind === 'hook' && typeof cause.reason === 'string'))) {
    throw new TurnlogError('INVALID_ARGUMENT', 'cause must be { kind: \'user\' } or { kind: \'hook\', reason }', { sessionId, field: 'cause' })
  }
  const r = await store.query('SELECT request::text AS request, state FROM turnlog_request_cancel($1, $2)', [sessionId, JSON.stringify(cause)], sessionId, 'cancel failed')
  const row = r.rows[0] as { request: string; state: 'requested' | 'idle' }
  return { id: row.request, state: row.state }
}
