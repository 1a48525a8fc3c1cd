/**
 * Budgets (docs/spec/lifecycle.md §10, issue 25 item 2): a limit reached before a request ends the turn
 * `{kind: 'budget', which, scope, limit, used}` instead of making the request (the overshoot is at
 * most one request), per turn or per session, for tokens, cost and tool calls, also inside a retry
 * chain; `agent/budget` once at `warnAt`; L20 holds on every log written here.
 */
import { describe, expect, it } from 'vitest'
import type { BudgetWarning } from '../../agent/index.js'
import { defineTool } from '../../tools/index.js'
import { z } from 'zod'
import { data, endKinds, makeAgent, valid } from './contain-helpers.js'
import { trace } from './helpers.js'

const u = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens })
const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ n: z.number() }), execute: async ({ n }) => ({ n }) })
const calls = (k: number) => ({ toolCalls: Array.from({ length: k }, (_, i) => ({ name: 'echo', args: { n: i } })), usage: u(10, 5) })

describe('budgets (docs/spec/lifecycle.md §10, L20)', () => {
  it('L20: a turn toolCalls budget stops the request after the step whose calls reached it; the exact events', async () => {
    const { agent } = makeAgent([calls(2), { text: 'never asked', usage: u(1, 1) }], {
      tools: [echo], budget: { toolCalls: 2, scope: 'turn' },
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l !== 'chunk')).toEqual([
      'splice next-turn 0 -0 +[m1]', 'turn/start 1', 'splice next-turn 0 -1 +[]', 'step/start 1.1', 'user/message m1',
      'request/header initial', 'assistant/message tool-calls', 'tool/call call_1 echo', 'tool/result call_1',
      'tool/call call_2 echo', 'tool/result call_2', 'step/end 1.1 tools', 'turn/end 1 budget',
    ])
    expect(data(agent.events, 'turn/end')[0]!.reason).toEqual({ kind: 'budget', which: 'toolCalls', scope: 'turn', limit: 2, used: 2 })
    // the second response was never requested
    expect(data(agent.events, 'step/start')).toHaveLength(1)
    valid(agent.events)
  })

  it('L20: a turn budget starts again in the next turn; a session budget does not', async () => {
    // each turn's first response calls a tool; a second request in a turn would be the text
    const script = [calls(1), calls(1), { text: 'b', usage: u(1, 1) }]
    const turn = makeAgent(script, { tools: [echo], budget: { toolCalls: 1, scope: 'turn' } }).agent
    turn.followup('one')
    await turn.whenIdle()
    turn.followup('two')
    await turn.whenIdle()
    expect(endKinds(turn.events)).toEqual(['budget', 'budget'])
    expect(data(turn.events, 'step/start')).toHaveLength(2)
    valid(turn.events)

    const session = makeAgent(script, { tools: [echo], budget: { toolCalls: 1, scope: 'session' } }).agent
    session.followup('one')
    await session.whenIdle()
    session.followup('two')
    await session.whenIdle()
    expect(endKinds(session.events)).toEqual(['budget', 'budget'])
    // the second turn made no request: it claimed its prompt and ended
    expect(data(session.events, 'step/start')).toHaveLength(1)
    expect(data(session.events, 'turn/end')[1]!.reason).toEqual({ kind: 'budget', which: 'toolCalls', scope: 'session', limit: 1, used: 1 })
    expect(session.inbox.nextTurn).toEqual([])
    valid(session.events)
  })

  it('L20: each token limit trips on its own count (input with cache buckets, output with reasoning, total)', async () => {
    const usage = { inputTokens: 30, outputTokens: 10, cacheReadTokens: 15, cacheWriteTokens: 5, reasoningTokens: 4 }
    const cases = [
      { budget: { inputTokens: 50 }, which: 'inputTokens', used: 50 },
      { budget: { outputTokens: 14 }, which: 'outputTokens', used: 14 },
      { budget: { totalTokens: 64 }, which: 'totalTokens', used: 64 },
    ] as const
    for (const c of cases) {
      const { agent } = makeAgent([{ toolCalls: [{ name: 'echo', args: { n: 1 } }], usage }, { text: 'x', usage }], {
        tools: [echo], budget: { ...c.budget, scope: 'turn' },
      })
      agent.followup('go')
      await agent.whenIdle()
      expect(data(agent.events, 'turn/end')[0]!.reason, c.which).toMatchObject({ kind: 'budget', which: c.which, used: c.used })
      valid(agent.events)
      // one more token of room and the second request is made
      const room = makeAgent([{ toolCalls: [{ name: 'echo', args: { n: 1 } }], usage }, { text: 'x', usage }], {
        tools: [echo], budget: { [c.which]: c.used + 1, scope: 'turn' },
      }).agent
      room.followup('go')
      await room.whenIdle()
      expect(endKinds(room.events), c.which).toEqual(['completed'])
    }
  })

  it('L20: a session costUsd budget prices every call with price(model, usage); the model is the request header\'s', async () => {
    const seen: string[] = []
    const price = (model: string, usage: { inputTokens: number; outputTokens: number }) => {
      seen.push(model)
      return usage.inputTokens * 0.01 + usage.outputTokens * 0.02
    }
    const { agent } = makeAgent([{ text: 'a', usage: u(100, 50) }, { text: 'b', usage: u(100, 50) }, { text: 'c', usage: u(1, 1) }], {
      config: { model: 'gpt-x' }, budget: { costUsd: 3.5, scope: 'session', price },
    })
    agent.followup('one')
    await agent.whenIdle()
    agent.followup('two')
    await agent.whenIdle()
    agent.followup('three')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['completed', 'completed', 'budget'])
    expect(data(agent.events, 'turn/end')[2]!.reason).toEqual({ kind: 'budget', which: 'costUsd', scope: 'session', limit: 3.5, used: 4 })
    expect(new Set(seen)).toEqual(new Set(['gpt-x']))
    expect(agent.budgets()).toEqual([{ which: 'costUsd', scope: 'session', limit: 3.5, used: 4, unpriced: 0, reached: true }])
    valid(agent.events)
  })

  it('a price that throws is contained: agent/error BUDGET_PRICE, the cost is unknown and counts as the limit reached (unpriced)', async () => {
    const { agent, errors } = makeAgent([{ text: 'a', usage: u(1, 1) }, { text: 'b', usage: u(1, 1) }], {
      budget: { costUsd: 100, scope: 'session', price: () => { throw new Error('no price list') } },
      expectErrors: ['BUDGET_PRICE'],
    })
    agent.followup('one')
    await agent.whenIdle()
    agent.followup('two')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['completed', 'budget'])
    expect(data(agent.events, 'turn/end')[1]!.reason).toEqual({ kind: 'budget', which: 'costUsd', scope: 'session', limit: 100, used: 0, unpriced: 1 })
    expect(errors.map((e) => e.where)).toEqual(['budget/price'])
    valid(agent.events)
    // a price returning NaN or a string is the same
    const nan = makeAgent([{ text: 'a', usage: u(1, 1) }, { text: 'b' }], {
      budget: { costUsd: 100, scope: 'turn', price: (() => 'cheap') as never }, expectErrors: ['BUDGET_PRICE'],
    }).agent
    nan.followup('x')
    await nan.whenIdle()
    expect(nan.budgets()[0]).toMatchObject({ unpriced: 1, reached: true })
  })

  it('L20: during a retry chain the failed requests\' usage counts, and a turn budget spans the chain (the retry turn ends budget)', async () => {
    const failing = { error: { code: 'RATE_LIMIT' }, usage: u(40, 0) }
    const { agent } = makeAgent([failing, failing, { text: 'never', usage: u(1, 1) }], {
      budget: { inputTokens: 80, scope: 'turn' },
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('turn/') || l.startsWith('llm/retry'))).toEqual([
      'turn/start 1', 'llm/retry 1 RATE_LIMIT', 'turn/end 1 error RATE_LIMIT',
      'turn/start 2 retry-of 1', 'llm/retry 2 RATE_LIMIT', 'turn/end 2 error RATE_LIMIT',
      'turn/start 3 retry-of 2', 'turn/end 3 budget',
    ])
    expect(data(agent.events, 'turn/end')[2]!.reason).toEqual({ kind: 'budget', which: 'inputTokens', scope: 'turn', limit: 80, used: 80 })
    valid(agent.events)
  })

  it('agent/budget is emitted once when a limit crosses warnAt, with what was used; at the turn end that crossed it', async () => {
    const warnings: BudgetWarning[] = []
    const { agent } = makeAgent([{ text: 'a', usage: u(50, 0) }, { text: 'b', usage: u(35, 0) }, { text: 'c', usage: u(5, 0) }, { text: 'd' }], {
      budget: { inputTokens: 100, scope: 'session', warnAt: 0.8 },
      hooks: { 'agent/budget': (w) => { warnings.push(w) } },
    })
    for (const m of ['one', 'two']) {
      agent.followup(m)
      await agent.whenIdle()
    }
    // 85 of 100 after turn 2: told at its end, not at the next request
    expect(warnings).toEqual([{ which: 'inputTokens', scope: 'session', limit: 100, used: 85, warnAt: 0.8, turn: 2 }])
    for (const m of ['three', 'four']) {
      agent.followup(m)
      await agent.whenIdle()
    }
    expect(warnings).toHaveLength(1)
    expect(endKinds(agent.events)).toEqual(['completed', 'completed', 'completed', 'completed'])
  })

  it('a listener of agent/budget that throws is reported, never breaks the turn; one that cancels ends the turn aborted', async () => {
    const { agent } = makeAgent([{ toolCalls: [{ name: 'echo', args: { n: 1 } }], usage: u(9, 0) }, { text: 'b' }], {
      tools: [echo], budget: { inputTokens: 10, scope: 'turn', warnAt: 0.5 },
      hooks: { 'agent/budget': () => { throw new Error('observer down') } },
      expectErrors: ['agent/budget'],
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['completed'])
    const c = makeAgent([{ toolCalls: [{ name: 'echo', args: { n: 1 } }], usage: u(9, 0) }, { text: 'b' }], {
      tools: [echo], budget: { inputTokens: 10, scope: 'turn', warnAt: 0.5 },
    }).agent
    c.on('agent/budget', () => c.cancel({ kind: 'hook', reason: 'over half' }))
    c.followup('go')
    await c.whenIdle()
    expect(data(c.events, 'turn/end')[0]!.reason).toEqual({ kind: 'aborted', cause: { kind: 'hook', reason: 'over half' } })
    expect(data(c.events, 'step/start')).toHaveLength(1)
    valid(c.events)
  })

  it('a steer left when a turn budget trips mid-turn is not lost: it stays queued for the next turn', async () => {
    const { agent } = makeAgent([calls(1), { text: 'next turn answer', usage: u(1, 1) }], {
      tools: [echo], budget: { toolCalls: 1, scope: 'turn' },
    })
    agent.on('tools/post-execute', (p, next) => {
      if (agent.inbox.nextStep.length === 0) agent.inject('context for later')
      return next()
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['budget'])
    expect(agent.inbox.nextStep.map((m) => m.content)).toEqual([[{ type: 'text', text: 'context for later' }]])
    agent.followup('again')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['budget', 'completed'])
    expect(data(agent.events, 'user/message').map((d) => d.message.content[0].text)).toEqual(['go', 'context for later', 'again'])
    valid(agent.events)
  })
})
