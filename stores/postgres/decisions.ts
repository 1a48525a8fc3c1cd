/**
 * Approvals in the PostgreSQL store (docs/spec/lifecycle.md §9: decisions from any machine, with or without a
 * worker running the session; PostgreSQL workers claim sessions whose expiry is due).
 *
 * - `turnlog_decisions` holds one row per decided approval, `PRIMARY KEY (session_id,
 *   approval_id)`: the unique key is the arbiter of "first decision wins" for every decider.
 *   `store.decide` inserts a row (`turnlog_decide`: under the session row's lock, counts it in
 *   `pending` so a worker claims the session, and NOTIFYs `turnlog_input` so a running owner
 *   receives it at once); `logged_seq` stays null until the owner logs it.
 * - The owner's own decisions (`agent.decide` in a worker, the expiry, a steer, a cancel) are
 *   recorded by the append that logs them (`turnlog_append_decided`, the same transaction as the
 *   events): a row for an approval with no row is inserted already logged; a row another decider
 *   inserted first is marked logged when the owner logs **that** decision (and `pending` goes
 *   down); an append that would log a different decision for it is refused (`DECISION_CONFLICT`,
 *   the writer stops, the worker abandons, and the next owner logs the row's decision). The one
 *   exception is `by: canceled` (a cancel, or repair closing an interrupted step): it closes the
 *   step and marks the row logged (the row's decision could not run in a closed step).
 * - `due_at` is the session's ONE next due time: min(the earliest `expiresAt` of the open
 *   requests, folded here, and the next due wakeup, wakeup-due.ts). The writer sets it whenever a
 *   batch moves either (both folded from the stored events the first time, then per batch).
 *   Workers claim an unleased session whose `due_at` has passed (`DUE`), and the resumed agent
 *   decides the expired approvals and fires the due wakeups at once.
 * - Answers of input rounds (docs/spec/lifecycle.md §11) are rows of the same table, keyed by request id (one
 *   id space with approvals: both are the agent's fresh ids), record `{answer, by, time}`:
 *   `store.answer` records them with `turnlog_decide`, the append that logs a `tool/input-provided`
 *   settles them as it does decisions, and the open rounds' `expiresAt` count in `due_at`. Every
 *   reader of decisions skips them (answer-records.ts).
 * - Clock skew: due times in the log are the agent's clock. The writer passes the **delay** from
 *   the batch's own time (its last event's `time`, the same clock) and the function adds it to the
 *   server's `clock_timestamp()`, so `due_at` and every claim and hand-back compare on the
 *   database clock only; an app machine hours off moves a claim by no more than the time between
 *   its batch's events and their commit.
 */
import type { LogEvent } from '../../events/envelope.js'
import type { EventOf } from '../../events/index.js'
import { approvalsReducer, type ApprovalsState } from '../../reducers/approvals.js'
import { inputsReducer, type InputsState } from '../../reducers/inputs.js'
import { isAnswerRow, parseAnswerRecord } from '../answer-records.js'
import { SQLSTATE } from './schema.js'
import { TurnlogError } from '../../events/errors.js'
import { ApprovalBy, ApprovalDecision } from '../../events/approvals.js'
import { z } from 'zod'
import type { AnswerRecord, DecisionRecord } from '../types.js'

/** Raised by `turnlog_append_decided` when a batch logs a decision other than the one recorded first. */
const DECISION_CONFLICT = SQLSTATE.decisionConflict

