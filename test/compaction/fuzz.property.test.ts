/**
 * The agent fuzzer's scenarios (inbox operations, model behaviours, hook decisions, tool outcomes,
 * cancels, fc.scheduler interleavings; pieces copied from testing/fuzz-agent.ts, which is not
 * edited) plus: the compaction plugin on a small context window, `CONTEXT_WINDOW_EXCEEDED`
 * failures, large tool outputs, summariser failures, cancels during a summary and manual
 * compactions. Each run checks every L invariant with `verify` (L14, L15 among them), R3 for every
 * turn request, R6 from the plugin's recorded decisions and from the log, and that the live meter
 * equals the meter folded from the whole log.
 */
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, type TurnlogAgent } from '../../agent/index.js'
import type { RequestErrorDecision, Timers } from '../../agent/types.js'
import { basicCompaction, ContextMeter, type CompactionOptions, type CompactionPlugin } from '../../compaction/index.js'
import type { CancelCause, EventOf, LogEvent, StreamChunk } from '../../events/index.js'
import { scriptedModel, type ModelAdapter, type ModelRequest, type ScriptedEntry } from '../../models/index.js'
import { historyReducer } from '../../reducers/history.js'
import { verify } from '../../replay/verify.js'
import { defineTool, type AnyTool } from '../../tools/index.js'

const RUNS = Number(process.env.TURNLOG_COMPACTION_FUZZ_RUNS ?? 300)
const PRUNE = { pruneThresholdChars: 1000, pruneHead: 400, pruneTail: 200 }

type PreStepPlan = 'next' | 'reject' | 'throw' | 'empty' | 'hook-message'
type SummaryPlan = 'short' | 'long' | 'error' | 'throw' | 'cancel'

interface Scenario {
  responses: ScriptedEntry[]
  summaries: SummaryPlan[]
  preStep: PreStepPlan[]
  steerAtStop: boolean[]
  toolFails: boolean[]
  maxParallel: number
  compaction: CompactionOptions
}

const TOOLS = ['fuzz_big', 'fuzz_exclusive', 'no_such_tool'] as const

function arbResponse(): fc.Arbitrary<ScriptedEntry> {
  const text = fc.string({ minLength: 1, maxLength: 12 })
  const call = fc.record({
    name: fc.constantFrom(...TOOLS),
    args: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(100, 1500, 4000).map((n): unknown => ({ n })) },
      { weight: 1, arbitrary: fc.constant<unknown>({ wrong: true }) },
    ),
  })
  const broken: StreamChunk[] = [{ type: 'block-start', index: 0, blockType: 'text' }, { type: 'finish', reason: 'stop' }]
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ text, chunkSize: fc.integer({ min: 1, max: 4 }) }) },
    { weight: 1, arbitrary: fc.record({ text, usage: fc.record({ inputTokens: fc.nat(3000), outputTokens: fc.nat(50) }) }) },
    { weight: 5, arbitrary: fc.record({ toolCalls: fc.array(call, { minLength: 1, maxLength: 3 }) }) },
    { weight: 4, arbitrary: fc.constant<ScriptedEntry>({ error: { code: 'CONTEXT_WINDOW_EXCEEDED' } }) },
    { weight: 1, arbitrary: fc.constant<ScriptedEntry>({ throw: { code: 'CONTEXT_WINDOW_EXCEEDED', status: 413 } }) },
    { weight: 1, arbitrary: fc.record({ error: fc.record({ code: fc.constantFrom('RATE_LIMIT', 'SERVER', 'QUOTA') }) }) },
    { weight: 1, arbitrary: fc.record({ text, maxTokens: fc.constant(true) }) },
    { weight: 1, arbitrary: fc.constant<ScriptedEntry>(broken) },
    { weight: 1, arbitrary: fc.record({ text, failAfter: fc.integer({ min: 1, max: 3 }) }) },
  )
}

function arbScenario(): fc.Arbitrary<Scenario> {
  return fc.record({
    responses: fc.array(arbResponse(), { minLength: 1, maxLength: 12 }),
    summaries: fc.array(fc.constantFrom<SummaryPlan>('short', 'short', 'short', 'long', 'error', 'throw', 'cancel'), { minLength: 1, maxLength: 5 }),
    preStep: fc.array(fc.constantFrom<PreStepPlan>('next', 'next', 'next', 'next', 'next', 'reject', 'throw', 'empty', 'hook-message'), { minLength: 1, maxLength: 8 }),
    steerAtStop: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
    toolFails: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
    maxParallel: fc.integer({ min: 1, max: 3 }),
    compaction: fc.record({
      contextWindow: fc.constantFrom(600, 1000, 2000, undefined),
      maxOverflowRetries: fc.integer({ min: 0, max: 2 }),
      compactionRetries: fc.integer({ min: 0, max: 1 }),
      retainRatio: fc.constantFrom(0.16, 0.3),
      minRangeTokens: fc.constantFrom(0, 0, undefined),
    }, { requiredKeys: ['maxOverflowRetries', 'compactionRetries', 'retainRatio'] }).map((c) => ({ ...c, ...PRUNE })),
  })
}

