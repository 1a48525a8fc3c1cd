/**
 * `fuzzAgent`: a fast-check model-based fuzzer of the real agent. It generates inbox operations
 * (followup, steer, inject, remove, replace, clear, bursts), model behaviours (text, reasoning,
 * tool calls, transient and terminal errors, max-tokens, grammar violations, broken streams), hook
 * decisions (reject, throw, enter nothing, steer at turn-stopping), tool outcomes and cancels; lets
 * `fc.scheduler` decide the interleaving of model chunks, hooks and tool bodies; runs the agent and
 * checks every log invariant (L1–L16, via `verify`) and the runtime ones (R1, R2, R3, R5, R7, R8),
 * plus "memory follows the log" (the inbox machine equals the inbox folded from the log) after
 * every command. A failure throws with the shrunk scenario, the seed and the failing run's log.
 *
 * Users run it against their own tools and hooks: `await fuzzAgent({ tools, hooks, numRuns })`, and
 * against their plugins: `await fuzzAgent({ plugins: [basicCompaction({ contextWindow: 1000 })],
 * overflow: true, largeOutputs: true })` adds `CONTEXT_WINDOW_EXCEEDED` failures and large tool
 * outputs to the scenarios, answers the plugin's summary calls (`purpose: 'compaction'`) with
 * generated summaries (short, too long, empty, failing, throwing, cancelling), and checks R6 from
 * the log and from the `agent/request-error` decisions when a compaction plugin is installed.
 */
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { z } from 'zod'
import { createAgent, TurnlogAgent } from '../agent/agent.js'
import type { Agent, AgentOptions, AgentPlugin, HookMap, RequestErrorDecision, Timers } from '../agent/types.js'
import type { CancelCause, EventOf, LogEvent, StreamChunk } from '../events/index.js'
import { scriptedModel, type ModelAdapter, type ModelRequest, type ScriptedEntry } from '../models/index.js'
import { inboxReducer } from '../reducers/inbox.js'
import { historyReducer } from '../reducers/history.js'
import { verify } from '../replay/verify.js'
import { defineTool } from '../tools/define.js'
import type { AnyTool } from '../tools/types.js'

export interface FuzzAgentOptions {
  /** Your tools; the fuzzer adds its own (`fuzz_parallel`, `fuzz_exclusive`, `fuzz_throw`) unless `ownToolsOnly`. */
  tools?: readonly AnyTool[]
  /** Your hooks, registered before the fuzzer's own. */
  hooks?: AgentOptions['hooks']
  ownToolsOnly?: boolean
  numRuns?: number
  seed?: number
  /** Commands per scenario (default 1..12). */
  maxCommands?: number
  maxStepsPerTurn?: number
  /** Called after each run that passed, with the run's log (for coverage statistics). */
  onRun?: (events: readonly LogEvent[]) => void
  /**
   * Plugins passed to `createAgent`: a list (each instance is installed on every run's agent), a
   * factory called per run, or an arbitrary (fast-check generates the plugins per run, e.g. over a
   * plugin's options; the plugins are reported with a failing scenario).
   */
  plugins?: readonly AgentPlugin[] | (() => readonly AgentPlugin[]) | fc.Arbitrary<readonly AgentPlugin[]>
  /** Adds `CONTEXT_WINDOW_EXCEEDED` failures (in band, and thrown with status 413) and text responses
   * with `usage` to the generated model responses. */
  overflow?: boolean
  /** The fuzzer's tools return text of these sizes (picked by the call's `n`) instead of `{ok: true}`;
   * `true` = 100, 1,500, 4,000 and 12,000 characters. */
  largeOutputs?: boolean | readonly number[]
  /**
   * R6 checks (`checkR6`): an overflow retry only when a replacement was logged during the
   * `agent/request-error` listeners and the turn was not cancelled, a retry turn after an overflow
   * only after a replacement in the failed turn, and at most `maxOverflowRetries` (when given) per
   * failure chain. Default: on when a plugin named `compaction` is installed.
   */
  r6?: boolean | { maxOverflowRetries?: number }
  /** Extra commands, mixed into the generated ones (e.g. a plugin's manual operation). */
  commands?: ReadonlyArray<fc.Arbitrary<FuzzCommand>>
  /** An extra check after each run (after the final followup); throw to fail the run. */
  check?: (run: FuzzRun) => void
}

