/**
 * The fuzzer holds against what users' code does (issue 9, items 12–17): hangs fail `STUCK` with
 * what was pending (never a hang, never a false pass), user tool bodies run (arguments from their
 * zod schemas), a hook that cancels is no false R5 failure, factories give every run fresh
 * instances, and the census reports what ran.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Agent, AgentOptions } from '../../agent/index.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import { FuzzFailure, fuzzAgent } from '../../testing/index.js'

const weather = defineTool({
  name: 'weather',
  description: 'the weather in a city',
  parameters: z.object({ city: z.string().min(1).max(40), unit: z.enum(['c', 'f']).optional() }),
  execute: async ({ city, unit }) => ({ city, temp: unit === 'f' ? 70 : 21 }),
}) as unknown as AnyTool
const add = defineTool({
  name: 'add',
  description: 'adds two integers',
  parameters: z.object({ a: z.number().int(), b: z.number().int().min(0).max(100) }),
  execute: ({ a, b }) => String(a + b),
}) as unknown as AnyTool

async function failure(p: Promise<unknown>): Promise<FuzzFailure> {
  const err = await p.then(() => null, (e: unknown) => e)
  expect(err).toBeInstanceOf(FuzzFailure)
  return err as FuzzFailure
}

describe('item 12: a run that stops making progress fails STUCK, naming what is pending', () => {
  const hang = defineTool({ name: 'hang', description: 'never settles', parameters: z.object({ q: z.string() }), execute: () => new Promise<never>(() => {}) }) as unknown as AnyTool

  it('R8/STUCK: a tool body that never settles: seed, path, shrunk scenario, the log so far, the pending call', async () => {
    const f = await failure(fuzzAgent({ tools: [hang], numRuns: 100, seed: 12, stuckAfterMs: 20 }))
    expect(f.invariant).toBe('STUCK')
    expect(f.pending.some((p) => p.startsWith("tool 'hang' body (call "))).toBe(true)
    expect(f.message).toMatch(/pending: tool 'hang' body \(call \S+, turn \d+, step \d+\)/)
    expect(f.message).toContain('seed 12, path "')
    expect(f.path).toMatch(/^\d+(:\d+)*(\|\S+)?$/)
    expect(f.counterexample).toMatch(/^scenario \{.*"name":"hang"/)
    // the log so far: the call was logged, its result never was
    const calls = f.events.filter((e) => e.type === 'assistant/message' && JSON.stringify(e.data).includes('"name":"hang"'))
    expect(calls.length).toBeGreaterThan(0)
  })

  it('STUCK: a hook listener that never settles is named with its hook, turn and step', async () => {
    const hooks: AgentOptions['hooks'] = {
      'agent/turn-stopping': async (p) => { if (p.turn === 2) await new Promise<never>(() => {}) },
    }
    const f = await failure(fuzzAgent({ hooks, numRuns: 100, seed: 5, stuckAfterMs: 20 }))
    expect(f.invariant).toBe('STUCK')
    expect(f.pending).toContainEqual(expect.stringMatching(/^hook agent\/turn-stopping \(your listener\) at turn 2, step \d+$/))
  })

  it('STUCK: replaying the reported seed and path fails again the same way, at once', async () => {
    const f = await failure(fuzzAgent({ tools: [hang], numRuns: 100, seed: 12, stuckAfterMs: 20 }))
    const again = await failure(fuzzAgent({ tools: [hang], seed: f.seed, path: f.path, stuckAfterMs: 20 }))
    expect(again.invariant).toBe('STUCK')
    expect(again.numShrinks).toBe(0)
    expect(again.events.map((e) => ({ ...e, time: 0 }))).toEqual(f.events.map((e) => ({ ...e, time: 0 })))
  })
})

describe('item 13: every user tool body runs (arguments from its zod schema)', () => {
  it('census: in a 200-run fuzz both tools run their bodies many times, and invalid arguments are tried too', async () => {
    const report = await fuzzAgent({ tools: [weather, add], numRuns: 200, seed: 13 })
    expect(report.census.runs).toBe(200)
    expect(report.census.bodies.weather ?? 0).toBeGreaterThan(50)
    expect(report.census.bodies.add ?? 0).toBeGreaterThan(50)
    expect(report.census.toolResults.INVALID_ARGS ?? 0).toBeGreaterThan(0)
  })
})

describe('item 14: a user hook that cancels the turn is no false R5 failure', () => {
  it('R5: hooks that cancel (pre-step, turn-stopping, pre-execute) with their own cause: 200 runs pass, the census shows the cancels', async () => {
    let n = 0
    const hooks: AgentOptions['hooks'] = {
      'agent/pre-step': async (p, next) => { if (++n % 7 === 0) p.agent.cancel({ kind: 'hook', reason: 'policy' }); return next() },
      'agent/turn-stopping': async (p) => { if (++n % 5 === 0) p.agent.cancel({ kind: 'hook', reason: 'stop' }, { keepInbox: true }) },
    }
    const report = await fuzzAgent({ hooks, numRuns: 200, seed: 14 })
    expect(report.census.cancels['hook hook'] ?? 0).toBeGreaterThan(0)
    expect(report.census.cancels['command user'] ?? 0).toBeGreaterThan(0)
    expect(report.census.turnEnds.aborted ?? 0).toBeGreaterThan(0)
  })
})

describe('item 16: factories give every run fresh tools and hooks', () => {
  it('each run (and each shrinking step) sees its own hook instance, and the tool factory is called per run', async () => {
    let hookInstances = 0
    let toolInstances = 0
    let current: { agents: Set<Agent> } | null = null
    const report = await fuzzAgent({
      numRuns: 60,
      seed: 16,
      tools: () => { toolInstances++; return [weather] },
      hooks: () => {
        hookInstances++
        const state = { agents: new Set<Agent>() }
        current = state
        return { 'agent/pre-step': async (p, next) => { state.agents.add(p.agent); return next() } }
      },
      check: (run) => {
        // a stateful hook saw only this run's agent
        for (const a of current!.agents) expect(a).toBe(run.agent)
      },
    })
    expect(report.census.runs).toBe(60)
    expect(hookInstances).toBe(60)
    expect(toolInstances).toBe(61) // once up front for the names and schemas
  })
})

describe('item 17: the census', () => {
  it('counts what the passing runs did: it agrees with the logs the runs produced', async () => {
    const ends: Record<string, number> = {}
    let results = 0
    const report = await fuzzAgent({
      numRuns: 80,
      seed: 17,
      tools: [add],
      onRun: (events) => {
        for (const e of events) {
          if (e.type === 'turn/end') { const k = (e.data as { reason: { kind: string } }).reason.kind; ends[k] = (ends[k] ?? 0) + 1 }
          if (e.type === 'tool/result') results++
        }
      },
    })
    expect(report.seed).toBe(17)
    expect(report.census.turnEnds).toEqual(ends)
    expect(Object.values(report.census.toolResults).reduce((a, b) => a + b, 0)).toBe(results)
    for (const k of ['fuzz_parallel', 'fuzz_exclusive', 'fuzz_throw', 'add']) expect(report.census.bodies[k] ?? 0, k).toBeGreaterThan(0)
    expect(report.census.hookErrors['agent/pre-step'] ?? 0).toBeGreaterThan(0)
    expect(report.census.hookErrors['agent/turn-stopping'] ?? 0).toBeGreaterThan(0)
  })
})