interface Decision { code: string; from: number; to: number; decision: RequestErrorDecision; aborted: boolean }

interface Run {
  agent: TurnlogAgent
  plugin: CompactionPlugin
  maxOverflowRetries: number
  turnRequests: Array<{ request: ModelRequest; at: number }>
  summaryRequests: Array<{ request: ModelRequest; at: number }>
  decisions: Decision[]
  /** Manual compactions in flight. */
  manual: Array<Promise<void>>
  statuses: Array<{ status: string; at: number }>
  cancels: Array<{ turn: number; cause: CancelCause }>
  errors: Array<{ where: string; error: unknown }>
}

const instant: Timers = {
  sleep: async () => {},
  random: () => 0.5,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
}

function buildRun(sc: Scenario, s: fc.Scheduler): Run {
  const schedule = () => s.schedule(Promise.resolve(), 'settle').then(() => {})
  const run = { turnRequests: [], summaryRequests: [], decisions: [], manual: [], statuses: [], cancels: [], errors: [] } as unknown as Run
  run.maxOverflowRetries = sc.compaction.maxOverflowRetries ?? 1
  let fails = 0
  const body = (fail: boolean) => async ({ n }: { n: number }) => {
    await schedule()
    if (fail) throw new Error('fuzz tool failure')
    return 'x'.repeat(n)
  }
  const nextFail = () => sc.toolFails[fails++ % sc.toolFails.length] ?? false
  const tools: AnyTool[] = [
    defineTool({ name: 'fuzz_big', description: 'n chars', parameters: z.object({ n: z.number() }), isConcurrencySafe: () => true, execute: (a) => body(nextFail())(a) }),
    defineTool({ name: 'fuzz_exclusive', description: 'n chars', parameters: z.object({ n: z.number() }), execute: (a) => body(nextFail())(a) }),
  ] as AnyTool[]
  let t = 0
  let u = 0
  const inner = scriptedModel((req) => {
    if (req.purpose !== 'compaction') return sc.responses[t++ % sc.responses.length]!
    const plan = sc.summaries[u++ % sc.summaries.length]!
    switch (plan) {
      case 'short': return { text: 'sum' }
      case 'long': return { text: 's'.repeat(20_000) }
      case 'error': return { error: { code: 'SERVER' } }
      case 'throw': return { throw: new Error('summariser down') }
      case 'cancel': {
        const turn = run.agent.lifecycle.openTurn
        if (run.agent.status === 'running' && turn !== null) run.cancels.push({ turn, cause: { kind: 'user' } })
        run.agent.cancel({ kind: 'user' })
        return { text: 'sum' }
      }
    }
  }, { beforeChunk: () => schedule(), info: { name: 'fuzz' } })
  const model: ModelAdapter = {
    info: inner.info,
    stream(request, signal) {
      ;(request.purpose === 'compaction' ? run.summaryRequests : run.turnRequests).push({ request, at: run.agent.events.length })
      return inner.stream(request, signal)
    },
  }
  run.plugin = basicCompaction(sc.compaction)
  let pre = 0
  let stop = 0
  let hookMsg = 0
  const agent = createAgent({
    model,
    tools,
    system: 'fuzz',
    clock: (() => { let c = 0; return () => c++ })(),
    ids: (() => { let n = 0; return () => `f${++n}` })(),
    timers: instant,
    checkRequests: 'full',
    maxStepsPerTurn: 8,
    maxParallelToolCalls: sc.maxParallel,
    plugins: [run.plugin],
    hooks: {
      // Outermost (options.hooks come before plugins): records what the listeners inside decided.
      'agent/request-error': async (p, next) => {
        const from = run.agent.events.length
        const decision = await next()
        run.decisions.push({ code: p.failure.code, from, to: run.agent.events.length, decision, aborted: p.signal.aborted })
        return decision
      },
    },
  }) as TurnlogAgent
  run.agent = agent
  agent.on('agent/status', ({ status }) => run.statuses.push({ status, at: agent.events.length }))
  agent.on('agent/error', ({ where, error }) => run.errors.push({ where, error }))
  agent.on('agent/pre-step', async (p, next) => {
    await schedule()
    const plan = sc.preStep[pre++ % sc.preStep.length]!
    if (plan === 'reject') return { kind: 'reject' }
    if (plan === 'throw') throw new Error('fuzz pre-step throws')
    if (plan === 'empty') return { kind: 'enter', messages: [] }
    if (plan === 'hook-message') {
      return next({ ...p, messages: [...p.messages, { id: `h${++hookMsg}`, role: 'user', content: [{ type: 'text', text: 'hook' }], source: { kind: 'hook', name: 'fuzz' } }] })
    }
    return next()
  })
  agent.on('agent/turn-stopping', async ({ agent: a }) => {
    await schedule()
    if (sc.steerAtStop[stop++ % sc.steerAtStop.length] && stop < 4) a.steer('more')
  })
  return run
}