/** A user command: `run` gets the agent and may hand back work the run must wait for (`defer`). */
export interface FuzzCommand {
  run(agent: Agent, ctx: { plugins: readonly AgentPlugin[]; defer(work: Promise<unknown>): void }): void | Promise<void>
  toString(): string
}

/** An `agent/request-error` decision as the outermost listener saw it. */
export interface OverflowDecision {
  /** The failure code. */
  code: string
  /** Log length when the listeners started, and when they returned. */
  from: number
  to: number
  retry: boolean
  /** The turn's signal was aborted when they returned. */
  aborted: boolean
}

/** What `check` gets after a run. */
export interface FuzzRun {
  agent: Agent
  events: readonly LogEvent[]
  plugins: readonly AgentPlugin[]
  /** Every `agent/request-error` decision, in order (recorded when R6 is checked). */
  decisions: readonly OverflowDecision[]
  /** Log length at each `agent/status` idle. */
  idleAt: readonly number[]
  /** Model requests with purpose `compaction`, with the log length when each was made. */
  summaryRequests: ReadonlyArray<{ request: ModelRequest; at: number }>
}

type Response = ScriptedEntry
export type PreStepPlan = 'next' | 'reject' | 'throw' | 'empty' | 'hook-message'
export type StoppingPlan = 'none' | 'steer' | 'throw'
type SummaryPlan = 'short' | 'long' | 'empty' | 'error' | 'throw' | 'cancel'

/** One generated scenario: model responses, hook plans, tool outcomes, the pool cap. */
export interface Scenario {
  responses: Response[]
  preStep: PreStepPlan[]
  stopping: StoppingPlan[]
  toolFails: boolean[]
  maxParallel: number
  /** Only with plugins: answers to summary calls. */
  summaries?: SummaryPlan[]
  /** Only with an arbitrary of plugins. */
  plugins?: readonly AgentPlugin[]
}

/** With overflow or plugins, past this many turn requests the model answers text, so every run
 * ends: an overflow → compaction → retry → success → overflow … cycle never goes idle. */
const MAX_TURN_REQUESTS = 80
const DEFAULT_SIZES = [100, 1500, 4000, 12_000] as const

const FUZZ_TOOL_NAMES = ['fuzz_parallel', 'fuzz_exclusive', 'fuzz_throw', 'no_such_tool'] as const

export function arbToolCall(names: readonly string[]) {
  return fc.record({
    name: fc.constantFrom(...names),
    args: fc.oneof(fc.constant<unknown>({ n: 1 }), fc.record({ n: fc.integer({ min: 0, max: 9 }) }), fc.constant<unknown>({ wrong: true })),
  })
}

/** A scripted model response of any shape the fuzzer covers. */
export function arbResponse(toolNames: readonly string[], overflow = false): fc.Arbitrary<Response> {
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
    { weight: 4, arbitrary: fc.record({ toolCalls: fc.array(arbToolCall(toolNames), { minLength: 1, maxLength: 4 }) }) },
    { weight: 2, arbitrary: fc.record({ error: fc.record({ code: fc.constantFrom('RATE_LIMIT', 'SERVER', 'QUOTA', 'INVALID_CREDENTIAL') }) }) },
    { weight: 1, arbitrary: fc.record({ text, maxTokens: fc.constant(true), toolCalls: fc.array(arbToolCall(toolNames), { maxLength: 1 }) }) },
    { weight: 1, arbitrary: fc.constant<Response>(broken) },
    { weight: 1, arbitrary: fc.record({ text, failAfter: fc.integer({ min: 1, max: 3 }) }) },
  )
}

/** Body bookkeeping for R4 (concurrency cap, barrier isolation) and R5 (no body after a cancel). */
interface Bodies {
  inFlight: number
  maxInFlight: number
  exclusiveOverlap: boolean
  exclusiveRunning: number
  started: Array<{ turn: number; at: number }>
}

