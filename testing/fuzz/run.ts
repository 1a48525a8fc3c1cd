/**
 * One run of the fuzzer: the agent built for a scenario (scripted model, the fuzzer's and the
 * user's tools, the scenario's hooks, fake clock and ids, instant timers), wired to the scheduler
 * and to the recorders the oracle reads (statuses, requests, cancels, errors, bodies, hook order),
 * with every user tool body and hook listener tracked for stuck detection.
 */
import type fc from 'fast-check'
import { createAgent, TurnlogAgent } from '../../agent/agent.js'
import type { AgentOptions, AgentPlugin, HookMap, RequestErrorDecision, Timers } from '../../agent/types.js'
import type { CancelCause } from '../../events/index.js'
import { scriptedModel, type ModelAdapter, type ModelRequest } from '../../models/index.js'
import type { AnyTool, ToolContext } from '../../tools/types.js'
import { fuzzExecuteHooks } from './approval-plan.js'
import { approvalTool, newApprovalRecorder, recordBodyStart, recordRequest, type ApprovalRecorder } from './approval-tool.js'
import { askTool, clientTool, newInputRecorder, recordRoundStart, type InputRecorder } from './input-tool.js'
import { memoryStore } from '../../stores/memory.js'
import { restarter } from './restart.js'
import type { LogStore } from '../../stores/types.js'
import { budgetOptions, FUZZ_USAGE, type FuzzBudget } from './budget.js'
import { bump } from './census.js'
import { childTool } from './children.js'
import { scenarioHooks, type HostileEnv, type Response, type Scenario, type SummaryPlan } from './scenario.js'
import { PendingCalls, Progress } from './stuck.js'
import { countBody, fuzzTools, newBodies, type Bodies } from './tools.js'
import type { FuzzAgentOptions, OverflowDecision } from './types.js'
import { hooksOf, toolsOf, trackHooks, trackOwn, trackTool, type Hooks } from './wrap.js'

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
  /** Every `agent.cancel` while a turn was open, whoever called it (R5 takes the first per turn). */
  cancels: Array<{ turn: number; cause: CancelCause; at: number; source: string }>
  /** Who is calling `cancel` now: `command` (a Cancel command), `fuzzer` (releasing a planned hang), else `hook` (a hook or plugin). */
  canceller: string
  /** Contained `agent/error`s, with the log's length when each was reported. */
  errors: Array<{ where: string; error: unknown; at: number }>
  bodies: Bodies
  maxParallel: number
  preOrder: Array<{ turn: number; step: number; callId: string }>
  postOrder: Array<{ turn: number; step: number; callId: string }>
  accepted: string[]
  /** Tool bodies started per tool name (census). */
  bodyCount: Record<string, number>
  /** Hostile scenario shapes that happened (census). */
  hostile: Record<string, number>
  progress: Progress
  pending: PendingCalls
  scheduler: fc.Scheduler
  /** The scenario's budget (`budgets: true`), or null. */
  budget: FuzzBudget | null
  /** R9/R10 bookkeeping (approvals.ts). */
  approvals: ApprovalRecorder
  /** R10/R11 bookkeeping of input rounds (inputs.ts). */
  inputs: InputRecorder
  /** Moves the fuzzer's clock forward (an expiry is due). */
  advanceClock(ms: number): void
  /** With children (`children: true`): the store the family's logs are in, every `fuzz_child` body
   * (drained before the checks), and what the children did (census). Else null and empty. */
  store: LogStore | null
  childBodies: Array<Promise<unknown>>
  children: Record<string, number>
  /**
   * With approvals (`approvals: true`): ends the parked agent (`dispose`, or a `crash`: dropped
   * without dispose, its timers fenced) and resumes the session with `resumeAgent` (restart.ts);
   * the run goes on with the resumed agent. Null without approvals and input rounds.
   */
  restart: ((kind: 'dispose' | 'crash') => Promise<void>) | null
  /** What the restarts did (census: `parked: …`). */
  restarts: Record<string, number>
}

