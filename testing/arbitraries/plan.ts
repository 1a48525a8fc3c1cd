/**
 * The decisions a valid log is built from. A plan says what the app, the hooks, the model and
 * the tools *would like* to do; the builder (builder.ts) follows it where the state allows and
 * adapts it otherwise (an edit of an empty inbox is skipped, a step owed after the last planned
 * one gets a plain reply), so every plan yields a valid log. Plans shrink structurally: fewer
 * turns, fewer steps, simpler step kinds.
 */
import fc from 'fast-check'
import type { CancelCause } from '../../events/data.js'
import type { Block, Failure, MessageSource } from '../../events/messages.js'
import { arbBlock, arbFailure, arbStreamPlan, arbText, TRANSIENT_FAILURE_CODES, type StreamPlan } from './blocks.js'

/** A message to deliver; the builder gives it a fresh id. */
export interface MsgSeed {
  content: Block[]
  source: MessageSource
}

export type InboxOpPlan =
  | { op: 'send'; target: 'next-turn' | 'next-step'; head: boolean; messages: MsgSeed[] }
  | { op: 'replace'; pick: number; message: MsgSeed }
  | { op: 'remove'; pick: number }
  | { op: 'splice'; target: 'next-turn' | 'next-step'; start: number; deleteCount: number; messages: MsgSeed[] }
  | { op: 'clear' }

export interface CompactionPlan {
  /** Picks of current tool results to prune (modulo the candidates). */
  prunes: number[]
  summary: 'none' | 'ok' | 'fail'
  /** Picks the end of the summarised range (modulo the candidates). */
  rangeEnd: number
  summaryText: string
  summaryUsage: boolean
}

export type IdleItem =
  | { op: 'inbox'; inbox: InboxOpPlan }
  | { op: 'compact'; compaction: CompactionPlan }
  /** A fork (`fork: true`, empty inbox) or a resume at an idle point: `session/end-seed`. */
  | { op: 'seed'; fork: boolean }

export type StepKind =
  | 'stop' | 'tools' | 'max-tokens' | 'fail' | 'hook-fail' | 'abort-stream' | 'abort-tools' | 'crash' | 'fork'

export const TOOL_ERROR_CODES = [
  'UNKNOWN_TOOL', 'INVALID_ARGS', 'INVALID_TOOL_OUTPUT', 'TOOL_TIMEOUT', 'TOOL_ERROR', 'DENIED',
] as const

export interface ToolPlan {
  /** null: a normal result; else the error code of the result. */
  error: string | null
  output: string
  /** Additional contexts the post-execute hook queues into next-step. */
  contexts: MsgSeed[]
  /** When aborted while running: result `ABORTED` (else the body finished). */
  abortedWhileRunning: boolean
}

export interface StepPlan {
  /** The pre-step decision: enter the batch (+ a hook message), reject, throw, or enter([]). */
  preStep: 'enter' | 'enter+hook' | 'reject' | 'throw' | 'empty'
  hookMessage: MsgSeed
  /** Pressure compaction in pre-step (before the step opens). */
  compaction: CompactionPlan | null
  /** Whether the request configuration changes (`request/header` reason `change`). */
  configChange: { model: string; temperature: number } | null
  kind: StepKind
  stream: StreamPlan
  tools: ToolPlan[]
  /** Width of the tool pool (1 = serial), and picks that interleave starts and commits. */
  pool: number
  schedule: number[]
  concluded: boolean
  failure: Failure
  /** A failure ends the stream with an in-band `finish {error|aborted}` instead of breaking off. */
  inBandFinish: boolean
  recovery: 'terminal' | 'retry' | 'overflow' | 'cancel' | 'retry-then-cancel' | 'crash'
  retryDelayMs: number
  /** How many following retry turns fail the same way (a failure chain longer than one). */
  persists: number
  cancel: CancelCause
  keepInbox: boolean
  /** For abort-tools / crash / fork: how far the tool phase (or the stream) got. */
  cutAt: number
  /** Inbox operations during the step, at event offsets. */
  sends: Array<{ at: number; inbox: InboxOpPlan }>
  /** After a `stop`/`concluded`/`max-tokens` step with nothing pending: the turn-stopping hook. */
  afterStop: 'complete' | 'steer' | 'inject'
  stopMessage: MsgSeed
  /** After a crash: resume (`session/end-seed`) right away. */
  seedAfter: boolean
}

