/**
 * The agent's side of approvals (docs/spec/lifecycle.md §9): the `ApprovalEnv` a step hands the tool scheduler
 * (appends of requests, decisions and `step/parked`; the `parked` status), and the checks of a
 * decision before it reaches the step (`agent.decide`). A refused decision logs nothing.
 */
import { checkInputSize } from '../events/input-size.js'
import {
  TurnlogError, findLossy,
  type ApprovalBy, type ApprovalDecision, type EventDraft, type LogEvent, type ToolCallBlock,
} from '../events/index.js'
import type { ApprovalsState } from '../reducers/approvals.js'
import { parseArguments, validateArguments } from '../tools/define.js'
import type { AnyTool, ApprovalEnv, ApprovalRun } from '../tools/types.js'
import type { ApprovalDecisionInput, HookName, OpenApproval } from './types.js'
import type { ClaimedDecisions } from './claimed-decisions.js'

/** What the approvals need of their agent. */
export interface ApprovalHost {
  readonly sessionId: string
  readonly tools: ReadonlyMap<string, AnyTool>
  readonly approvalsState: ApprovalsState
  readonly newId: () => string
  /** The running step's approvals, or null. */
  approvalRun: ApprovalRun | null
  /** A recorded id for a new request (a re-run), else null/undefined: drawn from `newId`. */
  readonly approvalIdFor?: ((turn: number, step: number, callId: string) => string | undefined) | null
  /** The store's decision side channel (claims, and decisions other processes claimed). */
  readonly claimed?: ClaimedDecisions
  now(): number
  /** This session's events durable, or null when they are already (agent.ts `durableWait`). */
  durableWait(): Promise<void> | null
  append(draft: EventDraft): LogEvent
  emit(name: HookName, payload: unknown): void
  /** Parks (status `parked`, the machines' parked states) or unparks the running step. */
  setParked(parked: boolean): void
  decidingHookCount(name: HookName): number
}

/** The env of one step's approvals. */
export function approvalEnv(agent: ApprovalHost, turn: number, step: number): ApprovalEnv {
  return {
    request: (call: ToolCallBlock, question, timeoutMs) => {
      const approvalId = agent.approvalIdFor?.(turn, step, call.id) ?? agent.newId()
      // one reading of the clock: the request's time, and its expiry counted from it (so that the
      // log says `expiresAt = time + timeoutMs`, and a re-execution on the recorded clock gets the same)
      const now = agent.now()
      const expiresAt = timeoutMs !== undefined ? Math.ceil(now + timeoutMs) : undefined
      const e = agent.append({
        type: 'tool/approval-requested',
        data: {
          turn, step, callId: call.id, approvalId,
          ...(question !== undefined ? { question } : {}),
          ...(expiresAt !== undefined ? { expiresAt } : {}),
        },
        ...(expiresAt !== undefined ? { time: now } : {}),
      } as EventDraft)
      const approval: OpenApproval = {
        approvalId, callId: call.id, name: call.name, arguments: call.arguments, session: agent.sessionId, turn, step, seq: e.seq,
        ...(question !== undefined ? { question } : {}),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
      }
      agent.emit('agent/approval', { approval })
      return expiresAt !== undefined ? { approvalId, expiresAt } : { approvalId }
    },
    claim: (approvalId, decision, by) => agent.claimed?.claim(approvalId, decision, by) ?? { won: true, decision, by },
    appendDecision: (call, approvalId, decision, by) => {
      agent.append({ type: 'tool/approval-decided', data: { turn, step, callId: call.id, approvalId, decision, by } })
    },
    park: (approvals) => {
      agent.append({ type: 'step/parked', data: { turn, step, approvals } })
      agent.setParked(true)
      agent.claimed?.deliverSoon()
    },
    unpark: () => agent.setParked(false),
    parkedAlready: () => {
      agent.setParked(true)
      agent.claimed?.deliverSoon()
    },
    now: () => agent.now(),
    durable: () => agent.durableWait(),
    // only a listener that can answer `ask` makes the start loop wait for verdicts (a pass-through
    // re-execution gate does not: the recorded process did not wait either)
    askable: agent.decidingHookCount('tools/pre-execute') > 0,
    attach: (run) => {
      agent.approvalRun = run
      if (run !== null) agent.claimed?.deliverSoon()
    },
  }
}

/** The open requests of the log (the live fold), as `agent.approvals()` lists them. */
export function openApprovalList(agent: Pick<ApprovalHost, 'approvalsState' | 'sessionId'>): OpenApproval[] {
  const s = agent.approvalsState
  return s.open.map((id) => {
    const r = s.byId[id]!
    return {
      approvalId: r.approvalId, callId: r.callId, name: r.name, arguments: r.arguments, session: agent.sessionId,
      turn: r.turn, step: r.step, seq: r.seq,
      ...(r.question !== undefined ? { question: r.question } : {}),
      ...(r.expiresAt !== undefined ? { expiresAt: r.expiresAt } : {}),
    }
  })
}

/**
 * A decision as the log records it, from what a caller passed (user data: read inside a guard).
 * `INVALID_ARGUMENT` for something that is not a decision; edited arguments become their JSON text.
 */
