/**
 * Agent runs generated like `fuzzAgent`'s (testing/fuzz/): scripted model behaviours,
 * hook plans, tool outcomes, inbox commands and cancels, interleaved by `fc.scheduler`. Each run
 * records its log and keeps what a re-execution needs: the same tools (names, schemas,
 * classifiers) and the same hook logic (built again without the scheduler's waits).
 */
import fc from 'fast-check'
import { z } from 'zod'
import { createAgent, type TurnlogAgent } from '../../agent/agent.js'
import type { AgentOptions, HookMap, Timers } from '../../agent/types.js'
import type { CancelCause, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import {
  arbScenario as fuzzScenario, scenarioHooks as fuzzScenarioHooks,
  type PreStepPlan, type Scenario, type StoppingPlan,
} from '../../testing/fuzz/scenario.js'

export type { PreStepPlan, Scenario, StoppingPlan }

export type Command =
  | { kind: 'followup' | 'steer' | 'inject'; text: string }
  | { kind: 'burst'; n: number }
  | { kind: 'remove' | 'replace'; pick: number }
  | { kind: 'clear' }
  | { kind: 'cancel'; cause: CancelCause; keepInbox: boolean }
  /** Let the scheduler release up to n pending tasks (model chunks, hook waits, tool bodies). */
  | { kind: 'wait'; n: number }

export const MAX_STEPS = 8
export const TOOL_NAMES = ['fuzz_parallel', 'fuzz_exclusive', 'fuzz_throw', 'no_such_tool'] as const

/** The fuzzer's scenario generator (testing/fuzz/), with its own tool names; `providerStreams`
 * adds responses with provider data, whole blocks and refusals (issue 23; off: fixed seeds keep
 * their scenarios). */
export function arbScenario(opts: { providerStreams?: boolean } = {}): fc.Arbitrary<Scenario> {
  return fuzzScenario(TOOL_NAMES, {}, {}, false, opts.providerStreams === true)
}

export function arbCommandList(max = 14): fc.Arbitrary<Command[]> {
  const text = fc.string({ maxLength: 8 })
  const cause = fc.oneof(
    fc.constant<CancelCause>({ kind: 'user' }),
    fc.constant<CancelCause>({ kind: 'parent' }),
    fc.string({ maxLength: 5 }).map((reason): CancelCause => ({ kind: 'hook', reason })),
  )
  return fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constantFrom('followup' as const, 'steer' as const, 'inject' as const), text }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('burst' as const), n: fc.integer({ min: 2, max: 4 }) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('remove' as const, 'replace' as const), pick: fc.nat(9) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), cause, keepInbox: fc.boolean() }) },
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('wait' as const), n: fc.integer({ min: 1, max: 12 }) }) },
    ),
    { minLength: 1, maxLength: max },
  )
}

/** The fuzzer's tools. `body` runs for the recorded run; a re-execution only needs the definitions. */
export function fuzzTools(body?: (fail: boolean) => Promise<unknown>, fails?: () => boolean): AnyTool[] {
  const run = (fail: boolean) => (body ? body(fail) : Promise.resolve({ ok: true }))
  const next = fails ?? (() => false)
  return [
    defineTool({ name: 'fuzz_parallel', description: 'parallel-safe', parameters: z.object({ n: z.number() }), isConcurrencySafe: () => true, execute: () => run(next()) }),
    defineTool({ name: 'fuzz_exclusive', description: 'exclusive', parameters: z.object({ n: z.number() }), execute: () => run(next()) }),
    defineTool({ name: 'fuzz_throw', description: 'always throws', parameters: z.object({ n: z.number() }), execute: () => run(true) }),
  ] as AnyTool[]
}

/** The scenario's hooks: the fuzzer's pre-step and turn-stopping plans, plus a wait before each
 * tool pre-execute. `wait` is the recorded run's scheduler wait (none in a re-execution). */
