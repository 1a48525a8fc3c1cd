/**
 * Budgets across process boundaries (docs/spec/lifecycle.md §10, issue 25 item 2): the budget state is derived
 * from the log, so a resumed agent (JSONL store, or a crashed log repaired and re-run), `replay`
 * and `verify` (L20) see what the live agent saw; `reexecute` reproduces budget ends (P4).
 */
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { createAgent, type Agent, type AgentOptions } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { reexecute } from '../../replay/reexecute.js'
import { replay, stateAt } from '../../replay/replay.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { defineTool } from '../../tools/index.js'
import { guardAgentErrors } from '../agent/error-guard.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { tempDir } from '../cli/helpers.js'

const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ n: z.number() }), execute: async ({ n }) => ({ n }) })
const usage = { inputTokens: 100, outputTokens: 20 }
const toolCall: ScriptedEntry = { toolCalls: [{ name: 'echo', args: { n: 1 } }], usage }
const price = (_model: string, u: { inputTokens: number; outputTokens: number }) => u.inputTokens / 1000 + u.outputTokens / 100

function options(script: readonly ScriptedEntry[] | ((...a: never[]) => ScriptedEntry), extra: Partial<AgentOptions> = {}) {
  return {
    model: scriptedModel(script as never, { info: { name: 'm1' } }),
    tools: [echo], system: 'sys', clock: fakeClock(), ids: counterIds('m'), timers: instantTimers(), checkRequests: 'full' as const,
    ...extra,
  }
}

const ends = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: unknown }).reason)

async function run(agent: Agent, ...prompts: string[]): Promise<void> {
  for (const p of prompts) {
    agent.followup(p)
    await agent.whenIdle()
  }
}