export function toDecision(input: unknown): ApprovalDecision {
  let kind: unknown
  let args: unknown
  let reason: unknown
  try {
    kind = (input as { kind?: unknown } | null)?.kind
    args = (input as { arguments?: unknown }).arguments
    reason = (input as { reason?: unknown }).reason
  } catch (err) {
    throw new TurnlogError('INVALID_ARGUMENT', `a decision must be { kind: 'approve' | 'deny', … }: ${String(err)}`, { field: 'decision' })
  }
  if (kind === 'deny') {
    if (reason !== undefined && typeof reason !== 'string') throw new TurnlogError('INVALID_ARGUMENT', 'a denial\'s reason must be a string', { field: 'decision.reason' })
    if (reason !== undefined) checkInputSize(reason, 'decision.reason')
    return reason === undefined ? { kind: 'deny' } : { kind: 'deny', reason }
  }
  if (kind !== 'approve') throw new TurnlogError('INVALID_ARGUMENT', `a decision's kind is 'approve' or 'deny', not ${JSON.stringify(kind) ?? String(kind)}`, { field: 'decision.kind' })
  if (args === undefined) return { kind: 'approve' }
  if (typeof args === 'string') checkInputSize(args, 'decision.arguments')
  const lossy = findLossy(args, 'arguments')
  if (lossy) throw new TurnlogError('INVALID_ARGS', `edited arguments must be JSON: ${lossy.why} at ${lossy.path}`, { field: 'decision.arguments' })
  const text = JSON.stringify(args)
  // the same limit as every store's (events/input-size.ts)
  checkInputSize(text, 'decision.arguments')
  return { kind: 'approve', arguments: text }
}

/**
 * Checks and applies a decision to the running step. Refusals are coded and log nothing:
 * `UNKNOWN_APPROVAL`, `APPROVAL_DECIDED`, `INVALID_ARGS`.
 */
export function applyDecision(agent: ApprovalHost, approvalId: string, decision: ApprovalDecision, by: ApprovalBy): void {
  const where = { sessionId: agent.sessionId, field: 'approvalId', info: { approvalId } }
  const rec = typeof approvalId === 'string' && Object.hasOwn(agent.approvalsState.byId, approvalId) ? agent.approvalsState.byId[approvalId]! : undefined
  if (rec === undefined) throw new TurnlogError('UNKNOWN_APPROVAL', `no approval ${JSON.stringify(approvalId)} was requested in session ${agent.sessionId}`, where)
  if (rec.decision !== null) {
    throw new TurnlogError('APPROVAL_DECIDED', `approval ${approvalId} was already decided (${rec.decision.decision.kind} by ${rec.decision.by.kind}, seq ${rec.decision.seq})`, { ...where, seq: rec.decision.seq })
  }
  const run = agent.approvalRun
  const open = run?.open().find((o) => o.approvalId === approvalId)
  if (run === null || open === undefined) {
    throw new TurnlogError('UNKNOWN_APPROVAL', `approval ${approvalId} is open in the log, but no step of this agent waits for it`, { ...where, seq: rec.seq })
  }
  if (decision.kind === 'approve' && decision.arguments !== undefined) {
    if (open.provider === true) {
      throw new TurnlogError('INVALID_ARGS', `approval ${approvalId} is for a call the provider runs (${open.name}): the provider keeps its own arguments, so they cannot be edited`, { ...where, field: 'decision.arguments', seq: rec.seq })
    }
    if (open.ask) {
      throw new TurnlogError('INVALID_ARGS', `approval ${approvalId} was asked by tools/pre-execute after its tool/call was logged: its arguments cannot be edited`, { ...where, field: 'decision.arguments', seq: rec.seq })
    }
    const tool = agent.tools.get(open.name)
    const v = tool === undefined ? null : validateArguments(tool, parseArguments(decision.arguments))
    if (v !== null && !v.ok) throw new TurnlogError('INVALID_ARGS', v.error.message, { ...where, field: 'decision.arguments', seq: rec.seq })
  }
  const r = run.decide(approvalId, decision, by)
  if (r === 'lost') throw new TurnlogError('APPROVAL_DECIDED', `approval ${approvalId} was already decided by another process (that decision was logged)`, where)
  if (r === 'already-decided') throw new TurnlogError('APPROVAL_DECIDED', `approval ${approvalId} was already decided`, where)
  if (r === 'unknown') throw new TurnlogError('UNKNOWN_APPROVAL', `no step of this agent waits for approval ${approvalId}`, where)
}

/** Checks `options.by` of `agent.decide`: a person, optionally named. */
export function toBy(by: unknown): ApprovalBy {
  if (by === undefined) return { kind: 'user' }
  let kind: unknown
  let id: unknown
  try {
    kind = (by as { kind?: unknown }).kind
    id = (by as { id?: unknown }).id
  } catch {
    kind = undefined
  }
  if (kind !== 'user' || (id !== undefined && typeof id !== 'string')) {
    throw new TurnlogError('INVALID_ARGUMENT', "a decision's by is { kind: 'user', id?: string }", { field: 'by' })
  }
  return id === undefined ? { kind: 'user' } : { kind: 'user', id }
}

export type { ApprovalDecisionInput }
