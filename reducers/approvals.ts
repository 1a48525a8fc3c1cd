/**
 * Approvals (docs/spec/lifecycle.md §9): every request of the log with its decision, the open ones, and the
 * parked position. What `agent.approvals()`, the transcript, `turnlog approvals`, resume and fork
 * read. O(1) per event except a decision, which looks its request up by id (a map).
 */
import { EVENT_DATA, isRunnableCall, type ApprovalBy, type ApprovalDecision, type EventOf, type LogEvent } from '../events/index.js'
import type { Reducer } from './types.js'

/** One request and, once made, its decision. */
export interface ApprovalRecord {
  approvalId: string
  callId: string
  turn: number
  step: number
  /** Seq and time of the `tool/approval-requested`. */
  seq: number
  time: number
  /** The tool name and the requested arguments (raw JSON), from the step's assistant message. */
  name: string
  arguments: string
  question?: string
  expiresAt?: number
  decision: { decision: ApprovalDecision; by: ApprovalBy; seq: number; time: number } | null
}

export interface ApprovalsState {
  /** Every request, in log order, keyed by approval id (insertion order is log order). */
  byId: Record<string, ApprovalRecord>
  /** The ids of the undecided requests, in request order. */
  open: string[]
  /** The `step/parked` the log stands at (nothing but inbox splices after it), or null. */
  parked: { turn: number; step: number; seq: number; time: number; approvals: string[] } | null
  /**
   * The step the log stands parked in, counting decisions made since its last `step/parked` (by a
   * store while no agent ran): a quiescent position that resume restores as it is (docs/spec/lifecycle.md §9),
   * never repaired as a crash. Null once anything but splices and decisions follows.
   */
  waiting: { turn: number; step: number; parkedSeq: number } | null
  /** The open step's tool-call blocks (callId → name and arguments), to name a request's call. */
  calls: Record<string, { name: string; arguments: string }>
}

/**
 * The step's call table, keyed by call ids that are new every step: a dictionary from the start, so
 * each new id is not a new hidden class (a per-step cost for sessions that ask no approval, B5).
 */
function callTable(): Record<string, { name: string; arguments: string }> {
  return Object.create(null) as Record<string, { name: string; arguments: string }>
}

export const approvalsReducer: Reducer<ApprovalsState> = {
  name: 'approvals',
  initial: () => ({ byId: {}, open: [], parked: null, waiting: null, calls: callTable() }),
  apply(draft, event: LogEvent) {
    switch (event.type) {
      case 'step/start':
        draft.calls = callTable()
        break
      case 'assistant/message': {
        const d = (event as EventOf<'assistant/message'>).data
        if (event.surfaceOp !== 'append' || d.interrupted) break
        for (const b of d.message.content) if (isRunnableCall(b)) draft.calls[b.id] = { name: b.name, arguments: b.arguments }
        break
      }
      case 'tool/approval-requested': {
        const d = (event as EventOf<'tool/approval-requested'>).data
        if (Object.hasOwn(draft.byId, d.approvalId)) break // a log the checker refuses; the fold stays total
        const call = Object.hasOwn(draft.calls, d.callId) ? draft.calls[d.callId]! : { name: '', arguments: '' }
        draft.byId[d.approvalId] = {
          approvalId: d.approvalId, callId: d.callId, turn: d.turn, step: d.step, seq: event.seq, time: event.time,
          name: call.name, arguments: call.arguments,
          ...(d.question !== undefined ? { question: d.question } : {}),
          ...(d.expiresAt !== undefined ? { expiresAt: d.expiresAt } : {}),
          decision: null,
        }
        draft.open.push(d.approvalId)
        break
      }
      case 'tool/approval-decided': {
        const d = (event as EventOf<'tool/approval-decided'>).data
        const r = Object.hasOwn(draft.byId, d.approvalId) ? draft.byId[d.approvalId]! : undefined
        if (r !== undefined && r.decision === null) {
          r.decision = { decision: d.decision, by: d.by, seq: event.seq, time: event.time }
          const i = draft.open.indexOf(d.approvalId)
          if (i >= 0) draft.open.splice(i, 1)
        }
        break
      }
      case 'step/parked': {
        const d = (event as EventOf<'step/parked'>).data
        draft.parked = { turn: d.turn, step: d.step, seq: event.seq, time: event.time, approvals: [...d.approvals] }
        draft.waiting = { turn: d.turn, step: d.step, parkedSeq: event.seq }
        return
      }
      default:
        break
    }
    if (draft.parked !== null && endsParking(event.type)) draft.parked = null
    // a decision or an answer (a store gave it while no agent ran) keeps the log waiting: resume
    // restores the step and the decided call or the answered round goes on (docs/spec/lifecycle.md §9, §11).
    // So does what an answered round's body logged next (its next round, or a result of a call that
    // started before the park): a crash there restores the step too, and every other answered round
    // still reaches its body (R11) instead of being closed as unknown; a `tool/call` (a body starting
    // after the park, which a restore could not tell from one that never ran) ends the wait.
    if (draft.waiting !== null && endsParking(event.type) && !KEEPS_WAITING.has(event.type)) draft.waiting = null
  },
}

/** Events after a `step/parked` from which a crashed step is still restored (see `apply`). */
const KEEPS_WAITING = new Set(['tool/approval-decided', 'tool/input-provided', 'tool/input-requested', 'tool/result'])

/**
 * Whether an event of this type ends a parked position: anything but an inbox splice, a schedule
 * event, a fork's `session/end-seed` (a fork at a parked seq keeps the step parked, docs/spec/lifecycle.md
 * "Deliberate choices" 5) and an extension (plugin) event, which L18 lets stand after `step/parked`.
 */
export function endsParking(type: string): boolean {
  return type !== 'agent/inbox/spliced' && type !== 'session/end-seed' && !type.startsWith('schedule/') && Object.hasOwn(EVENT_DATA, type)
}

/** The open requests, in request order. */
export function openApprovals(state: ApprovalsState): ApprovalRecord[] {
  return state.open.map((id) => state.byId[id]!)
}