export function scenarioHooks(sc: Scenario, wait: () => Promise<void> = async () => {}): Partial<{ [K in keyof HookMap]: HookMap[K] }> {
  return {
    ...fuzzScenarioHooks(sc, wait),
    'tools/pre-execute': async (_p, next) => {
      await wait()
      return next()
    },
  }
}

export const instantTimers: Timers = {
  sleep: async () => {},
  random: () => 0.5,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
}

export interface RecordedRun {
  events: readonly LogEvent[]
  agent: TurnlogAgent
  /** Options that re-create the run's agent for `reexecute`. */
  reexec: { tools: AnyTool[]; hooks: () => AgentOptions['hooks']; maxParallelToolCalls: number; maxStepsPerTurn: number }
}

export function fakeClock(): () => number {
  let t = 1_764_450_000_000
  return () => (t += 7)
}

/** Runs one scenario with `s` interleaving model chunks, hook waits and tool bodies. */
export async function recordRun(
  sc: Scenario,
  s: fc.Scheduler,
  cmds: readonly Command[],
  extra: {
    onAgent?: (a: TurnlogAgent) => void
    finalFollowup?: boolean
    /** Hooks other than the scenario's (given the scheduler's wait). */
    hooks?: (wait: () => Promise<void>) => AgentOptions['hooks']
  } = {},
): Promise<RecordedRun> {
  const wait = () => s.schedule(Promise.resolve(), 'settle').then(() => {})
  let failIdx = 0
  const tools = fuzzTools(async (fail) => {
    await wait()
    if (fail) throw new Error('fuzz tool failure')
    return { ok: true }
  }, () => sc.toolFails[failIdx++ % sc.toolFails.length] ?? false)
  const model = scriptedModel((_req, i) => sc.responses[i % sc.responses.length]!, { beforeChunk: () => wait(), info: { name: 'fuzz' } })
  let n = 0
  const agent = createAgent({
    model,
    tools,
    system: 'fuzz',
    clock: fakeClock(),
    ids: () => `f${++n}`,
    timers: instantTimers,
    checkRequests: 'full',
    maxStepsPerTurn: MAX_STEPS,
    maxParallelToolCalls: sc.maxParallel,
    hooks: extra.hooks ? extra.hooks(wait) : scenarioHooks(sc, wait),
  }) as TurnlogAgent
  extra.onAgent?.(agent)
  for (const c of cmds) {
    if (c.kind === 'wait') {
      for (let i = 0; i < c.n; i++) {
        // let the agent reach its next waiting point, then release one task
        await new Promise((r) => setImmediate(r))
        if (s.count() === 0) break
        await s.waitOne()
      }
    } else apply(agent, c)
  }
  await s.waitFor(agent.whenIdle())
  if (extra.finalFollowup ?? true) {
    agent.followup('final')
    await s.waitFor(agent.whenIdle())
  }
  return {
    events: agent.events,
    agent,
    reexec: { tools: fuzzTools(), hooks: () => scenarioHooks(sc), maxParallelToolCalls: sc.maxParallel, maxStepsPerTurn: MAX_STEPS },
  }
}

export function apply(agent: TurnlogAgent, c: Command): void {
  switch (c.kind) {
    case 'followup':
    case 'steer':
    case 'inject':
      agent[c.kind](c.text)
      return
    case 'burst':
      for (let i = 0; i < c.n; i++) agent.followup(`burst ${i}`)
      return
    case 'remove':
    case 'replace': {
      const all = [...agent.inbox.nextTurn, ...agent.inbox.nextStep]
      if (all.length === 0) return
      const id = all[c.pick % all.length]!.id
      if (c.kind === 'remove') agent.inbox.remove(id)
      else agent.inbox.replace(id, `replaced ${id}`)
      return
    }
    case 'clear':
      agent.inbox.clear()
      return
    case 'cancel':
      agent.cancel(c.cause, { keepInbox: c.keepInbox })
      return
    case 'wait':
      return
  }
}

/** Rejects when `p` has not settled within `ms` (a hang is a failure, not a stuck test). */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: ReturnType<typeof setTimeout>
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<T>((_, reject) => {
      t = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)
    }),
  ])
}
