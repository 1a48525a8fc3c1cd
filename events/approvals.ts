/**
 * The approval vocabulary (docs/spec/lifecycle.md §9, docs/spec/events.md): `tool/approval-requested`,
 * `tool/approval-decided`, `step/parked`, the decision and who made it. Kept in its own file so
 * that the core table (data.ts) only spreads it in.
 */
import { z } from 'zod'

const turnNo = z.number().int().positive()
const stepNo = z.number().int().positive()

/** An approval's id: unique in its session. */
export const ApprovalId = z.string().min(1)
export type ApprovalId = string

/**
 * A person's (or the agent's) decision. `arguments` of an approval replaces the requested
 * arguments: the raw JSON string the call then carries in its `tool/call` (validated against the
 * tool's schema when the decision was made).
 */
export const ApprovalDecision = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('approve'), arguments: z.string().optional() }),
  z.strictObject({ kind: z.literal('deny'), reason: z.string().optional() }),
])
export type ApprovalDecision = z.infer<typeof ApprovalDecision>

/**
 * Who decided: a person (`user`, optionally naming them), the clock (`expired`), new input
 * (`superseded`, a steer while parked) or a cancel (`canceled`, also repair's closers).
 */
export const ApprovalBy = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('user'), id: z.string().optional() }),
  z.strictObject({ kind: z.literal('expired') }),
  z.strictObject({ kind: z.literal('superseded') }),
  z.strictObject({ kind: z.literal('canceled') }),
])
export type ApprovalBy = z.infer<typeof ApprovalBy>

/** The result code a denial leads to, by who denied (docs/spec/invariants.md L17). */
export function denialCode(by: ApprovalBy): 'DENIED' | 'APPROVAL_EXPIRED' | 'ABORTED_BEFORE_DISPATCH' {
  return by.kind === 'expired' ? 'APPROVAL_EXPIRED' : by.kind === 'canceled' ? 'ABORTED_BEFORE_DISPATCH' : 'DENIED'
}

export const APPROVAL_EVENT_DATA = {
  'tool/approval-requested': z.strictObject({
    turn: turnNo,
    step: stepNo,
    callId: z.string().min(1),
    approvalId: ApprovalId,
    question: z.string().optional(),
    /** Epoch ms (the agent's clock) after which the request is decided `by: expired`. */
    expiresAt: z.number().int().nonnegative().optional(),
  }),
  'tool/approval-decided': z.strictObject({
    turn: turnNo,
    step: stepNo,
    callId: z.string().min(1),
    approvalId: ApprovalId,
    decision: ApprovalDecision,
    by: ApprovalBy,
  }),
  'step/parked': z.strictObject({ turn: turnNo, step: stepNo, approvals: z.array(ApprovalId).min(1) }),
} as const