/** The table, the column, their indexes and the two functions (run by `migrate()` after `MIGRATION`; idempotent). */
export const DECISIONS_MIGRATION = `
CREATE TABLE IF NOT EXISTS turnlog_decisions (
  session_id text NOT NULL,
  approval_id text NOT NULL,
  record json NOT NULL,
  decided_at timestamptz NOT NULL DEFAULT now(),
  logged_seq integer,
  CONSTRAINT turnlog_decisions_session_approval PRIMARY KEY (session_id, approval_id)
);
CREATE INDEX IF NOT EXISTS turnlog_decisions_unlogged ON turnlog_decisions (session_id) WHERE logged_seq IS NULL;
ALTER TABLE turnlog_sessions ADD COLUMN IF NOT EXISTS due_at timestamptz;
CREATE INDEX IF NOT EXISTS turnlog_sessions_due ON turnlog_sessions (due_at) WHERE due_at IS NOT NULL;

CREATE OR REPLACE FUNCTION turnlog_decide(p_session text, p_approval text, p_record json)
RETURNS boolean LANGUAGE plpgsql AS $fn$
DECLARE
  inserted integer;
BEGIN
  PERFORM 1 FROM turnlog_sessions WHERE id = p_session FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no such session' USING ERRCODE = '${SQLSTATE.notFound}';
  END IF;
  INSERT INTO turnlog_decisions (session_id, approval_id, record) VALUES (p_session, p_approval, p_record)
    ON CONFLICT (session_id, approval_id) DO NOTHING;
  GET DIAGNOSTICS inserted = ROW_COUNT;
  IF inserted > 0 THEN
    UPDATE turnlog_sessions SET pending = pending + 1, last_activity = now() WHERE id = p_session;
    PERFORM pg_notify('turnlog_input', p_session);
  END IF;
  RETURN inserted > 0;
END
$fn$;

-- schema 3: the due time is a delay from the batch's own time, anchored on the server's clock
DROP FUNCTION IF EXISTS turnlog_append_decided(text, bigint, integer, json, text[], integer[], integer, json, boolean, bigint);
CREATE FUNCTION turnlog_append_decided(
  p_session text, p_token bigint, p_expected integer, p_events json,
  p_moves text[], p_move_seqs integer[], p_lease_ms integer, p_decided json, p_set_due boolean, p_due_in_ms bigint
) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  n integer;
  d record;
  cur record;
  freed integer := 0;
BEGIN
  n := turnlog_append(p_session, p_token, p_expected, p_events, p_moves, p_move_seqs, p_lease_ms);
  FOR d IN SELECT x->>'approvalId' AS id, (x->>'seq')::integer AS seq, x->'record' AS rec
           FROM json_array_elements(coalesce(p_decided, '[]'::json)) AS x LOOP
    SELECT record, logged_seq INTO cur FROM turnlog_decisions WHERE session_id = p_session AND approval_id = d.id;
    IF NOT FOUND THEN
      INSERT INTO turnlog_decisions (session_id, approval_id, record, logged_seq) VALUES (p_session, d.id, d.rec, d.seq);
    ELSIF cur.logged_seq IS NOT NULL THEN
      RAISE EXCEPTION 'approval % was logged already at seq %', d.id, cur.logged_seq USING ERRCODE = '${DECISION_CONFLICT}';
    ELSIF (cur.record->'decision')::text::jsonb IS NOT DISTINCT FROM (d.rec->'decision')::text::jsonb
          AND (cur.record->'answer')::text::jsonb IS NOT DISTINCT FROM (d.rec->'answer')::text::jsonb
          AND (cur.record->'by')::text::jsonb = (d.rec->'by')::text::jsonb
          OR (d.rec->'by'->>'kind') = 'canceled' THEN
      UPDATE turnlog_decisions SET logged_seq = d.seq WHERE session_id = p_session AND approval_id = d.id;
      freed := freed + 1;
    ELSE
      RAISE EXCEPTION 'approval % was decided first by another decider: that decision is logged, not this one', d.id
        USING ERRCODE = '${DECISION_CONFLICT}';
    END IF;
  END LOOP;
  IF freed > 0 OR p_set_due THEN
    UPDATE turnlog_sessions SET pending = pending - freed,
      due_at = CASE WHEN NOT p_set_due THEN due_at WHEN p_due_in_ms IS NULL THEN NULL ELSE clock_timestamp() + p_due_in_ms * interval '1 millisecond' END
      WHERE id = p_session;
  END IF;
  RETURN n;
END
$fn$;
`

