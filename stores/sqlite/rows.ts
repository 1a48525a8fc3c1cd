/**
 * Reading the SQLite store's side tables (`turnlog_decisions`, `turnlog_inbox`) into the shapes
 * the agent, repair and the workers use. A malformed row is reported through `onError` and
 * skipped: it cannot be logged, and the next read reports it again.
 */
import { z } from 'zod'
import { ApprovalBy, ApprovalDecision } from '../../events/approvals.js'
import { TurnlogError } from '../../events/errors.js'
import type { AnswerRecord, DecisionRecord } from '../types.js'
import { isAnswerRow, parseAnswerRecord } from '../answer-records.js'
import type { SqlDb } from './driver.js'
import { sqlError } from './driver.js'

const RowRecord = z.object({ decision: ApprovalDecision, by: ApprovalBy, time: z.number() })

/** One recorded decision's JSON text as a `DecisionRecord` (coded `INVALID_EVENT` when malformed). */
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
 * The session's recorded decisions not logged yet, by approval id, in decision order. Answers of
 * input rounds (rows of the same table, docs/spec/lifecycle.md §11) go to `answers` when given, else are skipped.
 */
export function unloggedDecisions(db: SqlDb, sessionId: string, onError?: (err: unknown) => void, answers?: Map<string, AnswerRecord>): Map<string, DecisionRecord> {
  let rows: Array<{ approval_id: string; record: string }>
  try {
    rows = db.prepare('SELECT approval_id, record FROM turnlog_decisions WHERE session_id = ? AND logged_seq IS NULL ORDER BY decided_at, rowid')
      .all(sessionId) as typeof rows
  } catch (err) {
    throw sqlError(err, sessionId, 'reading the recorded decisions failed')
  }
  const out = new Map<string, DecisionRecord>()
  for (const row of rows) {
    try {
      let parsed: unknown = null
      try {
        parsed = JSON.parse(row.record)
      } catch {
        // not JSON: parseRecord reports it
      }
      if (isAnswerRow(parsed)) answers?.set(row.approval_id, parseAnswerRecord(sessionId, row.approval_id, parsed))
      else out.set(row.approval_id, parseRecord(sessionId, row.approval_id, row.record))
    } catch (err) {
      onError?.(err)
    }
  }
  return out
}

/** The session's recorded answers of input rounds not logged yet, by request id. */
export function unloggedAnswers(db: SqlDb, sessionId: string, onError?: (err: unknown) => void): Map<string, AnswerRecord> {
  const answers = new Map<string, AnswerRecord>()
  unloggedDecisions(db, sessionId, onError, answers)
  return answers
}

/** One unmoved sent message, as the workers' pull reads it (the PostgreSQL row's shape). */
export interface InboxRow { message_id: string; target: string; wake: boolean; message: string }

/** The session's unmoved sent messages, in send order. */
export function unmovedInbox(db: SqlDb, sessionId: string): InboxRow[] {
  const rows = db.prepare('SELECT message_id, target, wake, message FROM turnlog_inbox WHERE session_id = ? AND moved_seq IS NULL ORDER BY n')
    .all(sessionId) as Array<{ message_id: string; target: string; wake: number; message: string }>
  return rows.map((r) => ({ message_id: r.message_id, target: r.target, wake: r.wake !== 0, message: r.message }))
}
