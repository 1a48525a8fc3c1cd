/**
 * Compacted agent runs for re-execution: agent-runs.ts's scenarios (hook plans, inbox commands,
 * cancels, scheduler waits) with the compaction plugin on a small window, the scenario mix of
 * test/compaction/fuzz.property.test.ts (large tool outputs, `CONTEXT_WINDOW_EXCEEDED` in band and
 * thrown, summaries that are short, too long, empty, failing, throwing or cancelled) and manual
 * compactions (`compactNow`). Each run keeps what `reexecute` needs: tool definitions, the hook
 * factory and a plugin factory with the same options.
 */
import fc from 'fast-check'
import { z } from 'zod'
import { createAgent, type TurnlogAgent } from '../../agent/agent.js'
import type { AgentOptions } from '../../agent/types.js'
import { basicCompaction, type CompactionOptions, type CompactionPlugin } from '../../compaction/index.js'
import type { LogEvent, StreamChunk } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import {
  apply, arbCommandList, fakeClock, instantTimers, MAX_STEPS, scenarioHooks,
  type Command, type PreStepPlan, type Scenario, type StoppingPlan,
} from './agent-runs.js'

export type SummaryPlan = 'short' | 'long' | 'empty' | 'error' | 'throw' | 'cancel'

export interface CompactedScenario extends Scenario {
  summaries: SummaryPlan[]
  compaction: CompactionOptions
}

export type CompactedCommand = Command | { kind: 'compact' }

const MAX_TURN_REQUESTS = 60
const PRUNE = { pruneThresholdChars: 1000, pruneHead: 400, pruneTail: 200 }
const TOOLS = ['fuzz_big', 'fuzz_exclusive', 'no_such_tool'] as const

/** Tools that return `n` characters. `body` runs for the recorded run; a re-execution only needs the definitions. */
export function bigTools(body?: (n: number) => Promise<unknown>): AnyTool[] {
  const run = (n: number) => (body ? body(n) : Promise.resolve(''))
  return [
    defineTool({ name: 'fuzz_big', description: 'n chars', parameters: z.object({ n: z.number() }), isConcurrencySafe: () => true, execute: ({ n }) => run(n) }),
    defineTool({ name: 'fuzz_exclusive', description: 'n chars', parameters: z.object({ n: z.number() }), execute: ({ n }) => run(n) }),
  ] as AnyTool[]
}

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
  ) as fc.Arbitrary<ScriptedEntry>
}