/** The claim condition of an unleased session whose next due time has passed (workers.ts). */
export const DUE = 'due_at <= clock_timestamp()'

/** A decision as the table records it. */
export interface DecisionRow {
  approvalId: string
  decision: EventOf<'tool/approval-decided'>['data']['decision']
  by: EventOf<'tool/approval-decided'>['data']['by']
  time: number
}

type Query = (sql: string, params: unknown[]) => Promise<{ rows: unknown[] }>

/**
 * The writer's view of the session's approvals: which decisions a batch logs, and the session's
 * next expiry after it. Folded from the stored approval events the first time a batch holds one.
 */
export class ApprovalTracker {
  #state: ApprovalsState | null = null
  #inputs: InputsState | null = null

  /** Whether a batch records a decision or an answer, or moves the next expiry. */
  static holds(batch: readonly LogEvent[]): boolean {
    return batch.some((e) => e.type === 'tool/approval-requested' || e.type === 'tool/approval-decided' ||
      e.type === 'tool/input-requested' || e.type === 'tool/input-provided')
  }

  constructor(readonly sessionId: string, readonly query: Query, readonly decode: (text: string, seq: number) => LogEvent) {}

  /**
   * For a batch with approval events (or `force`: a wakeup moved the one due time): the decisions
   * it logs and the next expiry after it (epoch ms or null); `undefined` otherwise.
   */
  async after(batch: readonly LogEvent[], expected: number, force = false): Promise<{ decided: string; dueMs: number | null } | undefined> {
    if (!force && !ApprovalTracker.holds(batch)) return undefined
    if (this.#state === null || this.#inputs === null) {
      const state = approvalsReducer.initial()
      const inputs = inputsReducer.initial()
      const r = await this.query(
        `SELECT seq, event::text AS e FROM turnlog_events
         WHERE session_id = $1 AND seq < $2 AND (event->>'type') IN ('tool/approval-requested', 'tool/approval-decided', 'step/parked', 'step/start', 'step/end',
           'tool/input-requested', 'tool/input-provided')
         ORDER BY seq`,
        [this.sessionId, expected],
      )
      for (const row of r.rows as Array<{ seq: number; e: string }>) {
        const e = this.decode(row.e, row.seq)
        approvalsReducer.apply(state, e)
        inputsReducer.apply(inputs, e)
      }
      this.#state = state
      this.#inputs = inputs
    }
    const decided: Array<{ approvalId: string; seq: number; record: Omit<DecisionRow, 'approvalId'> | Omit<AnswerRecord, 'requestId'> }> = []
    for (const e of batch) {
      approvalsReducer.apply(this.#state, e)
      inputsReducer.apply(this.#inputs, e)
      if (e.type === 'tool/approval-decided') {
        const d = (e as EventOf<'tool/approval-decided'>).data
        decided.push({ approvalId: d.approvalId, seq: e.seq, record: { decision: d.decision, by: d.by, time: e.time } })
      } else if (e.type === 'tool/input-provided') {
        // an answer settles its row as a decision does (keyed by the request id)
        const d = (e as EventOf<'tool/input-provided'>).data
        decided.push({ approvalId: d.requestId, seq: e.seq, record: { answer: d.answer, by: d.by, time: e.time } })
      }
    }
    let due: number | null = null
    for (const id of this.#state.open) {
      const x = this.#state.byId[id]?.expiresAt
      if (x !== undefined && (due === null || x < due)) due = x
    }
    for (const id of this.#inputs.open) {
      const x = this.#inputs.byId[id]?.expiresAt
      if (x !== undefined && (due === null || x < due)) due = x
    }
    return { decided: JSON.stringify(decided), dueMs: due }
  }
}

/**
 * A scalar subquery (for `$1` = the session id): the session's unlogged rows as one JSON text
 * `[{approval_id, record}]` in decision order, or null. `open(id, 'write')` returns it with the
 * lease (decision-channel.ts), so an owner learns them without another statement.
 */
export const UNLOGGED_JSON = `SELECT json_agg(json_build_object('approval_id', d.approval_id, 'record', d.record) ORDER BY d.decided_at)::text
  FROM turnlog_decisions d WHERE d.session_id = $1 AND d.logged_seq IS NULL`

/** Parses `UNLOGGED_JSON`'s text (null: no rows); a malformed row is reported through `onError` and skipped. */
export function parseUnlogged(text: string | null, onError?: (err: unknown) => void, answers?: Map<string, AnswerRecord>): Map<string, DecisionRecord> {
  const out = new Map<string, DecisionRecord>()
  if (text === null) return out
  let rows: unknown
  try {
    rows = JSON.parse(text)
  } catch (err) {
    onError?.(err)
    return out
  }
  for (const row of Array.isArray(rows) ? rows as Array<{ approval_id?: unknown; record?: unknown }> : []) {
    try {
      const id = z.string().parse(row.approval_id)
      if (isAnswerRow(row.record)) {
        // an answer of an input round: the caller's, when it wants them
        answers?.set(id, parseAnswerRecord('?', id, row.record))
        continue
      }
      const rec = RowRecord.parse(row.record)
      out.set(id, { approvalId: id, decision: rec.decision, by: rec.by, time: rec.time })
    } catch (err) {
      onError?.(err)
    }
  }
  return out
}

const RowRecord = z.object({ decision: ApprovalDecision, by: ApprovalBy, time: z.number() })

/** One `turnlog_decisions` row's record (JSON text) as a `DecisionRecord`; throws a coded
 * `INVALID_EVENT` naming the session and approval when it does not parse. */
export function parseRecord(sessionId: string, approvalId: string, text: string): DecisionRecord {
  try {
    const rec = RowRecord.parse(JSON.parse(text))
    return { approvalId, decision: rec.decision, by: rec.by, time: rec.time }
  } catch (err) {
    throw new TurnlogError('INVALID_EVENT', `a recorded decision of session ${sessionId} (approval ${approvalId}) is malformed: ${err instanceof Error ? err.message : String(err)}`,
      { sessionId, info: { approvalId } })
  }
}

/**
 * The session's decisions recorded in `turnlog_decisions` and not logged yet (`logged_seq` null),
 * by approval id: what repair logs instead of `by: canceled` (replay/closers.ts), and what
 * `turnlog approvals` shows as "decided, not logged yet". A row that does not parse is reported
 * through `onError` and skipped (it cannot be logged; the next owner's pull reports it too).
 */
export async function unloggedDecisions(
  query: Query, sessionId: string, onError?: (err: unknown) => void, answers?: Map<string, AnswerRecord>,
): Promise<Map<string, DecisionRecord>> {
  const r = await query(
    'SELECT approval_id, record::text AS record FROM turnlog_decisions WHERE session_id = $1 AND logged_seq IS NULL ORDER BY decided_at',
    [sessionId],
  )
  const out = new Map<string, DecisionRecord>()
  for (const row of r.rows as Array<{ approval_id: string; record: string }>) {
    try {
      const parsed = JSON.parse(row.record) as unknown
      if (isAnswerRow(parsed)) {
        answers?.set(row.approval_id, parseAnswerRecord(sessionId, row.approval_id, parsed))
        continue
      }
      const rec = RowRecord.parse(parsed)
      out.set(row.approval_id, { approvalId: row.approval_id, decision: rec.decision, by: rec.by, time: rec.time })
    } catch (err) {
      onError?.(err)
    }
  }
  return out
}

/** The session's recorded, unlogged answers of input rounds (docs/spec/lifecycle.md §11), by request id. */
export async function unloggedAnswers(query: Query, sessionId: string, onError?: (err: unknown) => void): Promise<Map<string, AnswerRecord>> {
  const answers = new Map<string, AnswerRecord>()
  await unloggedDecisions(query, sessionId, onError, answers)
  return answers
}
