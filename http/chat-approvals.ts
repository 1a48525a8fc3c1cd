/**
 * Answers in the AI SDK's chat protocol: a client answers an approval part with
 * `addToolApprovalResponse` (docs/spec/lifecycle.md §9, ai@6: the part becomes `approval-responded`
 * with `approval: { id, approved, reason }`), or a client tool's call with `addToolOutput` (§11:
 * the part becomes `output-available` with `output`, or `output-error`), and then sends its
 * messages back (`sendMessage()`, or `sendAutomaticallyWhen:
 * lastAssistantMessageIsCompleteWithApprovalResponses` / `lastAssistantMessageIsCompleteWithToolCalls`):
 * a POST whose answered message is the assistant's. Each newly answered approval becomes a
 * `decide`, each output of a client tool whose round is open an `answer` of that round (`accept`
 * with the output; an `output-error` is a `decline`); nothing is sent as a user message.
 *
 * Pure: what the body answers (`readApprovalResponses`) and, against the log, what to decide and
 * answer and where the answer's stream continues (`planApprovals`). The handler does it.
 */
import { deepEqual } from '../events/deep-equal.js'
import type { ApprovalBy, ApprovalDecision, InputAnswer, InputBy, LogEvent } from '../events/index.js'
import { approvalsReducer, type ApprovalsState } from '../reducers/approvals.js'
import { inputsReducer, type InputRecord } from '../reducers/inputs.js'
import { CLIENT_KEY } from '../tools/input-rounds.js'
import { HttpError } from './protocol.js'
import { RetryChains } from './retry-chain.js'

/** One answered approval part of the posted message. */
export interface ApprovalResponse { approvalId: string; callId: string; approved: boolean; reason?: string }

/** A tool part of the posted message that has an output: the client's answer to a client tool
 * (`addToolOutput`), or an output the server sent (told apart against the log). */
export interface ToolOutputPart { callId: string; kind: 'output'; output: unknown }
export type ClientToolOutput = ToolOutputPart | { callId: string; kind: 'error'; errorText: string }

/** A chat POST that answers approvals or client tools (no user message in it). */
export interface ChatApprovals {
  sessionId: string
  /** The assistant message answered (`turn-N`). */
  messageId: string
  responses: ApprovalResponse[]
  /** Every tool part with an output (`output-available`, `output-error`). */
  outputs: ClientToolOutput[]
  /** Every approval the client shows undecided (requested or answered just now): where its view ends. */
  undecided: string[]
  /** The calls the client shows waiting (`input-available`): a client round among them answered elsewhere is news to it. */
  waiting: string[]
}

type Part = Record<string, unknown>