describe('budgets survive resume and replay (docs/spec/lifecycle.md §10, L20)', () => {
  it('L20: resuming a JSONL session whose session budget is spent: the same budget state, and the next turn makes no request', async () => {
    const { dir, cleanup } = tempDir()
    onTestFinished(cleanup)
    const store = jsonlStore(dir)
    const budget = [{ costUsd: 0.5, scope: 'session' as const, price }, { toolCalls: 5, scope: 'session' as const }]
    const first = createAgent({ ...options([toolCall, { text: 'done', usage }, { text: 'x', usage }]), store, sessionId: 's', budget })
    guardAgentErrors(first)
    await run(first, 'one')
    const before = first.budgets()
    expect(before[0]).toMatchObject({ which: 'costUsd', reached: true })
    expect(before[0]!.used).toBeCloseTo(0.6, 12)
    await first.flush()
    await first.dispose()

    let asked = 0
    const resumed = await resumeAgent({ ...options(() => (asked++, { text: 'should not be asked' })), ids: counterIds('r'), store, sessionId: 's', budget })
    guardAgentErrors(resumed)
    expect(resumed.budgets()).toEqual(before)
    await run(resumed, 'two')
    expect(asked).toBe(0)
    expect(ends(resumed.events)).toEqual([{ kind: 'completed' }, { kind: 'budget', which: 'costUsd', scope: 'session', limit: 0.5, used: before[0]!.used }])
    expect(verify(resumed.events, { price }).violations).toEqual([])
    await resumed.dispose()
  })

  it('L20: a turn interrupted by a crash is re-run by resume as the same turn chain: its turn budget is still spent', async () => {
    const a = createAgent(options([toolCall, toolCall]))
    guardAgentErrors(a)
    await run(a, 'go')
    // the crash: the log as it stood right after the first step's tool result
    const cut = a.events.findIndex((e) => e.type === 'step/end')
    const crashed = a.events.slice(0, cut)
    let asked = 0
    const resumed = await resumeAgent({ ...options(() => (asked++, { text: 'x' })), ids: counterIds('r'), log: crashed, budget: { toolCalls: 1, scope: 'turn' } })
    guardAgentErrors(resumed)
    await resumed.whenIdle()
    const starts = resumed.events.filter((e) => e.type === 'turn/start').map((e) => e.data)
    expect(starts).toEqual([{ turn: 1 }, { turn: 2, cause: { kind: 'resume', of: 1, maxResumeRuns: 3 } }])
    expect(ends(resumed.events)).toEqual([{ kind: 'interrupted' }, { kind: 'budget', which: 'toolCalls', scope: 'turn', limit: 1, used: 1 }])
    expect(asked).toBe(0)
    expect(verify(resumed.events).violations).toEqual([])
    await resumed.dispose()
  })

  it('P1 L20: replay(...).budget and stateAt give the counts the agent saw before each request', async () => {
    const a = createAgent(options([toolCall, { text: 'a', usage: { inputTokens: 5, outputTokens: 1, cacheReadTokens: 10, reasoningTokens: 2 } }]))
    await run(a, 'go')
    const s = replay(a.events).budget
    expect(s.session).toEqual({ requests: 2, inputTokens: 115, outputTokens: 23, toolCalls: 1 })
    expect(s.turn).toEqual(s.session)
    const afterFirst = a.events.findIndex((e) => e.type === 'step/end')
    expect(stateAt(a.events, afterFirst).budget.session).toEqual({ requests: 1, inputTokens: 100, outputTokens: 20, toolCalls: 1 })
  })

  it('L20: verify names a budget end whose limit the derived usage does not reach, or whose used is not the derived one', async () => {
    const a = createAgent({ ...options([toolCall, toolCall]), budget: { outputTokens: 20, scope: 'turn' } })
    await run(a, 'go')
    expect(verify(a.events).violations).toEqual([])
    const end = a.events.length - 1
    const edit = (reason: Record<string, unknown>) => a.events.map((e, i) => (i === end ? { ...e, data: { ...e.data, reason } } : e))
    let v = verify(edit({ kind: 'budget', which: 'outputTokens', scope: 'turn', limit: 21, used: 21 })).violations
    expect(v.map((x) => [x.invariant, x.seq])).toEqual([['L20', end]])
    expect(v[0]!.message).toContain('below')
    v = verify(edit({ kind: 'budget', which: 'outputTokens', scope: 'turn', limit: 10, used: 15 })).violations
    expect(v.map((x) => x.invariant)).toEqual(['L20'])
    // a cost end: without price, its own numbers; with price, the derived cost
    expect(verify(edit({ kind: 'budget', which: 'costUsd', scope: 'turn', limit: 0.1, used: 0.05 })).violations.map((x) => x.invariant)).toEqual(['L20'])
    expect(verify(edit({ kind: 'budget', which: 'costUsd', scope: 'turn', limit: 0.1, used: 0.3 })).violations).toEqual([])
    expect(verify(edit({ kind: 'budget', which: 'costUsd', scope: 'turn', limit: 0.1, used: 0.3 }), { price }).violations).toEqual([])
    expect(verify(edit({ kind: 'budget', which: 'costUsd', scope: 'turn', limit: 0.1, used: 0.2 }), { price }).violations.map((x) => x.invariant)).toEqual(['L20'])
    expect(verify(edit({ kind: 'budget', which: 'costUsd', scope: 'turn', limit: 0.5, used: 0.5 }), { price }).violations.map((x) => x.invariant)).toEqual(['L20'])
  })

  it('P4: reexecute with the same budget reproduces a budget end, also one inside a retry chain; without it the run diverges there', async () => {
    const failing: ScriptedEntry = { error: { code: 'SERVER' }, usage }
    const budget = { inputTokens: 200, scope: 'turn' as const }
    const a = createAgent({ ...options([toolCall, { text: 'a', usage }, failing, failing, { text: 'never' }]), budget })
    guardAgentErrors(a)
    await run(a, 'one', 'two')
    expect(ends(a.events).map((r) => (r as { kind: string }).kind)).toEqual(['completed', 'error', 'error', 'budget'])
    const ok = await reexecute(a.events, { tools: [echo], budget })
    expect(ok).toEqual({ ok: true, eventCount: a.events.length })
    const off = await reexecute(a.events, { tools: [echo], stallMs: 300 })
    expect(off.ok).toBe(false)
    if (!off.ok) expect(off.divergence.seq).toBe(a.events.length - 1)
  })
})