export function arbCompactedScenario(): fc.Arbitrary<CompactedScenario> {
  return fc.record({
    responses: fc.array(arbResponse(), { minLength: 1, maxLength: 12 }),
    summaries: fc.array(fc.constantFrom<SummaryPlan>('short', 'short', 'short', 'long', 'empty', 'error', 'throw', 'cancel'), { minLength: 1, maxLength: 5 }),
    preStep: fc.array(fc.constantFrom<PreStepPlan>('next', 'next', 'next', 'next', 'next', 'reject', 'throw', 'empty', 'hook-message'), { minLength: 1, maxLength: 8 }),
    stopping: fc.array(fc.constantFrom<StoppingPlan>('none', 'none', 'none', 'steer', 'throw'), { minLength: 1, maxLength: 6 }),
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

export function arbCompactedCommands(max = 12): fc.Arbitrary<CompactedCommand[]> {
  return fc.tuple(arbCommandList(max), fc.array(fc.nat(max), { maxLength: 3 })).map(([cmds, at]) => {
    const out: CompactedCommand[] = [...cmds]
    for (const i of at.sort((a, b) => b - a)) out.splice(Math.min(i, out.length), 0, { kind: 'compact' })
    return out
  })
}

export interface CompactedRun {
  events: readonly LogEvent[]
  agent: TurnlogAgent
  reexec: {
    tools: AnyTool[]
    hooks: () => AgentOptions['hooks']
    plugins: () => CompactionPlugin[]
    maxParallelToolCalls: number
    maxStepsPerTurn: number
  }
}

/** Runs one compacted scenario with `s` interleaving model chunks, hook waits, tool bodies and summaries. */
export async function recordCompactedRun(sc: CompactedScenario, s: fc.Scheduler, cmds: readonly CompactedCommand[]): Promise<CompactedRun> {
  const wait = () => s.schedule(Promise.resolve(), 'settle').then(() => {})
  let failIdx = 0
  const tools = bigTools(async (n) => {
    await wait()
    if (sc.toolFails[failIdx++ % sc.toolFails.length]) throw new Error('fuzz tool failure')
    return 'x'.repeat(n)
  })
  let t = 0
  let u = 0
  let agent!: TurnlogAgent
  const model = scriptedModel((req): ScriptedEntry => {
    // The script cycles; past MAX_TURN_REQUESTS it answers text, so a run always ends: an overflow
    // → compaction → retry → success → overflow … cycle never goes idle (the overflow budget resets
    // on every successful response, and each cycle's large tool output gives the prune work again).
    if (req.purpose !== 'compaction') return t >= MAX_TURN_REQUESTS ? { text: 'enough' } : sc.responses[t++ % sc.responses.length]!
    switch (sc.summaries[u++ % sc.summaries.length]!) {
      case 'short': return { text: 'sum', usage: { inputTokens: 500, outputTokens: 3 } }
      case 'long': return { text: 's'.repeat(20_000) }
      case 'empty': return { reasoning: 'r', text: ' ' }
      case 'error': return { error: { code: 'SERVER' } }
      case 'throw': return { throw: new Error('summariser down') }
      case 'cancel':
        agent.cancel({ kind: 'user' })
        return { text: 'sum' }
    }
  }, { beforeChunk: () => wait(), info: { name: 'fuzz' } })
  const plugin = basicCompaction(sc.compaction)
  let n = 0
  agent = createAgent({
    model,
    tools,
    system: 'fuzz',
    clock: fakeClock(),
    ids: () => `f${++n}`,
    timers: instantTimers,
    checkRequests: 'full',
    maxStepsPerTurn: MAX_STEPS,
    maxParallelToolCalls: sc.maxParallel,
    plugins: [plugin],
    hooks: scenarioHooks(sc, wait),
  }) as TurnlogAgent
  const manual: Array<Promise<unknown>> = []
  for (const c of cmds) {
    if (c.kind === 'wait') {
      for (let i = 0; i < c.n; i++) {
        await new Promise((r) => setImmediate(r))
        if (s.count() === 0) break
        await s.waitOne()
      }
    } else if (c.kind === 'compact') {
      // From idle the manual compaction runs to its end before the next command: a send during it
      // would be latched, and the agent keeps that latch after replaying it (runMaintenance does
      // not UNLATCH), so a next-step item left at a later turn end opens another turn, which a
      // re-execution cannot see in the log (see the report / ARCHITECTURE "Decisions: replay engine").
      const p = plugin.compactNow(agent).catch(() => undefined)
      if (agent.status === 'idle') await s.waitFor(p)
      else manual.push(p)
    }
    else apply(agent, c)
  }
  await s.waitFor(Promise.all(manual))
  await s.waitFor(agent.whenIdle())
  // and one manual compaction from idle over whatever the run left (most commands find it busy)
  if (cmds.some((c) => c.kind === 'compact')) await s.waitFor(plugin.compactNow(agent).catch(() => undefined))
  agent.followup('final')
  await s.waitFor(agent.whenIdle())
  return {
    events: agent.events,
    agent,
    reexec: {
      tools: bigTools(),
      hooks: () => scenarioHooks(sc),
      plugins: () => [basicCompaction(sc.compaction)],
      maxParallelToolCalls: sc.maxParallel,
      maxStepsPerTurn: MAX_STEPS,
    },
  }
}