export interface TurnPlan {
  /** What happens while idle before the turn. */
  idle: IdleItem[]
  /** How the turn is woken: a followup (next-turn), a steer (next-step), or what is queued. */
  wake: 'followup' | 'steer' | 'queued'
  wakeMessage: MsgSeed
  steps: StepPlan[]
}

export interface LogPlan {
  turns: TurnPlan[]
  trailing: IdleItem[]
  clockSeed: number
  startTime: number
}

export interface PlanOptions {
  maxTurns: number
  /** Most step plans per turn. */
  maxSteps: number
  /** Weights of the step kinds (defaults in DEFAULT_STEP_WEIGHTS). */
  stepWeights?: Partial<Record<StepKind, number>>
}

export const DEFAULT_STEP_WEIGHTS: Record<StepKind, number> = {
  stop: 24, tools: 34, 'max-tokens': 7, fail: 14, 'hook-fail': 3, 'abort-stream': 5, 'abort-tools': 5, crash: 3, fork: 3,
}

export function arbMsgSeed(source?: MessageSource): fc.Arbitrary<MsgSeed> {
  return fc.record({
    content: fc.array(
      fc.oneof({ weight: 8, arbitrary: arbBlock({ types: ['text'] }) }, { weight: 1, arbitrary: arbBlock({ types: ['image'] }) }),
      { minLength: 1, maxLength: 2 },
    ),
    source: source
      ? fc.constant(source)
      : fc.oneof({ weight: 6, arbitrary: fc.constant<MessageSource>({ kind: 'user' }) }, { weight: 1, arbitrary: fc.constant<MessageSource>({ kind: 'hook', name: 'steerer' }) }),
  })
}

export function arbInboxOp(): fc.Arbitrary<InboxOpPlan> {
  const target = fc.constantFrom('next-turn' as const, 'next-step' as const)
  return fc.oneof(
    { weight: 10, arbitrary: fc.record({ op: fc.constant('send' as const), target, head: fc.boolean(), messages: fc.array(arbMsgSeed(), { minLength: 1, maxLength: 1 }) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('replace' as const), pick: fc.nat(9), message: arbMsgSeed() }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), pick: fc.nat(9) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('splice' as const), target, start: fc.nat(4), deleteCount: fc.nat(2), messages: fc.array(arbMsgSeed(), { maxLength: 2 }) }) },
    { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
  )
}

export function arbCompactionPlan(): fc.Arbitrary<CompactionPlan> {
  return fc.record({
    prunes: fc.array(fc.nat(20), { maxLength: 2 }),
    summary: fc.constantFrom('none' as const, 'ok' as const, 'ok' as const, 'fail' as const),
    rangeEnd: fc.nat(50),
    summaryText: arbText(40),
    summaryUsage: fc.boolean(),
  })
}

export function arbIdleItem(): fc.Arbitrary<IdleItem> {
  return fc.oneof(
    { weight: 12, arbitrary: arbInboxOp().map((inbox) => ({ op: 'inbox' as const, inbox })) },
    { weight: 1, arbitrary: arbCompactionPlan().map((compaction) => ({ op: 'compact' as const, compaction })) },
    { weight: 1, arbitrary: fc.boolean().map((fork) => ({ op: 'seed' as const, fork })) },
  )
}

const arbCancel: fc.Arbitrary<CancelCause> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<CancelCause>({ kind: 'user' }) },
  { weight: 1, arbitrary: fc.constant<CancelCause>({ kind: 'parent' }) },
  { weight: 1, arbitrary: fc.constant<CancelCause>({ kind: 'disposed' }) },
  { weight: 1, arbitrary: arbText(12).map((reason): CancelCause => ({ kind: 'hook', reason })) },
)

function arbToolPlan(): fc.Arbitrary<ToolPlan> {
  return fc.record({
    error: fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: fc.constantFrom<string>(...TOOL_ERROR_CODES) }),
    output: arbText(60),
    contexts: fc.oneof({ weight: 4, arbitrary: fc.constant<MsgSeed[]>([]) }, { weight: 1, arbitrary: fc.array(arbMsgSeed({ kind: 'tool', callId: '' }), { minLength: 1, maxLength: 2 }) }),
    abortedWhileRunning: fc.boolean(),
  })
}