/** The fuzzer's own tools: bodies wait on the scheduler, so it decides when each settles. */
function fuzzTools(schedule: () => Promise<void>, plan: { toolFails: boolean[]; i: number }, bodies: Bodies, eventsLen: () => number, sizes: readonly number[] | null) {
  const body = (fail: boolean, exclusive: boolean) => async (args: { n: number }, ctx: { signal: AbortSignal; turn: number }) => {
    bodies.started.push({ turn: ctx.turn, at: eventsLen() })
    // R4: a barrier body never overlaps any other body.
    if (bodies.exclusiveRunning > 0 || (exclusive && bodies.inFlight > 0)) bodies.exclusiveOverlap = true
    bodies.inFlight++
    if (exclusive) bodies.exclusiveRunning++
    bodies.maxInFlight = Math.max(bodies.maxInFlight, bodies.inFlight)
    try {
      await schedule()
      if (fail) throw new Error('fuzz tool failure')
      if (sizes) return 'x'.repeat(sizes[Math.abs(args.n) % sizes.length]!)
      return { ok: true }
    } finally {
      bodies.inFlight--
      if (exclusive) bodies.exclusiveRunning--
    }
  }
  const next = () => plan.toolFails[plan.i++ % Math.max(1, plan.toolFails.length)] ?? false
  return [
    defineTool({ name: 'fuzz_parallel', description: 'parallel-safe', parameters: z.object({ n: z.number() }), isConcurrencySafe: () => true, execute: (a, c) => body(next(), false)(a, c) }),
    defineTool({ name: 'fuzz_exclusive', description: 'exclusive', parameters: z.object({ n: z.number() }), execute: (a, c) => body(next(), true)(a, c) }),
    defineTool({ name: 'fuzz_throw', description: 'always throws', parameters: z.object({ n: z.number() }), execute: (a, c) => body(true, true)(a, c) }),
  ] as AnyTool[]
}

interface Run {
  agent: TurnlogAgent
  plugins: readonly AgentPlugin[]
  decisions: OverflowDecision[]
  summaryRequests: Array<{ request: ModelRequest; at: number }>
  deferred: Array<Promise<unknown>>
  statuses: Array<{ status: string; at: number }>
  requests: Array<{ request: ModelRequest; at: number; turn: number | null }>
  cancels: Array<{ turn: number; cause: CancelCause; at: number }>
  errors: Array<{ where: string; error: unknown }>
  bodies: Bodies
  maxParallel: number
  preOrder: Array<{ turn: number; step: number; callId: string }>
  postOrder: Array<{ turn: number; step: number; callId: string }>
  accepted: string[]
}

type Cmd = fc.AsyncCommand<object, Run>

const failed = (msg: string, run: Run) => {
  const err = new Error(`${msg}\nlog:\n${run.agent.events.map((e) => JSON.stringify(e)).join('\n')}`)
  return err
}

/** Memory follows the log: the inbox machine's lists equal the inbox folded from the log. */
function checkInboxFollowsLog(run: Run): void {
  const s = inboxReducer.initial()
  for (const e of run.agent.events) inboxReducer.apply(s, e)
  const live = { nextTurn: [...run.agent.inbox.nextTurn], nextStep: [...run.agent.inbox.nextStep] }
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(s)), JSON.parse(JSON.stringify(live)))) {
    throw failed(`inbox in memory differs from the inbox folded from the log`, run)
  }
}

class Send implements Cmd {
  constructor(readonly kind: 'followup' | 'steer' | 'inject', readonly text: string) {}
  check = () => true
  async run(_m: object, r: Run) {
    r.accepted.push(r.agent[this.kind](this.text))
    checkInboxFollowsLog(r)
  }
  toString = () => `${this.kind}(${JSON.stringify(this.text)})`
}

class Burst implements Cmd {
  constructor(readonly n: number) {}
  check = () => true
  async run(_m: object, r: Run) {
    // (during a plugin's runMaintenance the status is idle but a wake is latched, not run)
    const wasIdle = r.agent.status === 'idle' && r.agent.inbox.nextTurn.length === 0 && r.agent.snapshot().turn.state !== 'maintaining'
    const before = r.agent.events.length
    const ids = Array.from({ length: this.n }, (_, i) => r.agent.followup(`burst ${i}`))
    r.accepted.push(...ids)
    if (wasIdle) {
      // R2: the first followup opened its turn and claimed its prompt synchronously, alone.
      const added = r.agent.events.slice(before)
      const starts = added.filter((e) => e.type === 'turn/start')
      if (starts.length !== 1 || r.agent.status !== 'running') throw failed('R2: a burst from idle must open exactly one turn synchronously', r)
      const pending = r.agent.inbox.nextTurn.map((m) => m.id)
      if (!isDeepStrictEqual(pending, ids.slice(1))) throw failed(`R2: after a burst the queue must be the other prompts in order, got ${pending}`, r)
    }
    checkInboxFollowsLog(r)
  }
  toString = () => `burst(${this.n})`
}

