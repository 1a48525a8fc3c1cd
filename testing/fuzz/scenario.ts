/**
 * Scenario generation: what the model answers (text, reasoning, tool calls with generated
 * arguments, transient and terminal errors, overflows, max-tokens, grammar violations, broken
 * streams), what the scenario's hooks decide (pre-step, turn-stopping), which fuzzer tool bodies
 * fail, the pool cap, and (with plugins) the answers to summary calls. Pure arbitraries: the run
 * (`run.ts`) turns a scenario into a model, tools and hooks.
 */
import fc from 'fast-check'
import type { HookMap } from '../../agent/types.js'
import type { StreamChunk } from '../../events/index.js'
import type { AgentPlugin } from '../../agent/types.js'
import type { ScriptedEntry } from '../../models/index.js'
import { arbProviderStream } from '../arbitraries/provider-stream.js'
import type { GeneratedCall } from './args.js'
import { arbBudget, type FuzzBudget } from './budget.js'
import { arbChildPlan, type ChildPlan } from './children.js'
import { arbApprovalPlan, arbAskStep, type ApprovalPlan } from './approval-plan.js'
import { arbInputCall } from './input-tool.js'
import { arbApprovalCall } from './approval-tool.js'
import type { FuzzAgentOptions } from './types.js'

export type Response = ScriptedEntry
/** Hostile plans (`cancel`, `hang`, `getter`) are generated only in the hostile mix (`fuzzAgent`'s default). */
export type PreStepPlan = 'next' | 'reject' | 'throw' | 'empty' | 'hook-message' | 'cancel' | 'hang' | 'getter'
export type StoppingPlan = 'none' | 'steer' | 'throw' | 'cancel' | 'hang'
/**
 * What a fuzzer tool body does: settle ok or throw when the scheduler says; `hang` (never settle,
 * ignoring the signal), `late` (ignore the signal, settle some scheduled steps after the cancel:
 * before or after the grace period ran out), `getter` (an output whose `content` getter throws).
 */
export type ToolPlan = 'ok' | 'fail' | 'hang' | 'late' | 'getter'
export type SummaryPlan = 'short' | 'long' | 'empty' | 'error' | 'throw' | 'cancel'

/** One generated scenario: model responses, hook plans, tool outcomes, the pool cap. */
export interface Scenario {
  responses: Response[]
  preStep: PreStepPlan[]
  stopping: StoppingPlan[]
  toolFails: boolean[]
  maxParallel: number
  /** Only in the hostile mix: the fuzzer tools' plans (instead of `toolFails`). */
  toolPlans?: ToolPlan[]
  /** Only with plugins: answers to summary calls. */
  summaries?: SummaryPlan[]
  /** Only with an arbitrary of plugins. */
  plugins?: readonly AgentPlugin[]
  /** Only with `budgets: true` (budget.ts). */
  budget?: FuzzBudget
  /** Only with `children: true`: what each spawned child does, in spawn order (children.ts). */
  children?: ChildPlan[]
  /** Only with `approvals: true`: when the fuzzer answers its asks, what lands at them, slow post-execute (approval-plan.ts). */
  approvalPlan?: ApprovalPlan
}

/** The fuzzer's own tool names (and one the registry does not know). */
export const FUZZ_TOOL_NAMES = ['fuzz_parallel', 'fuzz_exclusive', 'fuzz_throw', 'no_such_tool'] as const

/** Calls of each user tool, generated from its schema (`args.ts`), by tool name. */
export type UserCalls = Readonly<Record<string, fc.Arbitrary<GeneratedCall>>>

/**
 * A tool call: to one of `names` with the fuzzer's own small arguments (`{n}`, or `{wrong: true}`),
 * or, for a tool in `userCalls`, arguments from its schema. Without `userCalls` the arbitrary is the
 * original one, so the replay tests' fixed seeds keep their scenarios.
 */
