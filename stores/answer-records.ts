/**
 * Answers of input rounds in the stores' decision side channels (docs/spec/lifecycle.md §11: an answer travels
 * the same channels as an approval decision). A side table or claim directory keyed by id holds
 * both kinds: a request id and an approval id are both the agent's fresh ids, so they never meet.
 * A row whose record holds `answer` is an answer; every reader of decisions skips those.
 */
import { z } from 'zod'
import { TurnlogError } from '../events/errors.js'
import { InputAnswer, InputBy } from '../events/inputs.js'
import type { AnswerRecord } from './types.js'

/** An answer's record as a side table holds it (the id is the row's key). */
export const AnswerRow = z.object({ requestId: z.string().optional(), answer: InputAnswer, by: InputBy, time: z.number() })

/** True when a parsed side-channel record is an answer (it has `answer`), not a decision. */
export function isAnswerRow(rec: unknown): boolean {
  return typeof rec === 'object' && rec !== null && Object.hasOwn(rec, 'answer')
}

/** One answer row's record (JSON text) as an `AnswerRecord`; coded `INVALID_EVENT` naming the session and request when malformed. */
export function parseAnswerRecord(sessionId: string, requestId: string, text: string | unknown): AnswerRecord {
  try {
    const rec = AnswerRow.parse(typeof text === 'string' ? JSON.parse(text) : text)
    return { requestId, answer: rec.answer, by: rec.by, time: rec.time }
  } catch (err) {
    throw new TurnlogError('INVALID_EVENT', `a recorded answer of session ${sessionId} (input request ${requestId}) is malformed: ${err instanceof Error ? err.message : String(err)}`,
      { sessionId, info: { requestId } })
  }
}

/** True when two answers are the same (a retry, or the owner logging the claim it read). */
export function sameAnswer(a: Pick<AnswerRecord, 'answer' | 'by'>, b: Pick<AnswerRecord, 'answer' | 'by'>): boolean {
  return JSON.stringify(canon([a.answer, a.by])) === JSON.stringify(canon([b.answer, b.by]))
}

/** A JSON value with its object keys sorted (so equal answers compare equal as text). */
function canon(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canon)
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(v).sort()) out[k] = canon((v as Record<string, unknown>)[k])
    return out
  }
  return v
}
