/**
 * The input-request vocabulary (docs/spec/lifecycle.md §11, docs/spec/events.md): a tool call asks a
 * person (or the client) for data in rounds. `tool/input-requested` opens a round, `tool/input-provided`
 * answers it. Kept in its own file so that the core table (data.ts) only spreads it in.
 */
import { z } from 'zod'
import { ApprovalBy } from './approvals.js'

const turnNo = z.number().int().positive()
const stepNo = z.number().int().positive()

/** An input request's id: unique in its session, sharing the approvals' namespace (`step/parked` lists both). */
export const InputRequestId = z.string().min(1)
export type InputRequestId = string

/**
 * One thing asked of a person: a form (a JSON Schema of an object), a line of text, a choice among
 * options, a URL step (sign-in, payment), or the result of a client tool (`client`).
 */
export const InputRequest = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('form'), message: z.string(), schema: z.record(z.string(), z.unknown()) }),
  z.strictObject({ kind: z.literal('text'), message: z.string() }),
  z.strictObject({ kind: z.literal('choice'), message: z.string(), options: z.array(z.string()).min(1) }),
  z.strictObject({ kind: z.literal('url'), message: z.string(), url: z.string().min(1) }),
  z.strictObject({ kind: z.literal('client'), message: z.string().optional() }),
])
export type InputRequest = z.infer<typeof InputRequest>

/** A round's requests by key (at least one). */
export const InputRequests = z.record(z.string().min(1), InputRequest).refine((r) => Object.keys(r).length > 0, 'a round asks at least one request')
export type InputRequests = Record<string, InputRequest>

/**
 * The answer to a round: `accept` with one response per requested key, `decline` (the person said
 * no), or `cancel` (nobody will answer: an expiry, a steer, a cancel, or the person dismissed it).
 */
export const InputAnswer = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('accept'), responses: z.record(z.string(), z.unknown()) }),
  z.strictObject({ action: z.literal('decline') }),
  z.strictObject({ action: z.literal('cancel') }),
])
export type InputAnswer = z.infer<typeof InputAnswer>

/** Who answered: a person, the clock (`expired`), new input (`superseded`) or a cancel (`canceled`). */
export const InputBy = ApprovalBy
export type InputBy = z.infer<typeof InputBy>

/** What the answer of a client tool's round leads to when it is not an accept (docs/spec/lifecycle.md §11). */
export function clientRefusalCode(by: InputBy): 'INPUT_EXPIRED' | 'ABORTED' | 'DENIED' {
  if (by.kind === 'expired') return 'INPUT_EXPIRED'
  if (by.kind === 'canceled') return 'ABORTED'
  return 'DENIED' // a person declined or dismissed it, or new input superseded it
}

export const INPUT_EVENT_DATA = {
  'tool/input-requested': z.strictObject({
    turn: turnNo,
    step: stepNo,
    callId: z.string().min(1),
    requestId: InputRequestId,
    /** 1 for a call's first round, then previous + 1 (L21). */
    round: z.number().int().positive(),
    requests: InputRequests,
    /** Opaque JSON the body gets back with the answer (size-capped by the agent). */
    state: z.unknown().optional(),
    /** Epoch ms (the agent's clock) after which the round is answered `cancel` `by: expired`. */
    expiresAt: z.number().int().nonnegative().optional(),
  }),
  'tool/input-provided': z.strictObject({
    turn: turnNo,
    step: stepNo,
    callId: z.string().min(1),
    requestId: InputRequestId,
    round: z.number().int().positive(),
    answer: InputAnswer,
    by: InputBy,
  }),
} as const