export function arbToolCall(names: readonly string[], userCalls: UserCalls = {}): fc.Arbitrary<GeneratedCall> {
  const own = names.filter((n) => !(n in userCalls))
  const legacy = fc.record({
    name: fc.constantFrom(...own),
    args: fc.oneof(fc.constant<unknown>({ n: 1 }), fc.record({ n: fc.integer({ min: 0, max: 9 }) }), fc.constant<unknown>({ wrong: true })),
  })
  const user = Object.values(userCalls)
  if (user.length === 0) return legacy
  // every user tool as likely as all the fuzzer's own together: their bodies are what is under test
  return fc.oneof({ weight: 1, arbitrary: legacy }, ...user.map((arbitrary) => ({ weight: 1, arbitrary })))
}

/**
 * A scripted model response of any shape the fuzzer covers. `providerStreams` adds what real
 * providers stream besides deltas (issue 23): provider data, whole blocks, refusals.
 */
export function arbResponse(
  toolNames: readonly string[], overflow = false, userCalls: UserCalls = {}, providerStreams = false, askSteps = false, inputSteps: fc.Arbitrary<GeneratedCall> | null = null,
): fc.Arbitrary<Response> {
  const text = fc.string({ minLength: 1, maxLength: 12 })
  const broken: StreamChunk[] = [{ type: 'block-start', index: 0, blockType: 'text' }, { type: 'finish', reason: 'stop' }]
  const extra = overflow
    ? [
      { weight: 3, arbitrary: fc.constant<Response>({ error: { code: 'CONTEXT_WINDOW_EXCEEDED' } }) },
      { weight: 1, arbitrary: fc.constant<Response>({ throw: { code: 'CONTEXT_WINDOW_EXCEEDED', status: 413 } }) },
      { weight: 1, arbitrary: fc.record({ text, usage: fc.record({ inputTokens: fc.nat(3000), outputTokens: fc.nat(50) }) }) as fc.Arbitrary<Response> },
    ]
    : []
  return fc.oneof(
    ...extra,
    { weight: 5, arbitrary: fc.record({ text, chunkSize: fc.integer({ min: 1, max: 4 }) }) },
    { weight: 1, arbitrary: fc.record({ reasoning: text, text }) },
    { weight: 4, arbitrary: fc.record({ toolCalls: fc.array(arbToolCall(toolNames, userCalls), { minLength: 1, maxLength: 4 }) }) },
    { weight: 2, arbitrary: fc.record({ error: fc.record({ code: fc.constantFrom('RATE_LIMIT', 'SERVER', 'QUOTA', 'INVALID_CREDENTIAL') }) }) },
    { weight: 1, arbitrary: fc.record({ text, maxTokens: fc.constant(true), toolCalls: fc.array(arbToolCall(toolNames, userCalls), { maxLength: 1 }) }) },
    { weight: 1, arbitrary: fc.constant<Response>(broken) },
    { weight: 1, arbitrary: fc.record({ text, failAfter: fc.integer({ min: 1, max: 3 }) }) },
    // issue 23: provider data, whole blocks (sources, files, provider-executed calls), refusals
    ...(providerStreams ? [{ weight: 2, arbitrary: arbProviderStream() as fc.Arbitrary<Response> }] : []),
    // with approvals (round 16): a step whose asked call comes after parallel-safe calls (approval-plan.ts)
    ...(askSteps ? [{ weight: 2, arbitrary: arbAskStep(arbToolCall(toolNames, userCalls)) as fc.Arbitrary<Response> }] : []),
    // with input rounds: a step of one or two calls that ask (input-tool.ts), maybe beside one call
    // of any kind (with approvals: a call of the approval tool, so approvals and rounds are open at once)
    ...(inputSteps !== null
      ? [{ weight: 4, arbitrary: fc.tuple(fc.array(inputSteps, { minLength: 1, maxLength: 2 }), fc.array(askSteps ? arbApprovalCall() : arbToolCall(toolNames, userCalls), { maxLength: 1 })).map(([a, b]) => ({ toolCalls: [...a, ...b] })) as fc.Arbitrary<Response> }]
      : []),
  )
}