type Cmd = fc.AsyncCommand<object, Run>
class Send implements Cmd {
  constructor(readonly kind: 'followup' | 'steer' | 'inject', readonly text: string) {}
  check = () => true
  async run(_m: object, r: Run) { r.agent[this.kind](this.text) }
  toString = () => `${this.kind}(${JSON.stringify(this.text)})`
}
class Cancel implements Cmd {
  constructor(readonly keepInbox: boolean) {}
  check = () => true
  async run(_m: object, r: Run) {
    const turn = r.agent.lifecycle.openTurn
    if (r.agent.status === 'running' && turn !== null) r.cancels.push({ turn, cause: { kind: 'user' } })
    r.agent.cancel({ kind: 'user' }, { keepInbox: this.keepInbox })
  }
  toString = () => `cancel(keepInbox=${this.keepInbox})`
}
/** A manual compaction. Not awaited here (its summary call waits on the scheduler): the run awaits it later. */
class CompactNow implements Cmd {
  check = () => true
  async run(_m: object, r: Run) {
    const running = r.agent.status === 'running'
    r.manual.push(r.plugin.compactNow(r.agent).then(
      (report) => {
        if (running) throw new Error('compactNow ran while the agent was running')
        if (report.summaries.some((x) => x.kind === 'compacted') && !report.advanced) throw new Error('a compacted report that did not advance')
      },
      (err) => {
        if ((err as { code?: string }).code !== 'AGENT_BUSY') throw err
      },
    ))
  }
  toString = () => 'compactNow()'
}

function arbCommands() {
  return fc.commands([
    fc.tuple(fc.constantFrom('followup', 'steer', 'inject') as fc.Arbitrary<'followup' | 'steer' | 'inject'>, fc.string({ maxLength: 8 })).map(([k, t]) => new Send(k, t)),
    fc.boolean().map((k) => new Cancel(k)),
    fc.constant(new CompactNow()),
  ], { maxCommands: 10 })
}

const fail = (msg: string, run: Run) => new Error(`${msg}\nlog:\n${run.agent.events.map((e) => JSON.stringify(e)).join('\n')}`)