class Edit implements Cmd {
  constructor(readonly op: 'remove' | 'replace' | 'clear', readonly pick: number) {}
  check = () => true
  async run(_m: object, r: Run) {
    const all = [...r.agent.inbox.nextTurn, ...r.agent.inbox.nextStep]
    if (this.op === 'clear') r.agent.inbox.clear()
    else if (all.length === 0) {
      if (r.agent.inbox.remove('absent-id')) throw failed('remove of an absent id returned true', r)
    } else {
      const id = all[this.pick % all.length]!.id
      const ok = this.op === 'remove' ? r.agent.inbox.remove(id) : r.agent.inbox.replace(id, `replaced ${id}`)
      if (!ok) throw failed(`${this.op}(${id}) of a pending id returned false`, r)
      if ([...r.agent.inbox.nextTurn, ...r.agent.inbox.nextStep].some((m) => m.id === id)) throw failed(`${id} still pending after ${this.op}`, r)
    }
    checkInboxFollowsLog(r)
  }
  toString = () => `${this.op}(${this.pick})`
}

class Cancel implements Cmd {
  constructor(readonly cause: CancelCause, readonly keepInbox: boolean) {}
  check = () => true
  async run(_m: object, r: Run) {
    const turn = r.agent.lifecycle.openTurn
    const running = r.agent.status === 'running'
    r.agent.cancel(this.cause, { keepInbox: this.keepInbox })
    if (running && turn !== null) r.cancels.push({ turn, cause: this.cause, at: r.agent.events.length })
    if (!this.keepInbox && running && (r.agent.inbox.nextTurn.length || r.agent.inbox.nextStep.length)) {
      throw failed('cancel without keepInbox must clear both lists', r)
    }
    checkInboxFollowsLog(r)
  }
  toString = () => `cancel(${JSON.stringify(this.cause)}, keepInbox=${this.keepInbox})`
}

class UserCommand implements Cmd {
  constructor(readonly cmd: FuzzCommand) {}
  check = () => true
  async run(_m: object, r: Run) {
    await this.cmd.run(r.agent, { plugins: r.plugins, defer: (w) => { r.deferred.push(w) } })
    checkInboxFollowsLog(r)
  }
  toString = () => this.cmd.toString()
}

function arbCommands(max: number, extra: ReadonlyArray<fc.Arbitrary<FuzzCommand>> = []) {
  const text = fc.string({ maxLength: 8 })
  const cause = fc.oneof(
    fc.constant<CancelCause>({ kind: 'user' }),
    fc.constant<CancelCause>({ kind: 'parent' }),
    fc.string({ maxLength: 5 }).map((reason): CancelCause => ({ kind: 'hook', reason })),
  )
  return fc.commands(
    [
      fc.tuple(fc.constantFrom('followup', 'steer', 'inject') as fc.Arbitrary<'followup' | 'steer' | 'inject'>, text).map(([k, t]) => new Send(k, t)),
      fc.integer({ min: 2, max: 4 }).map((n) => new Burst(n)),
      fc.tuple(fc.constantFrom('remove', 'replace', 'clear') as fc.Arbitrary<'remove' | 'replace' | 'clear'>, fc.nat(9)).map(([op, p]) => new Edit(op, p)),
      fc.tuple(cause, fc.boolean()).map(([c, k]) => new Cancel(c, k)),
      ...extra.map((a) => a.map((c) => new UserCommand(c))),
    ],
    { maxCommands: max },
  )
}

/** The scenario generator (the same record without plugins, so fixed seeds keep their scenarios). */
export function arbScenario(toolNames: readonly string[], opts: FuzzAgentOptions = {}): fc.Arbitrary<Scenario> {
  const base = {
    responses: fc.array(arbResponse(toolNames, opts.overflow === true), { minLength: 1, maxLength: 12 }),
    preStep: fc.array(fc.constantFrom<PreStepPlan>('next', 'next', 'next', 'next', 'reject', 'throw', 'empty', 'hook-message'), { minLength: 1, maxLength: 8 }),
    stopping: fc.array(fc.constantFrom<StoppingPlan>('none', 'none', 'none', 'steer', 'throw'), { minLength: 1, maxLength: 6 }),
    toolFails: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
    maxParallel: fc.integer({ min: 1, max: 3 }),
  }
  // Without plugins the record is exactly the original one, so fixed seeds give the same scenarios.
  if (!opts.plugins) return fc.record(base)
  const summaries = fc.array(fc.constantFrom<SummaryPlan>('short', 'short', 'short', 'long', 'empty', 'error', 'throw', 'cancel'), { minLength: 1, maxLength: 5 })
  const p = opts.plugins
  if (p instanceof fc.Arbitrary) return fc.record({ ...base, summaries, plugins: p })
  return fc.record({ ...base, summaries })
}

