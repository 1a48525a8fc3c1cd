/** The `data` schema of every core event type (docs/spec/events.md "Types" and "Exact shapes"). */
import { z } from 'zod'
import { StreamChunk } from './chunks.js'
import { APPROVAL_EVENT_DATA } from './approvals.js'
import { CHILD_EVENT_DATA } from './children.js'
import { INPUT_EVENT_DATA } from './inputs.js'
import { AssistantMessage, Failure, ToolErrorInfo, ToolResultMessage, Usage, UserMessage } from './messages.js'
import { SCHEDULE_EVENT_DATA } from './schedules.js'

const turnNo = z.number().int().positive()
const stepNo = z.number().int().positive()
const seqNo = z.number().int().nonnegative()

export const RetryCause = z.strictObject({ kind: z.literal('retry'), of: turnNo })
/** A turn that re-runs the `interrupted` turn `of` after a resume (docs/spec/lifecycle.md §8). */
export const ResumeCause = z.strictObject({
  kind: z.literal('resume'),
  of: turnNo,
  /** The limit in force when the turn opened (issue 24): `verify` checks L13 against it. Absent in
   * older logs, which are checked against the checker's option (default 3). */
  maxResumeRuns: z.number().int().positive().optional(),
})
/** Why a turn opened other than by a waking delivery: a retry (§4.6) or a resume (§8). */
export const TurnCause = z.discriminatedUnion('kind', [RetryCause, ResumeCause])
export type TurnCause = z.infer<typeof TurnCause>

export const CancelCause = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('user') }),
  z.strictObject({ kind: z.literal('parent') }),
  z.strictObject({ kind: z.literal('disposed') }),
  z.strictObject({ kind: z.literal('hook'), reason: z.string() }),
])
export type CancelCause = z.infer<typeof CancelCause>

/** The limits a budget can set (docs/spec/lifecycle.md §10; events/budget.ts says what each counts). */
export const BUDGET_LIMITS = ['inputTokens', 'outputTokens', 'totalTokens', 'costUsd', 'toolCalls'] as const
export type BudgetLimitName = (typeof BUDGET_LIMITS)[number]
export const BUDGET_SCOPES = ['turn', 'session'] as const
export type BudgetScope = (typeof BUDGET_SCOPES)[number]

/**
 * A turn ended by a budget (docs/spec/lifecycle.md §10, L20): the limit `which` of the budget of `scope` was
 * reached before a request: `used` (derived from the log) >= `limit`. `unpriced`: calls whose
 * price was unknown (the price function threw), which make a cost limit count as reached.
 * `outside`: the part of `used` that other logs of the session's family recorded (a parent's
 * budget covers its children: on the parent, its children's usage; on a child stopped by an
 * ancestor's budget, the rest of the family's), so `used` = the usage derived from this log +
 * `outside`.
 */
export const BudgetEndReason = z.strictObject({
  kind: z.literal('budget'),
  which: z.enum(BUDGET_LIMITS),
  scope: z.enum(BUDGET_SCOPES),
  limit: z.number().min(0),
  used: z.number().min(0),
  unpriced: z.number().int().positive().optional(),
  outside: z.number().positive().optional(),
})
export type BudgetEndReason = z.infer<typeof BudgetEndReason>

export const TurnEndReason = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('completed') }),
  z.strictObject({ kind: z.literal('max-tokens') }),
  z.strictObject({ kind: z.literal('blocked') }),
  z.strictObject({ kind: z.literal('step-limit') }),
  z.strictObject({ kind: z.literal('aborted'), cause: CancelCause }),
  z.strictObject({ kind: z.literal('error'), failure: Failure }),
  z.strictObject({ kind: z.literal('interrupted') }),
  z.strictObject({ kind: z.literal('forked') }),
  BudgetEndReason,
])
export type TurnEndReason = z.infer<typeof TurnEndReason>

export const StepOutcome = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('tools') }),
  z.strictObject({ kind: z.literal('stop') }),
  z.strictObject({ kind: z.literal('concluded') }),
  z.strictObject({ kind: z.literal('max-tokens') }),
  z.strictObject({ kind: z.literal('aborted') }),
  z.strictObject({ kind: z.literal('failed'), failure: Failure }),
])
export type StepOutcome = z.infer<typeof StepOutcome>

export const InboxTarget = z.enum(['next-turn', 'next-step'])
export type InboxTarget = z.infer<typeof InboxTarget>

export const ToolSpec = z.strictObject({
  name: z.string().min(1),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
})
export type ToolSpec = z.infer<typeof ToolSpec>

/** The call configuration. Open: adapters add their own members (topP, reasoning effort, …). */
export const RequestConfig = z.looseObject({
  model: z.string(),
  temperature: z.number().optional(),
  maxTokens: z.number().int().positive().optional(),
})
export type RequestConfig = z.infer<typeof RequestConfig>