function summaryResponse(plan: SummaryPlan, run: Run): Response {
  switch (plan) {
    case 'short': return { text: 'sum', usage: { inputTokens: 500, outputTokens: 3 } }
    case 'long': return { text: 's'.repeat(20_000) }
    case 'empty': return { reasoning: 'r', text: ' ' }
    case 'error': return { error: { code: 'SERVER' } }
    case 'throw': return { throw: new Error('summariser down') }
    case 'cancel': {
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

/**
 * The agent's timers: no sleep (retry backoff), and every timer (the cancel grace period, tool
 * timeouts) fires when the scheduler releases it, so when a grace period runs out is one more
 * interleaving the fuzzer explores, deterministically (a seed and path replay it).
 */
export function scheduledTimers(s: fc.Scheduler, progress: Progress, live: () => boolean = () => true): Timers {
  return {
    sleep: async () => {},
    random: () => 0.5,
    setTimeout: (fn, ms) => {
      const handle = { cleared: false }
      void s.schedule(Promise.resolve(), `timer ${ms} ms`).then(() => {
        // a crashed agent's timer never fires (a killed process runs nothing)
        if (handle.cleared || !live()) return
        progress.tick()
        fn()
      })
      return handle
    },
    clearTimeout: (h) => {
      if (typeof h === 'object' && h !== null) (h as { cleared: boolean }).cleared = true
    },
  }
}

/**
 * R4/R5 bookkeeping of a parent's `fuzz_child` body (an exclusive tool, as `defineSubagent` makes
 * it): it starts alone, and it stops counting when it settles or its signal aborts (the agent frees
 * the slot of a call it abandons), as the fuzzer's own bodies do (tools.ts `countBody`).
 */
function countExclusiveBody(bodies: Bodies, ctx: ToolContext, done: Promise<unknown>, at: number): void {
  const uncount = countBody(bodies, ctx.turn, at, true)
  ctx.signal.addEventListener('abort', uncount, { once: true })
  void done.finally(uncount).catch(() => {})
}

/** Builds the agent for one scenario, wired to the scheduler and the recorders. */
export function buildRun(sc: Scenario, s: fc.Scheduler, opts: FuzzAgentOptions): Run {
  const run = {} as Run
  run.progress = new Progress()
  run.pending = new PendingCalls(run.progress)
  run.scheduler = s
  const schedule = () => s.schedule(Promise.resolve(), 'settle').then(() => run.progress.tick())
  run.statuses = []
  run.requests = []
  run.cancels = []
  run.canceller = 'hook'
  run.errors = []
  run.accepted = []
  run.bodies = newBodies()
  run.bodyCount = {}
  run.hostile = {}
  run.maxParallel = sc.maxParallel
  run.preOrder = []
  run.postOrder = []
  run.decisions = []
  run.summaryRequests = []
  run.deferred = []
  run.plugins = pluginsOf(sc, opts)
  run.budget = sc.budget ?? null
  run.approvals = newApprovalRecorder()
  run.inputs = newInputRecorder()
  let now = 0
  run.advanceClock = (ms) => {
    now += ms
  }
  const clock = () => now++
  run.childBodies = []
  run.children = {}
  run.store = sc.children !== undefined ? memoryStore({ clock: () => 0 }) : null
  // with approvals the session is in a memory store (children's or its own): a disposed parked
  // agent is resumed from it (restart.ts)
  const parks = opts.approvals === true || opts.inputs === true
  const sessionStore: LogStore | null = run.store ?? (parks ? memoryStore({ clock: () => 0 }) : null)
  run.restarts = {}
  const hostile: HostileEnv | undefined = sc.toolPlans === undefined ? undefined : {
    hang(what, signal) {
      bump(run.hostile, `hang ${what}`)
      // what a user does about a stuck turn: cancel it (when the scheduler says); the grace period
      // then abandons the hang, and R5 must hold
      void s.schedule(Promise.resolve(), `cancel: ${what} hangs`).then(() => {
        if (signal.aborted) return
        run.canceller = 'fuzzer'
        try {
          run.agent.cancel({ kind: 'user' }, { keepInbox: true })
        } finally {
          run.canceller = 'hook'
        }
      })
      return new Promise<never>(() => {})
    },
  }
  const toolPlan = { toolFails: sc.toolFails, ...(sc.toolPlans ? { toolPlans: sc.toolPlans } : {}), i: 0 }
  const sizes = opts.largeOutputs ? (opts.largeOutputs === true ? DEFAULT_SIZES : opts.largeOutputs) : null
  const eventsLen = () => run.agent?.events.length ?? 0
  const own = opts.ownToolsOnly ? [] : fuzzTools(schedule, toolPlan, run.bodies, eventsLen, sizes, hostile)
  if (opts.approvals === true && !opts.ownToolsOnly) own.push(approvalTool(schedule))
  if (opts.inputs === true && !opts.ownToolsOnly) own.push(askTool(schedule, run.inputs), clientTool())
  if (sc.children !== undefined && !opts.ownToolsOnly) {
    own.push(childTool({
      plans: sc.children, schedule, clock, timers: scheduledTimers(s, run.progress),
      cancelParent: (running) => {
        void s.schedule(Promise.resolve(), 'cancel: the parent while a child runs').then(() => {
          if (!running()) return
          run.canceller = 'command'
          try {
            run.agent.cancel({ kind: 'user' })
          } finally {
            run.canceller = 'hook'
          }
        })
      },
      onBody: (ctx, done, depth) => {
        run.childBodies.push(done.catch(() => {}))
        if (depth === 1) countExclusiveBody(run.bodies, ctx, done, eventsLen())
      },
    }))
  }
  const onBody = (name: string, ctx: ToolContext) => {
    recordBodyStart(run.agent, run.approvals, ctx)
    recordRoundStart(run.agent, run.inputs, ctx)
    run.bodyCount[name] = (run.bodyCount[name] ?? 0) + 1
    // the fuzzer's own bodies record themselves (with R4's bookkeeping)
    if (!name.startsWith('fuzz_')) run.bodies.started.push({ turn: ctx.turn, at: eventsLen() })
  }
  const tools: AnyTool[] = [...toolsOf(opts), ...own].map((t) => trackTool(t, run.pending, onBody))
  const bounded = opts.overflow === true || run.plugins.length > 0
  let turnRequests = 0
  let summaryRequests = 0
  // with a budget, every shorthand response reports usage (its own wins), so token limits count
  const withUsage = (r: Response): Response =>
    run.budget === null || Array.isArray(r) || typeof r !== 'object' || r === null || 'chunks' in r || 'usage' in r ? r : { ...r, usage: FUZZ_USAGE }
  const inner = scriptedModel(
    (req, i) => {
      if (req.purpose === 'compaction' && sc.summaries) return summaryResponse(sc.summaries[summaryRequests++ % sc.summaries.length]!, run)
      if (!bounded) return withUsage(sc.responses[i % sc.responses.length]!)
      return turnRequests >= MAX_TURN_REQUESTS ? { text: 'enough' } : withUsage(sc.responses[turnRequests++ % sc.responses.length]!)
    },
    { beforeChunk: () => schedule(), info: { name: 'fuzz' } },
  )
  const model: ModelAdapter = {
    info: inner.info,
    stream(request, signal) {
      const at = run.agent.events.length
      recordRequest(run.agent, run.approvals)
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
  const userHooks: Hooks = trackHooks(hooksOf(opts), run.pending)
  const userRequestError = userHooks['agent/request-error']
  const hooks: AgentOptions['hooks'] = run.plugins.length === 0 ? userHooks : {
    ...userHooks,
    'agent/request-error': [recordDecision, ...(userRequestError === undefined ? [] : Array.isArray(userRequestError) ? userRequestError : [userRequestError as HookMap['agent/request-error']])],
  }
  // one id generator for the run: a resumed agent goes on from where the first one stopped
  const ids = (() => { let n = 0; return () => `f${++n}` })()
  const options = (live: () => boolean): AgentOptions => ({
    model,
    tools,
    system: 'fuzz',
    clock,
    ...(sessionStore !== null ? { store: sessionStore, sessionId: 'fuzz' } : {}),
    ids,
    timers: scheduledTimers(s, run.progress, live),
    checkRequests: 'full',
    maxStepsPerTurn: opts.maxStepsPerTurn ?? 8,
    maxParallelToolCalls: sc.maxParallel,
    hooks,
    ...(run.plugins.length > 0 ? { plugins: run.plugins } : {}),
    ...(run.budget !== null ? { budget: budgetOptions(run.budget) } : {}),
  })
  // the listeners are made once per run (their plans go on across a restart) and installed on each agent:
  // the fuzzer's own pre-execute (its `ask`) and post-execute, with the scenario's approval plan (approval-plan.ts)
  const execute = fuzzExecuteHooks(run, sc.approvalPlan, opts.approvals === true, schedule)
  const pre = trackOwn('tools/pre-execute', execute.pre, run.pending)
  // tracked only with a plan (it may wait): without one it is the earlier untracked listener, so fixed seeds keep their runs
  const post = sc.approvalPlan ? trackOwn('tools/post-execute', execute.post, run.pending) : execute.post
  const plans = scenarioHooks(sc, schedule, (id) => run.accepted.push(id), hostile)
  const preStep = trackOwn('agent/pre-step', plans['agent/pre-step'], run.pending)
  const turnStopping = trackOwn('agent/turn-stopping', plans['agent/turn-stopping'], run.pending)
  const wire = (agent: TurnlogAgent): void => {
    run.agent = agent
    // Every cancel, from a command, a user hook or a plugin, is what R5 is about (a hook may cancel:
    // the docs suggest it). Recorded before the call: the first cause per turn is the one that counts.
    const cancel = agent.cancel.bind(agent)
    agent.cancel = (cause: CancelCause = { kind: 'user' }, o?: { keepInbox?: boolean }) => {
      const turn = agent.lifecycle.openTurn
      if (agent.status === 'running' && turn !== null) run.cancels.push({ turn, cause, at: agent.events.length, source: run.canceller })
      cancel(cause, o)
    }
    agent.subscribe(() => run.progress.tick())
    agent.on('agent/status', ({ status }) => run.statuses.push({ status, at: agent.events.length }))
    agent.on('agent/error', ({ where, error }) => run.errors.push({ where, error, at: agent.events.length }))
    agent.on('tools/pre-execute', pre)
    agent.on('tools/post-execute', post)
    agent.on('agent/pre-step', preStep)
    agent.on('agent/turn-stopping', turnStopping)
  }
  const first = createAgent(options(() => run.agent === first)) as TurnlogAgent
  wire(first)
  run.restart = parks ? restarter(run, sessionStore, sc.children === undefined, options, wire) : null
  return run
}
