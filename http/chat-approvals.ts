/**
 * Approval responses in the AI SDK's chat protocol (docs/spec/lifecycle.md §9, ai@6): a client answers an
 * approval part with `addToolApprovalResponse` (the part becomes `approval-responded` with
 * `approval: { id, approved, reason }`) and then sends its messages back (`sendMessage()` or
 * `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`): a POST whose
 * answered message is the assistant's. Each newly answered approval becomes a `decide`; nothing
 * is sent as a user message.
 *
 * Pure: what the body answers (`readApprovalResponses`) and, against the log, what to decide and
 * where the answer's stream continues (`planApprovals`). The handler makes the decisions.
 */
import type { ApprovalBy, ApprovalDecision, LogEvent } from '../events/index.js'
import { approvalsReducer, type ApprovalsState } from '../reducers/approvals.js'
import { HttpError } from './protocol.js'
import { RetryChains } from './retry-chain.js'

/** One answered approval part of the posted message. */
export interface ApprovalResponse { approvalId: string; callId: string; approved: boolean; reason?: string }

/** A chat POST that answers approvals (no user message in it). */
export interface ChatApprovals {
  sessionId: string
  /** The assistant message answered (`turn-N`). */
  messageId: string
  responses: ApprovalResponse[]
  /** Every approval the client shows undecided (requested or answered just now): where its view ends. */
  undecided: string[]
}

type Part = Record<string, unknown>

/** The approval parts of an assistant message as the client posted it; a coded 400 when there is nothing to answer. */
export function readApprovalResponses(sessionId: string, message: { id: string; parts: readonly Part[] }): ChatApprovals {
  const responses: ApprovalResponse[] = []
  const undecided: string[] = []
  for (const p of message.parts) {
    const type = typeof p['type'] === 'string' ? p['type'] : ''
    if (!type.startsWith('tool-') && type !== 'dynamic-tool') continue
    const a = p['approval']
    if (typeof a !== 'object' || a === null) continue
    const { id, approved, reason } = a as Record<string, unknown>
    if (typeof id !== 'string' || id === '' || id.length > 256) throw new HttpError(400, 'BAD_REQUEST', 'chat request: an approval part has no valid approval.id')
    if (p['state'] === 'approval-requested') undecided.push(id)
    if (p['state'] !== 'approval-responded') continue
    if (typeof approved !== 'boolean') throw new HttpError(400, 'BAD_REQUEST', `chat request: approval ${id}: approval.approved must be true or false`)
    if (reason !== undefined && typeof reason !== 'string') throw new HttpError(400, 'BAD_REQUEST', `chat request: approval ${id}: approval.reason must be a string`)
    undecided.push(id)
    responses.push({ approvalId: id, callId: typeof p['toolCallId'] === 'string' ? p['toolCallId'] : '', approved, ...(reason !== undefined ? { reason } : {}) })
  }
  if (responses.length === 0) {
    throw new HttpError(400, 'BAD_REQUEST', `chat request: the answered message ${message.id} is the assistant's and carries no approval response (addToolApprovalResponse); send a user message or answer an approval`)
  }
  return { sessionId, messageId: message.id, responses, undecided }
}

/** The decision a response asks for. */
export function responseDecision(r: ApprovalResponse): ApprovalDecision {
  return r.approved ? { kind: 'approve' } : { kind: 'deny', ...(r.reason !== undefined && r.reason !== '' ? { reason: r.reason } : {}) }
}

/** True when the logged decision is the one the response asks for (a resend after a reload is not an error). */
export function sameDecision(logged: { decision: ApprovalDecision; by: ApprovalBy }, r: ApprovalResponse): boolean {
  if (logged.by.kind !== 'user') return false
  if (r.approved) return logged.decision.kind === 'approve' && logged.decision.arguments === undefined
  return logged.decision.kind === 'deny' && (logged.decision.reason ?? '') === (r.reason ?? '')
}

/** What a POST of approval responses does: the decisions still to make, and its stream. */
export interface ApprovalPlan {
  /** Responses whose approval is open in the log. */
  toDecide: ApprovalResponse[]
  /** Index of the `turn/start` of the turn the approvals belong to (the projection's context). */
  turnIndex: number
  /** The first seq whose chunks the client has not seen: after the last `step/parked` its view ends on. */
  from: number
}

function describe(d: { decision: ApprovalDecision; by: ApprovalBy; seq: number }): string {
  return `${d.decision.kind} by ${d.by.kind} at seq ${d.seq}`
}

/**
 * Checks each response against the log (`events`, as read now): an approval the log has never
 * requested is 404 `UNKNOWN_APPROVAL`; one decided otherwise is 409 `APPROVAL_DECIDED`; one decided
 * exactly so already (a resend) is skipped. The stream continues the turn's message after the last
 * `step/parked` before anything the client has not seen (the first logged decision of an approval
 * it shows undecided), since the client's previous stream ended at a park.
 */
export function planApprovals(events: readonly LogEvent[], body: ChatApprovals): ApprovalPlan {
  const st: ApprovalsState = approvalsReducer.initial()
  // the message a turn belongs to starts at its retry chain's first turn
  const chains = new RetryChains()
  const parks: Array<{ turn: number; seq: number }> = []
  for (const [i, e] of events.entries()) {
    approvalsReducer.apply(st, e)
    chains.push(e, i)
    if (e.type === 'step/parked') parks.push({ turn: (e.data as { turn: number }).turn, seq: e.seq })
  }
  const toDecide: ApprovalResponse[] = []
  let turn: number | null = null
  for (const r of body.responses) {
    const rec = Object.hasOwn(st.byId, r.approvalId) ? st.byId[r.approvalId]! : undefined
    if (rec === undefined || (r.callId !== '' && rec.callId !== r.callId)) {
      throw new HttpError(404, 'UNKNOWN_APPROVAL', `approval ${r.approvalId}${r.callId ? ` of call ${r.callId}` : ''} was never requested in session ${body.sessionId}`)
    }
    turn ??= rec.turn
    if (rec.decision === null) toDecide.push(r)
    else if (!sameDecision(rec.decision, r)) {
      throw new HttpError(409, 'APPROVAL_DECIDED', `approval ${r.approvalId} was already decided (${describe(rec.decision)}): the first decision wins`)
    }
  }
  const turnIndex = chains.headOf.get(turn!) ?? 0
  // where the client's view ends: before the first decision it has not seen
  let unseen = Infinity
  let lastRequest = turnIndex
  for (const id of body.undecided) {
    const rec = Object.hasOwn(st.byId, id) ? st.byId[id]! : undefined
    if (rec === undefined || rec.turn !== turn) continue
    lastRequest = Math.max(lastRequest, rec.seq + 1)
    if (rec.decision !== null) unseen = Math.min(unseen, rec.decision.seq)
  }
  let from = -1
  for (const p of parks) if (p.turn === turn && p.seq < unseen && p.seq >= turnIndex) from = p.seq + 1
  if (from < 0) from = Math.min(lastRequest, unseen === Infinity ? lastRequest : unseen)
  return { toDecide, turnIndex, from }
}
