/**
 * One tool call as the scheduler tracks it: its position in the per-call machine (`callTransition`,
 * the pure form of `callMachine`), what it resolved to, and how far it got (started, settled,
 * committed).
 */
import type { ApprovalBy, ApprovalDecision, InputAnswer, InputBy, InputRequests, ToolCallBlock, ToolErrorInfo } from '../events/index.js'
import { callTransition, initialCallSnapshot, type CallEvent, type CallSnapshot } from './call-machine.js'
import type { PreparedCall } from './define.js'
import type { ToolOutcome } from './types.js'

/** A call's request for a person's decision (docs/spec/lifecycle.md §9). */
export interface CallApproval {
  readonly id: string
  /** Asked by a `tools/pre-execute` `ask` (after its `tool/call`), not by `needsApproval`. */
  readonly ask: boolean
  readonly expiresAt?: number
  decided: { decision: ApprovalDecision; by: ApprovalBy } | null
}

/** A call's current input round (docs/spec/lifecycle.md §11). */
export interface CallRound {
  readonly requestId: string
  readonly round: number
  readonly requests: InputRequests
  readonly state?: unknown
  readonly expiresAt?: number
  /** A client tool's round: its accepted response is the call's result. */
  readonly client: boolean
  answered: { answer: InputAnswer; by: InputBy } | null
}

export interface CallRec {
  readonly index: number
  /** The model's call; an approval with edited arguments replaces it (the `tool/call` carries those). */
  call: ToolCallBlock
  /** The model's call as requested (the arguments a denied call's `tool/call` carries). */
  readonly requested: ToolCallBlock
  /** Its approval request, once made. */
  approval: CallApproval | null
  /** Its current input round, once it asked one (docs/spec/lifecycle.md §11). */
  input: CallRound | null
  /**
   * Refused before it ran: `needsApproval` threw or answered a non-boolean (`HOOK_ERROR`), or a
   * `toolCalls` budget is spent (`BUDGET`). The call's result; no pre-execute, no body.
   */
  approvalProblem: ToolErrorInfo | null
  /** Resolves when its `tools/pre-execute` verdict is known (an `ask` included, before its decision). */
  verdict: Promise<void> | null
  /** The call's lifecycle position (`callTransition`, the pure form of `callMachine`). */
  machine: CallSnapshot
  prepared: PreparedCall | null
  /** Seq of its `tool/call`; null while not started. */
  callSeq: number | null
  /** Set when the call settles (its body ended, or it did not run). */
  outcome: ToolOutcome | null
  /** Its outcome was restored from a crash (restore-calls.ts): committed as is, no post-execute. */
  restoredOutcome: boolean
  committed: boolean
  /** `appendResult` was tried for it (a throw there makes its own outcome suspect). */
  commitTried: boolean
  concludeRequested: boolean
  controller: AbortController | null
}

/** A call not started yet. */
export function newCallRec(call: ToolCallBlock, index: number): CallRec {
  return {
    index,
    call,
    requested: call,
    approval: null,
    input: null,
    approvalProblem: null,
    verdict: null,
    machine: initialCallSnapshot(),
    prepared: null,
    callSeq: null,
    outcome: null,
    restoredOutcome: false,
    committed: false,
    commitTried: false,
    concludeRequested: false,
    controller: null,
  }
}

/**
 * Moves the call's machine. An event its state does not accept leaves it where it is, as an XState
 * actor ignores such an event (callMachine's own semantics); the scheduler's 'at most one result
 * per call' (L5) rests on `committed`/`commitTried`, not on this.
 */
export function send(rec: CallRec, event: CallEvent): void {
  rec.machine = callTransition(rec.machine, rec.call.name, event)
}