/**
 * The scenario generator. Without `hostile`, without `providerStreams` and without plugins the
 * record is exactly the original one, so fixed seeds keep their scenarios (the replay tests rely on
 * it). `hostile` adds hook plans that cancel the turn, never settle or return a decision with a
 * throwing getter, and tool plans that hang, settle late or return an output with a throwing
 * getter. `providerStreams` (default: as `hostile`, so `fuzzAgent` has them) adds provider
 * responses with provider data, whole blocks and refusals (issue 23).
 */
export function arbScenario(
  toolNames: readonly string[], opts: FuzzAgentOptions = {}, userCalls: UserCalls = {}, hostile = false, providerStreams = hostile,
): fc.Arbitrary<Scenario> {
  const preStep: PreStepPlan[] = ['next', 'next', 'next', 'next', 'reject', 'throw', 'empty', 'hook-message', ...(hostile ? ['next', 'next', 'cancel', 'hang', 'getter'] as const : [])]
  const stopping: StoppingPlan[] = ['none', 'none', 'none', 'steer', 'throw', ...(hostile ? ['none', 'cancel', 'hang'] as const : [])]
  const inputSteps = opts.inputs === true && !opts.ownToolsOnly ? arbInputCall() : null
  const responses = fc.array(arbResponse(toolNames, opts.overflow === true, userCalls, providerStreams, opts.approvals === true, inputSteps), { minLength: 1, maxLength: 12 })
  const base = {
    responses: opts.overflow === true ? withHistoryOverflow(responses, fc.record({ toolCalls: fc.array(arbToolCall(toolNames, userCalls), { minLength: 1, maxLength: 4 }) })) : responses,
    preStep: fc.array(fc.constantFrom(...preStep), { minLength: 1, maxLength: 8 }),
    stopping: fc.array(fc.constantFrom(...stopping), { minLength: 1, maxLength: 6 }),
    toolFails: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
    maxParallel: fc.integer({ min: 1, max: 3 }),
  }
  const mixed = hostile
    ? { ...base, toolPlans: fc.array(fc.constantFrom<ToolPlan>('ok', 'ok', 'ok', 'ok', 'fail', 'fail', 'hang', 'late', 'getter'), { minLength: 1, maxLength: 6 }) }
    : base
  // a budget only when asked for: without it the record is the one fixed seeds were written against
  const budgeted = opts.budgets === true ? { ...mixed, budget: arbBudget() } : mixed
  // children likewise only when asked for
  const withChildren = opts.children === true ? { ...budgeted, children: fc.array(arbChildPlan(), { minLength: 1, maxLength: 4 }) } : budgeted
  // the approval plan likewise (round 16): without approvals the fuzzer's execute hooks are the earlier ones
  const mix = opts.approvals === true ? { ...withChildren, approvalPlan: arbApprovalPlan() } : withChildren
  if (!opts.plugins) return fc.record(mix)
  // one run in four has a summariser that always fails one way: in the plain mix a run's failing
  // kinds are diluted by its other plans (on one seed, 150 runs ended a summary SERVER once)
  const summaries = fc.oneof(
    { weight: 3, arbitrary: fc.array(fc.constantFrom<SummaryPlan>('short', 'short', 'short', 'long', 'empty', 'error', 'throw', 'cancel'), { minLength: 1, maxLength: 5 }) },
    { weight: 1, arbitrary: fc.constantFrom<SummaryPlan>('long', 'empty', 'error', 'throw', 'cancel').map((p) => [p]) },
  )
  const p = opts.plugins
  if (p instanceof fc.Arbitrary) return fc.record({ ...mix, summaries, plugins: p })
  return fc.record({ ...mix, summaries })
}