function arbStepKind(weights: Record<StepKind, number>): fc.Arbitrary<StepKind> {
  // Ordered so that shrinking goes towards the simplest kinds.
  const kinds: StepKind[] = ['stop', 'tools', 'max-tokens', 'fail', 'hook-fail', 'abort-stream', 'abort-tools', 'crash', 'fork']
  return fc.oneof(...kinds.filter((k) => weights[k] > 0).map((k) => ({ weight: weights[k], arbitrary: fc.constant(k) })))
}

export function arbStepPlan(weights: Record<StepKind, number> = DEFAULT_STEP_WEIGHTS): fc.Arbitrary<StepPlan> {
  return fc.record({
    preStep: fc.oneof(
      { weight: 40, arbitrary: fc.constant('enter' as const) },
      { weight: 3, arbitrary: fc.constant('enter+hook' as const) },
      { weight: 3, arbitrary: fc.constant('reject' as const) },
      { weight: 2, arbitrary: fc.constant('throw' as const) },
      { weight: 3, arbitrary: fc.constant('empty' as const) },
    ),
    hookMessage: arbMsgSeed({ kind: 'hook', name: 'pre-step' }),
    compaction: fc.oneof({ weight: 7, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arbCompactionPlan() }),
    configChange: fc.oneof(
      { weight: 6, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.record({ model: fc.constantFrom('scripted', 'scripted-large'), temperature: fc.constantFrom(0, 0.5, 1) }) },
    ),
    kind: arbStepKind(weights),
    stream: arbStreamPlan(),
    tools: fc.array(arbToolPlan(), { minLength: 1, maxLength: 3 }),
    pool: fc.integer({ min: 1, max: 3 }),
    schedule: fc.array(fc.nat(3), { maxLength: 8 }),
    concluded: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    failure: arbFailure(),
    inBandFinish: fc.boolean(),
    recovery: fc.constantFrom('terminal' as const, 'retry' as const, 'retry' as const, 'retry' as const, 'overflow' as const, 'cancel' as const, 'retry-then-cancel' as const, 'crash' as const),
    retryDelayMs: fc.nat(10_000),
    persists: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 4 }) }),
    cancel: arbCancel,
    keepInbox: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    cutAt: fc.nat(12),
    sends: fc.oneof(
      { weight: 3, arbitrary: fc.constant<StepPlan['sends']>([]) },
      { weight: 2, arbitrary: fc.array(fc.record({ at: fc.nat(12), inbox: arbInboxOp() }), { minLength: 1, maxLength: 3 }) },
    ),
    afterStop: fc.constantFrom('complete' as const, 'complete' as const, 'complete' as const, 'steer' as const, 'inject' as const),
    stopMessage: arbMsgSeed({ kind: 'hook', name: 'turn-stopping' }),
    seedAfter: fc.boolean(),
  })
}

export function arbTurnPlan(opts: PlanOptions): fc.Arbitrary<TurnPlan> {
  const weights = { ...DEFAULT_STEP_WEIGHTS, ...opts.stepWeights }
  return fc.record({
    idle: fc.oneof({ weight: 2, arbitrary: fc.constant<IdleItem[]>([]) }, { weight: 3, arbitrary: fc.array(arbIdleItem(), { maxLength: 3 }) }),
    wake: fc.constantFrom('followup' as const, 'followup' as const, 'steer' as const, 'queued' as const),
    wakeMessage: arbMsgSeed({ kind: 'user' }),
    steps: fc.array(arbStepPlan(weights), { minLength: 1, maxLength: Math.max(1, opts.maxSteps) }),
  })
}

export function arbLogPlan(opts: PlanOptions & { minTurns?: number }): fc.Arbitrary<LogPlan> {
  return fc.record({
    turns: fc.array(arbTurnPlan(opts), { minLength: opts.minTurns ?? 0, maxLength: opts.maxTurns }),
    trailing: fc.array(arbIdleItem(), { maxLength: 2 }),
    clockSeed: fc.nat(),
    startTime: fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }),
  })
}


