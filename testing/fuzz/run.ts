/**
 * One run of the fuzzer: the agent built for a scenario (scripted model, the fuzzer's and the
 * user's tools, the scenario's hooks, fake clock and ids, instant timers), wired to the scheduler
 * and to the recorders the oracle reads (statuses, requests, cancels, errors, bodies, hook order).
 */
import type fc from 'fast-check'
import { createAgent, TurnlogAgent } from '../../agent/agent.js'
import type { AgentOptions, AgentPlugin, HookMap, RequestErrorDecision, Timers } from '../../agent/types.js'
import type { CancelCause } from '../../events/index.js'
import { scriptedModel, type ModelAdapter, type ModelRequest } from '../../models/index.js'
import { scenarioHooks, type Response, type Scenario, type SummaryPlan } from './scenario.js'
import { fuzzTools, newBodies, type Bodies } from './tools.js'
import type { FuzzAgentOptions, OverflowDecision } from './types.js'

/** With overflow or plugins, past this many turn requests the model answers text, so every run
 * ends: an overflow → compaction → retry → success → overflow … cycle never goes idle. */
const MAX_TURN_REQUESTS = 80
const DEFAULT_SIZES = [100, 1500, 4000, 12_000] as const

export interface Run {
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

export function r6Enabled(run: Run, opts: FuzzAgentOptions): boolean {
  return opts.r6 === undefined ? run.plugins.some((p) => p.name === 'compaction') : opts.r6 !== false
}

const instant: Timers = {
  sleep: async () => {},
  random: () => 0.5,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
}

/** Builds the agent for one scenario, wired to the scheduler and the recorders. */
export function buildRun(sc: Scenario, s: fc.Scheduler, opts: FuzzAgentOptions): Run {
  const schedule = () => s.schedule(Promise.resolve(), 'settle').then(() => {})
  const run = {} as Run
  run.statuses = []
  run.requests = []
  run.cancels = []
  run.errors = []
  run.accepted = []
  run.bodies = newBodies()
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