function summaryResponse(plan: SummaryPlan, run: Run): Response {
  switch (plan) {
    case 'short': return { text: 'sum', usage: { inputTokens: 500, outputTokens: 3 } }
    case 'long': return { text: 's'.repeat(20_000) }
    case 'empty': return { reasoning: 'r', text: ' ' }
    case 'error': return { error: { code: 'SERVER' } }
    case 'throw': return { throw: new Error('summariser down') }
    case 'cancel': {
      const turn = run.agent.lifecycle.openTurn
      if (run.agent.status === 'running' && turn !== null) run.cancels.push({ turn, cause: { kind: 'user' }, at: run.agent.events.length })
      run.agent.cancel({ kind: 'user' })
      return { text: 'sum' }
    }
  }
}

function pluginsOf(sc: Scenario, opts: FuzzAgentOptions): readonly AgentPlugin[] {
  const p = opts.plugins
  if (!p) return []
  if (sc.plugins) return sc.plugins
  if (typeof p === 'function') return p()
  return p as readonly AgentPlugin[]
}

function r6Enabled(run: Run, opts: FuzzAgentOptions): boolean {
  return opts.r6 === undefined ? run.plugins.some((p) => p.name === 'compaction') : opts.r6 !== false
}

const instant: Timers = {
  sleep: async () => {},
  random: () => 0.5,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
}

/** Builds the agent for one scenario, wired to the scheduler and the recorders. */
function buildRun(sc: Scenario, s: fc.Scheduler, opts: FuzzAgentOptions): Run {
  const schedule = () => s.schedule(Promise.resolve(), 'settle').then(() => {})
  const run = {} as Run
  run.statuses = []
  run.requests = []
  run.cancels = []
  run.errors = []
  run.accepted = []
  run.bodies = { inFlight: 0, maxInFlight: 0, exclusiveOverlap: false, exclusiveRunning: 0, started: [] }
  run.maxParallel = sc.maxParallel
  run.preOrder = []
  run.postOrder = []
  run.decisions = []
  run.summaryRequests = []
  run.deferred = []
  run.plugins = pluginsOf(sc, opts)
  const toolPlan = { toolFails: sc.toolFails, i: 0 }
  const sizes = opts.largeOutputs ? (opts.largeOutputs === true ? DEFAULT_SIZES : opts.largeOutputs) : null
  const own = opts.ownToolsOnly ? [] : fuzzTools(schedule, toolPlan, run.bodies, () => run.agent?.events.length ?? 0, sizes)
  const bounded = opts.overflow === true || run.plugins.length > 0
  let turnRequests = 0
  let summaryRequests = 0
  const inner = scriptedModel(
    (req, i) => {
      if (req.purpose === 'compaction' && sc.summaries) return summaryResponse(sc.summaries[summaryRequests++ % sc.summaries.length]!, run)
      if (!bounded) return sc.responses[i % sc.responses.length]!
      return turnRequests >= MAX_TURN_REQUESTS ? { text: 'enough' } : sc.responses[turnRequests++ % sc.responses.length]!
    },
    { beforeChunk: () => schedule(), info: { name: 'fuzz' } },
  )
  const model: ModelAdapter = {
    info: inner.info,
    stream(request, signal) {
      const at = run.agent.events.length
      if (request.purpose === 'compaction') run.summaryRequests.push({ request, at })
      else run.requests.push({ request, at, turn: run.agent.lifecycle.openTurn })
      return inner.stream(request, signal)
    },
  }
  // Outermost agent/request-error listener (options.hooks come before plugins): what the listeners inside decided.
  const recordDecision: HookMap['agent/request-error'] = async (p, next) => {
    const from = run.agent.events.length
    const decision: RequestErrorDecision = await next()
    run.decisions.push({ code: p.failure.code, from, to: run.agent.events.length, retry: decision?.kind === 'retry', aborted: p.signal.aborted })
    return decision
  }
  const userHooks = opts.hooks ?? {}
  const userRequestError = userHooks['agent/request-error']
  const hooks: AgentOptions['hooks'] = run.plugins.length === 0 ? opts.hooks : {
    ...userHooks,
    'agent/request-error': [recordDecision, ...(userRequestError === undefined ? [] : Array.isArray(userRequestError) ? userRequestError : [userRequestError as HookMap['agent/request-error']])],
  }
  const agent = createAgent({
    model,
    tools: [...(opts.tools ?? []), ...own],
    system: 'fuzz',
    clock: (() => { let t = 0; return () => t++ })(),
    ids: (() => { let n = 0; return () => `f${++n}` })(),
    timers: instant,
    checkRequests: 'full',
    maxStepsPerTurn: opts.maxStepsPerTurn ?? 8,
    maxParallelToolCalls: sc.maxParallel,
    hooks,
    ...(run.plugins.length > 0 ? { plugins: run.plugins } : {}),
  }) as TurnlogAgent
  run.agent = agent
  agent.on('agent/status', ({ status }) => run.statuses.push({ status, at: agent.events.length }))
  agent.on('agent/error', ({ where, error }) => run.errors.push({ where, error }))
  agent.on('tools/pre-execute', async (p, next) => {
    run.preOrder.push({ turn: p.turn, step: p.step, callId: p.call.id })
    await schedule()
    return next()
  })
  agent.on('tools/post-execute', async (p, next) => {
    run.postOrder.push({ turn: p.turn, step: p.step, callId: p.call.id })
    return next()
  })
  const plans = scenarioHooks(sc, schedule, (id) => run.accepted.push(id))
  agent.on('agent/pre-step', plans['agent/pre-step'])
  agent.on('agent/turn-stopping', plans['agent/turn-stopping'])
  return run
}

