/**
 * Budgets and sub-agents, and the per-call tool-call budget (docs/spec/lifecycle.md §10, L20): a
 * parent's budget covers its children's usage, rolled up live (a child stops when the family
 * reaches the parent's limit, and the parent's next request is not made); a child may have a
 * tighter budget of its own; calls of one response past a `toolCalls` limit get a `BUDGET` result
 * and never run. Every log written here satisfies L20 on its own (`outside` on a budget end says
 * how much of `used` other logs of the family recorded).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { memoryStore, type LogStore } from '../../stores/index.js'
import { defineTool } from '../../tools/index.js'
import { data, makeAgent, valid } from './contain-helpers.js'

const u = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens })

function counter() {
  const runs: number[] = []
  const tool = defineTool({
    name: 'echo', description: 'echo', parameters: z.object({ n: z.number() }),
    execute: async ({ n }) => {
      runs.push(n)
      return { n }
    },
  })
  return { tool, runs }
}

async function readAll(store: LogStore, id: string): Promise<LogEvent[]> {
  const r = await store.open(id, 'read')
  const events: LogEvent[] = []
  for await (const e of r.events()) events.push(e)
  await r.close?.()
  return events
}

/** A child model that asks for one more tool call, forever (200 tokens a request). */
function loopingChild(runs: number[]) {
  const echo = defineTool({
    name: 'echo', description: 'echo', parameters: z.object({ n: z.number() }),
    execute: async ({ n }) => {
      runs.push(n)
      return { n }
    },
  })
  const script = Array.from({ length: 60 }, (_, i) => ({ toolCalls: [{ name: 'echo', args: { n: i } }], usage: u(100, 100) }))
  return { model: scriptedModel(script), tools: [echo] }
}

describe('budgets of a family (docs/spec/lifecycle.md §10, L20)', () => {
  it("L20: a parent's turn budget covers its child's usage: the child stops at the family's limit, the parent makes no further request", async () => {
    const childRuns: number[] = []
    const worker = defineSubagent({
      name: 'worker', description: 'works', parameters: z.object({ q: z.string() }),
      agent: () => loopingChild(childRuns),
    })
    const store = memoryStore()
    const parent = createAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'worker', args: { q: 'go' }, id: 'w1' }], usage: u(100, 0) }, { text: 'never asked', usage: u(1, 1) }]),
      tools: [worker], store, sessionId: 'p', budget: { totalTokens: 1000, scope: 'turn' },
    })
    parent.followup('go')
    await parent.whenIdle()
    await parent.flush()
    const child = await readAll(store, 'p.c1-1-w1')
    // 100 (parent) + 5 × 200 (child) = 1100 >= 1000: the child's sixth request is not made
    expect(data(child, 'step/start')).toHaveLength(5)
    expect(data(child, 'turn/end').map((d) => d.reason)).toEqual([
      { kind: 'budget', which: 'totalTokens', scope: 'session', limit: 1000, used: 1100, outside: 100 },
    ])
    // the parent's second request is not made either: its turn ends on the family's usage
    expect(data(parent.events, 'step/start')).toHaveLength(1)
    expect(data(parent.events, 'turn/end').map((d) => d.reason)).toEqual([
      { kind: 'budget', which: 'totalTokens', scope: 'turn', limit: 1000, used: 1100, outside: 1000 },
    ])
    expect(parent.budgets()[0]).toMatchObject({ which: 'totalTokens', used: 1100, reached: true })
    valid(child)
    valid(parent.events)
    await parent.dispose()
  })

  it("L20: a child's own tighter budget stops it first; the parent's budget still holds the family", async () => {
    const childRuns: number[] = []
    const worker = defineSubagent({
      name: 'worker', description: 'works', parameters: z.object({ q: z.string() }),
      agent: () => ({ ...loopingChild(childRuns), budget: { outputTokens: 250, scope: 'session' } }),
    })
    const store = memoryStore()
    const parent = createAgent({
      model: scriptedModel([
        { toolCalls: [{ name: 'worker', args: { q: 'go' }, id: 'w1' }], usage: u(100, 0) },
        { text: 'done', usage: u(10, 10) },
      ]),
      tools: [worker], store, sessionId: 'p', budget: { totalTokens: 100_000, scope: 'session' },
    })
    parent.followup('go')
    await parent.whenIdle()
    await parent.flush()
    const child = await readAll(store, 'p.c1-1-w1')
    expect(data(child, 'step/start')).toHaveLength(3)
    expect(data(child, 'turn/end').map((d) => d.reason)).toEqual([{ kind: 'budget', which: 'outputTokens', scope: 'session', limit: 250, used: 300 }])
    expect(data(parent.events, 'turn/end').map((d) => d.reason.kind)).toEqual(['completed'])
    // the family's usage is what the parent's budget reports
    expect(parent.budgets()[0]).toMatchObject({ used: 100 + 600 + 20, reached: false })
    valid(child)
    valid(parent.events)
    await parent.dispose()
  })
})

describe('a toolCalls budget per call (docs/spec/lifecycle.md §10, L20)', () => {
  it('L20: one response asking for 40 calls under a toolCalls budget of 5 runs 5 bodies; the rest get BUDGET results', async () => {
    const { tool, runs } = counter()
    const { agent } = makeAgent([
      { toolCalls: Array.from({ length: 40 }, (_, i) => ({ name: 'echo', args: { n: i } })), usage: u(10, 5) },
      { text: 'never asked', usage: u(1, 1) },
    ], { tools: [tool], budget: { toolCalls: 5, scope: 'turn' } })
    agent.followup('go')
    await agent.whenIdle()
    expect(runs).toEqual([0, 1, 2, 3, 4])
    const results = data(agent.events, 'tool/result')
    expect(results).toHaveLength(40) // every call has its result (L5)
    expect(results.slice(5).every((r) => r.error?.code === 'BUDGET')).toBe(true)
    expect(results[5]!.error.message).toMatch(/toolCalls budget/)
    expect(data(agent.events, 'turn/end')[0]!.reason).toEqual({ kind: 'budget', which: 'toolCalls', scope: 'turn', limit: 5, used: 5 })
    expect(data(agent.events, 'step/start')).toHaveLength(1)
    valid(agent.events)
  })

  it('L20: a session toolCalls budget counts the calls of earlier turns before refusing those of this response', async () => {
    const { tool, runs } = counter()
    const { agent } = makeAgent([
      { toolCalls: [{ name: 'echo', args: { n: 0 } }, { name: 'echo', args: { n: 1 } }], usage: u(1, 1) },
      { text: 'a', usage: u(1, 1) },
      { toolCalls: [{ name: 'echo', args: { n: 2 } }, { name: 'echo', args: { n: 3 } }, { name: 'echo', args: { n: 4 } }], usage: u(1, 1) },
    ], { tools: [tool], budget: { toolCalls: 3, scope: 'session' } })
    agent.followup('one')
    await agent.whenIdle()
    agent.followup('two')
    await agent.whenIdle()
    expect(runs).toEqual([0, 1, 2])
    expect(data(agent.events, 'tool/result').map((r) => r.error?.code ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'BUDGET', 'BUDGET'])
    valid(agent.events)
  })
})