/**
 * With `overflow`: two scenarios in three overflow after one to three tool-call steps of the same
 * turn, so that there is history older than the newest exchange to compact and an overflow retry
 * can follow (an overflow drawn among the first answers, or after answers that a run with one
 * message never reaches, has nothing to compact: whether a 150-run fuzz reached an overflow retry
 * at all depended on the seed). The third is the plain mix.
 */
function withHistoryOverflow(plain: fc.Arbitrary<Response[]>, toolStep: fc.Arbitrary<Response>): fc.Arbitrary<Response[]> {
  const overflow = fc.constantFrom<Response>({ error: { code: 'CONTEXT_WINDOW_EXCEEDED' } }, { throw: { code: 'CONTEXT_WINDOW_EXCEEDED', status: 413 } })
  const late = fc.tuple(fc.array(toolStep, { minLength: 1, maxLength: 3 }), overflow, plain)
    .map(([before, o, after]) => [...before, o, ...after])
  return fc.oneof({ weight: 1, arbitrary: plain }, { weight: 2, arbitrary: late })
}

/** What the hostile plans need from the run: a hang that never settles (the run arranges a cancel). */
export interface HostileEnv {
  hang(what: string, signal: AbortSignal): Promise<never>
}

/** A decision object whose `kind` getter throws: the agent must read it inside a guard. */
const throwingDecision = (): never => ({ get kind(): never { throw new Error('fuzz: a throwing getter in a hook decision') } }) as never

/**
 * The scenario's hook plans: `agent/pre-step` (enter, reject, throw, enter nothing, add a hook
 * message; hostile: cancel the turn then enter, never settle, a throwing getter) and
 * `agent/turn-stopping` (steer at most three times, or throw; hostile: cancel, never settle). `wait` is awaited
 * first (the scheduler's hand in the fuzzer; nothing in a re-execution); `onSteer` sees each
 * steered id. The fuzzer and the replay tests build the same hooks from the same scenario.
 */
export function scenarioHooks(
  sc: Pick<Scenario, 'preStep' | 'stopping'>,
  wait: () => Promise<unknown> = async () => {},
  onSteer: (id: string) => void = () => {},
  hostile?: HostileEnv,
): { 'agent/pre-step': HookMap['agent/pre-step']; 'agent/turn-stopping': HookMap['agent/turn-stopping'] } {
  let pre = 0
  let stop = 0
  let hookMsg = 0
  return {
    'agent/pre-step': async (p, next) => {
      await wait()
      const plan = sc.preStep[pre++ % sc.preStep.length]!
      if (plan === 'reject') return { kind: 'reject' }
      if (plan === 'throw') throw new Error('fuzz pre-step throws')
      if (plan === 'empty') return { kind: 'enter', messages: [] }
      if (plan === 'cancel') p.agent.cancel({ kind: 'hook', reason: 'fuzz pre-step' })
      if (plan === 'hang' && hostile) return hostile.hang('agent/pre-step', p.signal)
      if (plan === 'getter') return throwingDecision()
      if (plan === 'hook-message') {
        return next({ ...p, messages: [...p.messages, { id: `h${++hookMsg}`, role: 'user', content: [{ type: 'text', text: 'hook' }], source: { kind: 'hook', name: 'fuzz' } }] })
      }
      return next()
    },
    'agent/turn-stopping': async ({ agent: a, signal }) => {
      await wait()
      const plan = sc.stopping[stop++ % sc.stopping.length]!
      if (plan === 'throw') throw new Error('fuzz turn-stopping throws')
      if (plan === 'cancel') a.cancel({ kind: 'hook', reason: 'fuzz turn-stopping' })
      if (plan === 'hang' && hostile) await hostile.hang('agent/turn-stopping', signal)
      if (plan === 'steer' && stop < 4) onSteer(a.steer('more'))
    },
  }
}