/**
 * The scenario's hook plans: `agent/pre-step` (enter, reject, throw, enter nothing, add a hook
 * message) and `agent/turn-stopping` (steer at most three times, or throw). `wait` is awaited
 * first (the scheduler's hand in the fuzzer; nothing in a re-execution); `onSteer` sees each
 * steered id. The fuzzer and the replay tests build the same hooks from the same scenario.
 */
export function scenarioHooks(
  sc: Pick<Scenario, 'preStep' | 'stopping'>,
  wait: () => Promise<unknown> = async () => {},
  onSteer: (id: string) => void = () => {},
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
      if (plan === 'hook-message') {
        return next({ ...p, messages: [...p.messages, { id: `h${++hookMsg}`, role: 'user', content: [{ type: 'text', text: 'hook' }], source: { kind: 'hook', name: 'fuzz' } }] })
      }
      return next()
    },
    'agent/turn-stopping': async ({ agent: a }) => {
      await wait()
      const plan = sc.stopping[stop++ % sc.stopping.length]!
      if (plan === 'throw') throw new Error('fuzz turn-stopping throws')
      if (plan === 'steer' && stop < 4) onSteer(a.steer('more'))
    },
  }
}

/** The checks made once the scenario has run to idle. */
function finalChecks(run: Run, maxSteps: number, opts: FuzzAgentOptions = {}): void {
  const events = run.agent.events
  const v = verify(events, { maxStepsPerTurn: maxSteps, maxRetries: 5 })
  if (!v.ok) throw failed(`log invariants: ${v.violations.slice(0, 3).map((x) => `${x.invariant}@${x.seq} ${x.message}`).join('; ')}`, run)
  // No driver defect and no refused append.
  const defects = run.errors.filter((e) => e.where === 'driver')
  if (defects.length) throw failed(`driver defect: ${String((defects[0]!.error as Error)?.stack ?? defects[0]!.error)}`, run)
  // R1: status alternates, running first; every turn/start while running; idle after the last turn/end.
  run.statuses.forEach((st, i) => {
    if (st.status !== (i % 2 === 0 ? 'running' : 'idle')) throw failed(`R1: status trace ${run.statuses.map((x) => x.status)}`, run)
  })
  for (const e of events) {
    if (e.type !== 'turn/start') continue
    const last = [...run.statuses].reverse().find((st) => st.at <= e.seq)
    if (!last || last.status !== 'running') throw failed(`R1: turn/start at seq ${e.seq} while not running`, run)
  }
  if (run.agent.status !== 'idle') throw failed('R8: not idle at the end', run)
  // R3: each request equals the request rebuilt from the log at that seq.
  for (const { request, at } of run.requests) {
    const prefix = events.slice(0, at)
    const h = historyReducer.initial()
    for (const e of prefix) historyReducer.apply(h, e)
    const header = [...prefix].reverse().find((e) => e.type === 'request/header')?.data as { system: string; tools: unknown; config: unknown } | undefined
    if (!header || !isDeepStrictEqual(request.messages, h.messages) || request.system !== header.system
      || !isDeepStrictEqual(request.tools, header.tools) || !isDeepStrictEqual(request.config, header.config)) {
      throw failed(`R3: the request at seq ${at} differs from the log`, run)
    }
  }
  // A summary request (purpose compaction) is made only inside an open compaction bracket.
  for (const { at } of run.summaryRequests) {
    let open = false
    for (let i = at - 1; i >= 0; i--) {
      const t = events[i]!.type
      if (t === 'compaction/start') { open = true; break }
      if (t === 'compaction/end') break
    }
    if (!open) throw failed(`a summary request at seq ${at} outside a compaction bracket`, run)
  }
  // R6 (with a compaction plugin).
  if (r6Enabled(run, opts)) {
    const cap = typeof opts.r6 === 'object' ? opts.r6.maxOverflowRetries : undefined
    const v = checkR6(events, {
      decisions: run.decisions,
      idleAt: run.statuses.filter((x) => x.status === 'idle').map((x) => x.at),
      ...(cap !== undefined ? { maxOverflowRetries: cap } : {}),
    })
    if (v !== null) throw failed(v, run)
  }
  // R5: after a cancel no request and no tool body starts in that turn; the turn ends aborted with the first cause.
  const firstCause = new Map<number, { cause: CancelCause; at: number }>()
  for (const c of run.cancels) if (!firstCause.has(c.turn)) firstCause.set(c.turn, c)
  for (const [turn, c] of firstCause) {
    if (run.requests.some((r) => r.turn === turn && r.at > c.at)) throw failed(`R5: a request started in turn ${turn} after its cancel`, run)
    if (run.bodies.started.some((b) => b.turn === turn && b.at > c.at)) throw failed(`R5: a tool body started in turn ${turn} after its cancel`, run)
    const end = events.find((e) => e.type === 'turn/end' && (e.data as { turn: number }).turn === turn)
    const reason = (end?.data as { reason: { kind: string; cause?: CancelCause } } | undefined)?.reason
    if (!reason || reason.kind !== 'aborted' || !isDeepStrictEqual(reason.cause, c.cause)) {
      throw failed(`R5: turn ${turn} must end aborted with the first cause ${JSON.stringify(c.cause)}, got ${JSON.stringify(reason)}`, run)
    }
  }
  // R4: at most maxParallelToolCalls bodies at once; a barrier body never overlaps another body;
  // pre-execute and post-execute hooks run in model order (the order of the step's tool calls).
  if (run.bodies.maxInFlight > run.maxParallel) throw failed(`R4: ${run.bodies.maxInFlight} bodies in flight with a cap of ${run.maxParallel}`, run)
  if (run.bodies.exclusiveOverlap) throw failed('R4: an exclusive body overlapped another body', run)
  const callOrder = new Map<string, string[]>()
  for (const e of events) {
    if (e.type !== 'assistant/message') continue
    const d = e.data as { turn: number; step: number; message: { content: Array<{ type: string; id?: string }> } }
    callOrder.set(`${d.turn}.${d.step}`, d.message.content.filter((b) => b.type === 'tool-call').map((b) => b.id!))
  }
  for (const [name, seen] of [['pre', run.preOrder], ['post', run.postOrder]] as const) {
    const bySteps = new Map<string, string[]>()
    for (const x of seen) bySteps.set(`${x.turn}.${x.step}`, [...(bySteps.get(`${x.turn}.${x.step}`) ?? []), x.callId])
    for (const [k, ids] of bySteps) {
      const order = callOrder.get(k) ?? []
      const idx = ids.map((id) => order.indexOf(id))
      if (idx.some((v, i) => v < 0 || (i > 0 && v <= idx[i - 1]!))) throw failed(`R4: ${name}-execute hooks out of model order in step ${k}: ${ids}`, run)
    }
  }
  // L11 (conservation, from the API side): every accepted id was logged as inserted.
  const inserted = new Set<string>()
  for (const e of events) if (e.type === 'agent/inbox/spliced') for (const m of (e.data as { inserted: Array<{ id: string }> }).inserted) inserted.add(m.id)
  for (const id of run.accepted) if (!inserted.has(id)) throw failed(`L11: accepted message ${id} never reached the log`, run)
}