function checks(run: Run): void {
  const events = run.agent.events
  // L1–L16 (L14 brackets, L15 prune → replacing result), as verify decides them.
  const v = verify(events, { maxStepsPerTurn: 8, maxRetries: 5 })
  if (!v.ok) throw fail(`log invariants: ${v.violations.slice(0, 3).map((x) => `${x.invariant}@${x.seq} ${x.message}`).join('; ')}`, run)
  const defects = run.errors.filter((e) => e.where === 'driver')
  if (defects.length) throw fail(`driver defect: ${String((defects[0]!.error as Error)?.stack ?? defects[0]!.error)}`, run)
  if (run.agent.status !== 'idle') throw fail('R8: not idle at the end', run)
  // R3: each turn request equals the request rebuilt from the log at that seq.
  for (const { request, at } of run.turnRequests) {
    const h = historyReducer.initial()
    for (let i = 0; i < at; i++) historyReducer.apply(h, events[i]!)
    const header = [...events.slice(0, at)].reverse().find((e) => e.type === 'request/header')?.data as { system: string; tools: unknown } | undefined
    if (!header || !isDeepStrictEqual(request.messages, h.messages) || request.system !== header.system || !isDeepStrictEqual(request.tools, header.tools)) {
      throw fail(`R3: the request at seq ${at} differs from the log`, run)
    }
  }
  // A summary request is made only inside an open compaction bracket, from the logged surface.
  for (const { request, at } of run.summaryRequests) {
    const open = [...events.slice(0, at)].reverse().find((e) => e.type === 'compaction/start' || e.type === 'compaction/end')
    if (open?.type !== 'compaction/start') throw fail(`a summary request at seq ${at} outside a compaction bracket`, run)
    if (request.purpose !== 'compaction') throw fail('a summary request without purpose compaction', run)
  }
  // R6 from the decisions: an overflow retry only when the generation advanced during the recovery
  // and the turn was not cancelled; at most maxOverflowRetries between resets (success or idle).
  const resets = [
    ...events.filter((e) => e.type === 'assistant/message' && e.surfaceOp === 'append' && !(e.data as { interrupted?: true }).interrupted).map((e) => e.seq),
    ...run.statuses.filter((x) => x.status === 'idle').map((x) => x.at - 1),
  ].sort((a, b) => a - b)
  let streak = 0
  let lastAt = -1
  for (const d of run.decisions) {
    if (resets.some((r) => r > lastAt && r < d.from)) streak = 0
    lastAt = d.from
    if (d.code !== 'CONTEXT_WINDOW_EXCEEDED' || d.decision?.kind !== 'retry') continue
    const advanced = events.slice(d.from, d.to).some((e) => e.surfaceOp !== undefined && e.surfaceOp !== 'append')
    if (!advanced) throw fail(`R6: an overflow retry at seq ${d.from} without a replacement`, run)
    if (d.aborted) throw fail(`R6: an overflow retry at seq ${d.from} of a cancelled turn`, run)
    if (++streak > run.maxOverflowRetries) throw fail(`R6: ${streak} overflow retries in one chain (cap ${run.maxOverflowRetries})`, run)
  }
  // R6 from the log: a retry of a turn that failed on overflow follows a replacement in that turn.
  for (const e of events) {
    if (e.type !== 'turn/start' || !(e as EventOf<'turn/start'>).data.cause) continue
    const end = events[e.seq - 1] as EventOf<'turn/end'>
    if (end.data.reason.kind !== 'error' || end.data.reason.failure.code !== 'CONTEXT_WINDOW_EXCEEDED') continue
    let i = end.seq - 1
    let replaced = false
    for (; i >= 0 && events[i]!.type !== 'step/end'; i--) if (events[i]!.surfaceOp !== undefined && events[i]!.surfaceOp !== 'append') replaced = true
    if (!replaced) throw fail(`R6: retry turn at seq ${e.seq} after an overflow with no replacement`, run)
  }
  // Cancellation beats retry: a cancelled turn ends aborted, and no retry turn follows it (L13 too).
  for (const c of run.cancels) {
    const end = events.find((e) => e.type === 'turn/end' && (e as EventOf<'turn/end'>).data.turn === c.turn) as EventOf<'turn/end'> | undefined
    if (end?.data.reason.kind !== 'aborted') throw fail(`turn ${c.turn} was cancelled but ended ${JSON.stringify(end?.data.reason)}`, run)
  }
  // Pruning is idempotent: every pruned result is at or under the threshold.
  for (const e of events) {
    if (e.type !== 'compaction/prune') continue
    const r = events[e.seq + 1] as EventOf<'tool/result'>
    const chars = r.data.message.content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : 0), 0)
    if (chars > PRUNE.pruneThresholdChars) throw fail(`a pruned result of ${chars} characters`, run)
  }
  // The meter projection (folded live, event by event) equals the meter folded from the whole log.
  const live = run.plugin.measure(run.agent)
  const folded = ContextMeter.fromLog(events, { pruneThresholdChars: PRUNE.pruneThresholdChars }).measure()
  if (!isDeepStrictEqual({ ...live, window: undefined }, { ...folded, window: undefined })) throw fail(`meter ${JSON.stringify(live)} vs ${JSON.stringify(folded)}`, run)
}

describe('compaction under the agent fuzzer', () => {
  it(`L14, L15, R6, R3: ${RUNS} scheduled runs with a small window, overflows, large outputs and summariser failures`, async () => {
    const seen = new Map<string, number>()
    const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1)
    await fc.assert(
      fc.asyncProperty(arbScenario(), fc.scheduler(), arbCommands(), async (sc, s, cmds) => {
        const run = buildRun(sc, s)
        await fc.scheduledModelRun(s, () => ({ model: {}, real: run }), cmds)
        await s.waitFor(Promise.all(run.manual))
        await s.waitFor(run.agent.whenIdle())
        checks(run)
        run.agent.followup('final')
        await s.waitFor(run.agent.whenIdle())
        checks(run)
        for (const e of run.agent.events) {
          if (e.type === 'compaction/prune') count('prune')
          else if (e.type === 'compaction/summary') count('summary')
          else if (e.type === 'compaction/end' && (e.data as { error?: { code: string } }).error) count(`end ${(e.data as { error: { code: string } }).error.code}`)
        }
        for (const d of run.decisions) if (d.code === 'CONTEXT_WINDOW_EXCEEDED') count(d.decision?.kind === 'retry' ? 'overflow retry' : 'overflow stands')
      }),
      { numRuns: RUNS },
    )
    if (process.env.TURNLOG_CENSUS) console.log(JSON.stringify([...seen]))
    // The scenarios must reach what they claim to test.
    for (const k of ['prune', 'summary', 'overflow retry', 'overflow stands', 'end SUMMARY_NOT_SMALLER', 'end SERVER']) {
      expect(seen.get(k) ?? 0, k).toBeGreaterThan(0)
    }
  })
})