export const EVENT_DATA = {
  'turn/start': z.strictObject({ turn: turnNo, cause: TurnCause.optional() }),
  'turn/end': z.strictObject({ turn: turnNo, reason: TurnEndReason }),
  // -- resume give-up (issue 24, docs/spec/lifecycle.md §8): begin
  /** Resume stopped re-running an interrupted turn (or re-inserting its messages): the durable
   * record of the give-up. `messages`: the acknowledged ids (the originals, not resume copies) it
   * leaves unanswered. `runs` / `unreachedRuns`: the chain's resume runs that reached / did not reach
   * their model request; `maxResumeRuns`: the limit in force. */
  'resume/given-up': z.strictObject({
    turn: turnNo,
    reason: z.enum(['resume-runs', 'unreached-runs', 're-insertions']),
    runs: z.number().int().nonnegative(),
    unreachedRuns: z.number().int().nonnegative(),
    maxResumeRuns: z.number().int().positive(),
    messages: z.array(z.string().min(1)),
  }),
  // -- resume give-up: end
  'step/start': z.strictObject({ turn: turnNo, step: stepNo }),
  'step/end': z.strictObject({ turn: turnNo, step: stepNo, outcome: StepOutcome }),
  'user/message': z.strictObject({ message: UserMessage }),
  'assistant/chunk': z.strictObject({ turn: turnNo, step: stepNo, chunk: StreamChunk }),
  'assistant/message': z.strictObject({
    turn: turnNo,
    step: stepNo,
    message: AssistantMessage,
    usage: Usage.optional(),
    finish: z.enum(['stop', 'tool-calls', 'max-tokens', 'refusal']),
    interrupted: z.literal(true).optional(),
    /** issue 23 (bridge): a refusal's explanation by the provider (finish `refusal` only). */
    explanation: z.string().optional(),
  }),
  'tool/call': z.strictObject({ turn: turnNo, step: stepNo, callId: z.string().min(1), name: z.string(), arguments: z.string() }),
  'tool/result': z.strictObject({
    turn: turnNo,
    step: stepNo,
    callId: z.string().min(1),
    message: ToolResultMessage,
    error: ToolErrorInfo.optional(),
    /**
     * The tool returned a value that is not text (an object, an array, a number…): the message's
     * one text block is that value's JSON, and a UI shows the value itself (issue 38 item 6).
     * Absent for text, rich `{content}` outputs and errors.
     */
    json: z.literal(true).optional(),
  }),
  'request/header': z.strictObject({
    reason: z.enum(['initial', 'resume', 'change']),
    config: RequestConfig,
    system: z.string(),
    tools: z.array(ToolSpec),
    /** issue 23 (bridge): the provider of the model (`ModelInfo.provider`), for spans. */
    provider: z.string().optional(),
  }),
  'agent/inbox/spliced': z.strictObject({
    target: InboxTarget,
    start: z.number().int().nonnegative(),
    removedCount: z.number().int().positive().optional(),
    inserted: z.array(UserMessage),
    outcome: z.literal('canceled').optional(),
  }),
  'llm/retry': z.strictObject({
    turn: turnNo,
    step: stepNo,
    attempt: z.number().int().positive(),
    delayMs: z.number().nonnegative(),
    failure: Failure,
  }),
  'compaction/start': z.strictObject({ compactionId: z.string().min(1), turn: z.number().int().nonnegative() }),
  'compaction/summary': z.strictObject({
    compactionId: z.string().min(1),
    summary: z.string(),
    shadowedSeqs: z.array(seqNo),
    usage: Usage.optional(),
  }),
  'compaction/prune': z.strictObject({ callId: z.string().min(1), shadowedSeq: seqNo, originalChars: z.number().int().nonnegative() }),
  'compaction/end': z.strictObject({ compactionId: z.string().min(1), error: ToolErrorInfo.optional() }),
  'session/end-seed': z.strictObject({}),
  // approvals (docs/spec/lifecycle.md §9): events/approvals.ts
  ...APPROVAL_EVENT_DATA,
  // wakeups (docs/spec/lifecycle.md §10): events/schedules.ts
  ...SCHEDULE_EVENT_DATA,
  // child sessions (docs/spec/lifecycle.md §10): events/children.ts
  ...CHILD_EVENT_DATA,
  // input requests (docs/spec/lifecycle.md §11): events/inputs.ts
  ...INPUT_EVENT_DATA,
} as const

export type EventDataMap = { [K in keyof typeof EVENT_DATA]: z.infer<(typeof EVENT_DATA)[K]> }
export type CoreEventType = keyof EventDataMap

/** The three types whose events carry `surfaceOp` and `sourceEventSeqs` (docs/spec/events.md "The surface"). */
export const SURFACE_TYPES: ReadonlySet<string> = new Set(['user/message', 'assistant/message', 'tool/result'])