/** The approval parts of an assistant message as the client posted it; a coded 400 when there is nothing to answer. */
export function readApprovalResponses(sessionId: string, message: { id: string; parts: readonly Part[] }): ChatApprovals {
  const responses: ApprovalResponse[] = []
  const undecided: string[] = []
  const outputs: ClientToolOutput[] = []
  const waiting: string[] = []
  for (const p of message.parts) {
    const type = typeof p['type'] === 'string' ? p['type'] : ''
    if (!type.startsWith('tool-') && type !== 'dynamic-tool') continue
    const callId = typeof p['toolCallId'] === 'string' ? p['toolCallId'] : ''
    if (callId !== '' && p['state'] === 'input-available') waiting.push(callId)
    if (callId !== '' && p['state'] === 'output-available' && p['preliminary'] !== true) outputs.push({ callId, kind: 'output', output: p['output'] })
    if (callId !== '' && p['state'] === 'output-error') outputs.push({ callId, kind: 'error', errorText: typeof p['errorText'] === 'string' ? p['errorText'] : '' })
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
  if (responses.length === 0 && outputs.length === 0) throw nothingToAnswer(message.id)
  return { sessionId, messageId: message.id, responses, outputs, undecided, waiting }
}

function nothingToAnswer(messageId: string): HttpError {
  return new HttpError(400, 'BAD_REQUEST', `chat request: the answered message ${messageId} is the assistant's and carries no approval response (addToolApprovalResponse) and no output of a client tool waiting for one (addToolOutput); send a user message or answer a request`)
}

/** The answer a client tool's part gives its round: `accept` with the output, or `decline` for an error. */
export function outputAnswer(o: ClientToolOutput): InputAnswer {
  return o.kind === 'output' ? { action: 'accept', responses: { [CLIENT_KEY]: o.output } } : { action: 'decline' }
}

/**
 * True when the logged answer does not contradict the part (a resend, or the server's own output
 * echoed back): an output matches an accept by a user with an equal output; an error part never
 * contradicts (it is the client's decline, or the error result the server showed).
 */
export function sameOutput(logged: { answer: InputAnswer; by: InputBy }, o: ClientToolOutput): boolean {
  if (o.kind === 'error') return true
  return logged.by.kind === 'user' && logged.answer.action === 'accept' && deepEqual(logged.answer.responses[CLIENT_KEY], o.output)
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

/** One client tool round to answer with the client's output. */
export interface OutputAnswer { requestId: string; callId: string; output: ClientToolOutput; answer: InputAnswer }

/** What a POST of approval responses and client tool outputs does: the decisions and answers still to make, and its stream. */
export interface ApprovalPlan {
  /** Responses whose approval is open in the log. */
  toDecide: ApprovalResponse[]
  /** Outputs of client tools whose round is open in the log. */
  toAnswer: OutputAnswer[]
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
 * exactly so already (a resend) is skipped. Each output of a call whose client round is open is
 * answered; one whose round was answered otherwise is 409 `INPUT_ANSWERED`; outputs of other calls
 * are the server's own (skipped). A body that answers nothing is a 400. The stream continues the
 * turn's message after the last `step/parked` before anything the client has not seen (the first
 * logged decision or answer of a request it shows open), since its previous stream ended at a park.
 */
export function planApprovals(events: readonly LogEvent[], body: ChatApprovals): ApprovalPlan {
  const st: ApprovalsState = approvalsReducer.initial()
  const inputs = inputsReducer.initial()
  // the message a turn belongs to starts at its retry chain's first turn
  const chains = new RetryChains()
  const parks: Array<{ turn: number; seq: number }> = []
  for (const [i, e] of events.entries()) {
    approvalsReducer.apply(st, e)
    inputsReducer.apply(inputs, e)
    chains.push(e, i)
    if (e.type === 'step/parked') parks.push({ turn: (e.data as { turn: number }).turn, seq: e.seq })
  }
  // each client tool call's round (one per call)
  const clientRound = new Map<string, InputRecord>()
  for (const r of Object.values(inputs.byId)) if (Object.values(r.requests).some((q) => q.kind === 'client')) clientRound.set(r.callId, r)
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
  const toAnswer: OutputAnswer[] = []
  let matched = false
  for (const o of body.outputs) {
    const rec = clientRound.get(o.callId)
    if (rec === undefined) continue // a server tool's output, as the server sent it
    matched = true
    turn ??= rec.turn
    if (rec.answer === null) toAnswer.push({ requestId: rec.requestId, callId: o.callId, output: o, answer: outputAnswer(o) })
    else if (!sameOutput(rec.answer, o)) {
      throw new HttpError(409, 'INPUT_ANSWERED', `the client tool call ${o.callId} (input request ${rec.requestId}) was already answered (${rec.answer.answer.action} by ${rec.answer.by.kind} at seq ${rec.answer.seq}): the first answer wins`)
    }
  }
  if (body.responses.length === 0 && !matched) throw nothingToAnswer(body.messageId)
  const turnIndex = chains.headOf.get(turn!) ?? 0
  // where the client's view ends: before the first decision or answer it has not seen
  let unseen = Infinity
  let lastRequest = turnIndex
  const seenAt = (r: { turn: number; seq: number }, decidedSeq: number | null): void => {
    if (r.turn !== turn) return
    lastRequest = Math.max(lastRequest, r.seq + 1)
    if (decidedSeq !== null) unseen = Math.min(unseen, decidedSeq)
  }
  for (const id of body.undecided) {
    const rec = Object.hasOwn(st.byId, id) ? st.byId[id]! : undefined
    if (rec !== undefined) seenAt(rec, rec.decision?.seq ?? null)
  }
  for (const callId of [...body.waiting, ...toAnswer.map((a) => a.callId)]) {
    const rec = clientRound.get(callId)
    if (rec !== undefined) seenAt(rec, rec.answer?.seq ?? null)
  }
  let from = -1
  for (const p of parks) if (p.turn === turn && p.seq < unseen && p.seq >= turnIndex) from = p.seq + 1
  if (from < 0) from = Math.min(lastRequest, unseen === Infinity ? lastRequest : unseen)
  return { toDecide, toAnswer, turnIndex, from }
}
