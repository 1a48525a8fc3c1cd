/**
 * What a request's answers become, and the errors a client sees (split from handler.ts): an approval
 * response as a decision, a client tool's output as the answer of its round (docs/spec/lifecycle.md
 * §9, §11), and any error as the coded `HttpError` the client gets.
 */
import { TurnlogError } from '../events/errors.js'
import type { ApprovalBy, ApprovalDecision, InputAnswer, InputBy } from '../events/index.js'
import { responseDecision, sameDecision, sameOutput, type ApprovalResponse, type OutputAnswer } from './chat-approvals.js'
import { HttpError } from './protocol.js'
import type { Sessions } from './sessions.js'
import type { SessionTail } from './tail.js'

/**
 * One approval response as a decision (`agent.decide` in-process, `store.decide` with workers).
 * Lost to another decider meanwhile: the same decision is not an error (a resend), another one is
 * 409 `APPROVAL_DECIDED` (once the winner is logged: up to 5 s).
 */
export async function decideResponse(sessions: Sessions, tail: SessionTail, sessionId: string, r: ApprovalResponse): Promise<void> {
  try {
    await sessions.decide(sessionId, r.approvalId, responseDecision(r))
    return
  } catch (err) {
    if (!TurnlogError.is(err)) throw asHttp(err)
    if (err.code === 'UNKNOWN_APPROVAL') throw new HttpError(409, 'UNKNOWN_APPROVAL', err.message)
    if (err.code === 'INVALID_ARGS') throw new HttpError(400, 'INVALID_ARGS', err.message)
    if (err.code !== 'APPROVAL_DECIDED') throw asHttp(err)
  }
  const until = Date.now() + 5_000
  for (let seen = 0; ;) {
    for (; seen < tail.events.length; seen++) {
      const e = tail.events[seen]!
      const d = e.data as { approvalId?: string; decision?: ApprovalDecision; by?: ApprovalBy }
      if (e.type !== 'tool/approval-decided' || d.approvalId !== r.approvalId || !d.decision || !d.by) continue
      if (sameDecision({ decision: d.decision, by: d.by }, r)) return
      throw new HttpError(409, 'APPROVAL_DECIDED', `approval ${r.approvalId} was already decided (${d.decision.kind} by ${d.by.kind} at seq ${e.seq}): the first decision wins`)
    }
    const left = until - Date.now()
    if (left <= 0 || !await tail.wait(seen, undefined, left)) {
      throw new HttpError(409, 'APPROVAL_DECIDED', `approval ${r.approvalId} was already decided by someone else (not logged yet)`)
    }
  }
}

/** An answer's refusal as the client sees it: the agent's or store's words about the answer, with the field. */
export function inputError(err: unknown): HttpError {
  if (!TurnlogError.is(err)) return asHttp(err)
  const status = INPUT_ERRORS[err.code]
  if (status === undefined) return asHttp(err)
  return new HttpError(status, err.code, err.message, {}, undefined, err.field)
}

const INPUT_ERRORS: Readonly<Record<string, number>> = { UNKNOWN_INPUT: 404, INPUT_ANSWERED: 409, INVALID_INPUT: 400, INVALID_ARGUMENT: 400 }

/**
 * A client tool's output as the answer of its round (`agent.answer` in-process, `store.answer`
 * with workers). Lost to another answer meanwhile: the same answer is not an error (a resend),
 * another one is 409 `INPUT_ANSWERED` (once the winner is logged: up to 5 s).
 */
export async function answerOutput(sessions: Sessions, tail: SessionTail, sessionId: string, a: OutputAnswer): Promise<void> {
  try {
    await sessions.answer(sessionId, a.requestId, a.answer)
    return
  } catch (err) {
    if (!TurnlogError.is(err) || err.code !== 'INPUT_ANSWERED') throw inputError(err)
  }
  const until = Date.now() + 5_000
  for (let seen = 0; ;) {
    for (; seen < tail.events.length; seen++) {
      const e = tail.events[seen]!
      const d = e.data as { requestId?: string; answer?: InputAnswer; by?: InputBy }
      if (e.type !== 'tool/input-provided' || d.requestId !== a.requestId || !d.answer || !d.by) continue
      if (sameOutput({ answer: d.answer, by: d.by }, a.output)) return
      throw new HttpError(409, 'INPUT_ANSWERED', `the client tool call ${a.callId} was already answered (${d.answer.action} by ${d.by.kind} at seq ${e.seq}): the first answer wins`)
    }
    const left = until - Date.now()
    if (left <= 0 || !await tail.wait(seen, undefined, left)) {
      throw new HttpError(409, 'INPUT_ANSWERED', `the client tool call ${a.callId} was already answered by someone else (not logged yet)`)
    }
  }
}

/**
 * An error as the client sees it. The handler's own `HttpError`s say what was wrong with the
 * request; anything else (a store's or an agent's error) is answered by its code with a fixed
 * text: its own message may name server paths or carry a database's words, which stay on the
 * server (`onError` gets them for a 5xx).
 */
export function asHttp(err: unknown): HttpError {
  if (err instanceof HttpError) return err
  if (TurnlogError.is(err)) {
    const known = CLIENT_ERRORS[err.code]
    if (known) return new HttpError(known[0], err.code, known[1])
    return new HttpError(500, err.code, 'the request failed on the server')
  }
  return new HttpError(500, 'INTERNAL', 'the request failed on the server')
}

/** Store and agent error codes a client can act on: status and the text it gets. */
const CLIENT_ERRORS: Readonly<Record<string, readonly [number, string]>> = {
  SESSION_NOT_FOUND: [404, 'no such session'],
  INVALID_SESSION_ID: [400, 'invalid session id: use 1–128 of [A-Za-z0-9._-], starting with a letter or digit, without ..'],
  SESSION_OWNED: [409, 'the session is being written by another process'],
  SESSION_EXISTS: [409, 'the session exists already'],
  AGENT_DISPOSED: [503, 'the server is shutting down'],
}
