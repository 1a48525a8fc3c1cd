/**
 * The approval types of the agent's handle (docs/spec/lifecycle.md §9): what `agent.approvals()` lists, what
 * `agent.decide` takes, the `approvals` option. Split from types.ts.
 */

/** An open approval request, as `agent.approvals()` lists it. */
export interface OpenApproval {
  approvalId: string
  callId: string
  /** The tool's name and the requested arguments (the model's raw JSON string). */
  name: string
  arguments: string
  question?: string
  /** Epoch ms (the agent's clock) when it is decided `by: expired`. */
  expiresAt?: number
  session: string
  turn: number
  step: number
  /** Seq of its `tool/approval-requested`. */
  seq: number
}

/**
 * A decision (docs/spec/lifecycle.md §9): approve, optionally with edited arguments (any JSON value: the
 * arguments object the tool's schema validates), or deny with a reason the model reads.
 */
export type ApprovalDecisionInput = { kind: 'approve'; arguments?: unknown } | { kind: 'deny'; reason?: string }

/** `approvals` options (docs/spec/lifecycle.md §9). */
export interface ApprovalOptions {
  /** A steer while approvals are open: `'supersede'` (default) denies them `by: superseded`;
   * `'queue'` keeps them open and the steer waits for the next step. */
  onSteer?: 'supersede' | 'queue'
}