/**
 * R6 over a log: returns the first violation, or null.
 * - From the log: a retry turn (`turn/start {cause: retry}`) of a turn that ended with
 *   `CONTEXT_WINDOW_EXCEEDED` follows a surface replacement logged after that turn's failed step.
 * - From the `agent/request-error` decisions (`decisions`, recorded by an outermost listener): an
 *   overflow retry only when a replacement was logged while the listeners ran and the turn was not
 *   cancelled; with `maxOverflowRetries`, at most that many overflow retries between resets (a
 *   non-interrupted `assistant/message`, or the agent going idle: `idleAt` = log lengths then).
 */
export function checkR6(
  events: readonly LogEvent[],
  opts: { decisions?: readonly OverflowDecision[]; idleAt?: readonly number[]; maxOverflowRetries?: number } = {},
): string | null {
  const replaced = (e: LogEvent) => e.surfaceOp !== undefined && e.surfaceOp !== 'append'
  const resets = [
    ...events.filter((e) => e.type === 'assistant/message' && e.surfaceOp === 'append' && !(e.data as { interrupted?: true }).interrupted).map((e) => e.seq),
    ...(opts.idleAt ?? []).map((at) => at - 1),
  ].sort((a, b) => a - b)
  let streak = 0
  let lastAt = -1
  for (const d of opts.decisions ?? []) {
    // a reset at or after the previous decision's start (a turn that failed and went idle at once
    // has its last event at that very seq) and before this one
    if (resets.some((r) => r >= lastAt && r < d.from)) streak = 0
    lastAt = d.from
    if (d.code !== 'CONTEXT_WINDOW_EXCEEDED' || !d.retry) continue
    if (!events.slice(d.from, d.to).some(replaced)) return `R6: an overflow retry at seq ${d.from} without a replacement`
    if (d.aborted) return `R6: an overflow retry at seq ${d.from} of a cancelled turn`
    if (opts.maxOverflowRetries !== undefined && ++streak > opts.maxOverflowRetries) {
      return `R6: ${streak} overflow retries in one chain (cap ${opts.maxOverflowRetries})`
    }
  }
  for (const e of events) {
    if (e.type !== 'turn/start' || !(e as EventOf<'turn/start'>).data.cause) continue
    const end = events[e.seq - 1] as EventOf<'turn/end'> | undefined
    if (end?.type !== 'turn/end' || end.data.reason.kind !== 'error' || end.data.reason.failure.code !== 'CONTEXT_WINDOW_EXCEEDED') continue
    let ok = false
    for (let i = end.seq - 1; i >= 0 && events[i]!.type !== 'step/end'; i--) if (replaced(events[i]!)) ok = true
    if (!ok) return `R6: retry turn at seq ${e.seq} after an overflow with no replacement`
  }
  return null
}

/** Runs the fuzzer; throws (with the shrunk scenario, seed and log) on the first failure. */
export async function fuzzAgent(opts: FuzzAgentOptions = {}): Promise<void> {
  const toolNames = [...FUZZ_TOOL_NAMES, ...(opts.tools ?? []).map((t) => t.name)]
  const maxSteps = opts.maxStepsPerTurn ?? 8
  await fc.assert(
    fc.asyncProperty(arbScenario(toolNames, opts), fc.scheduler(), arbCommands(opts.maxCommands ?? 12, opts.commands), async (sc, s, cmds) => {
      const run = buildRun(sc, s, opts)
      await fc.scheduledModelRun(s, () => ({ model: {}, real: run }), cmds)
      // Release whatever is still in flight until the agent reaches idle by itself (R8).
      await s.waitFor(Promise.all(run.deferred))
      await s.waitFor(run.agent.whenIdle())
      finalChecks(run, maxSteps, opts)
      // R7: whatever the hooks and the model did, the agent accepts and runs the next followup.
      const before = run.agent.events.filter((e) => e.type === 'turn/end').length
      run.agent.followup('final')
      await s.waitFor(run.agent.whenIdle())
      const after = run.agent.events.filter((e) => e.type === 'turn/end').length
      if (after <= before) throw failed('R7: the agent did not run a final followup', run)
      finalChecks(run, maxSteps, opts)
      opts.check?.({
        agent: run.agent, events: run.agent.events, plugins: run.plugins, decisions: run.decisions,
        idleAt: run.statuses.filter((x) => x.status === 'idle').map((x) => x.at), summaryRequests: run.summaryRequests,
      })
      opts.onRun?.(run.agent.events)
    }),
    { numRuns: opts.numRuns ?? 100, ...(opts.seed !== undefined ? { seed: opts.seed } : {}) },
  )
}

export type { Agent, HookMap, LogEvent }
