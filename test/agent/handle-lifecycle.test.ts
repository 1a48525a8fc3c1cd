/**
 * The `Agent` handle's construction and its small public rules (agent/agent.ts, docs/spec/api.md "The Agent
 * handle", docs/spec/lifecycle.md §2): ids default to UUIDs; a throwing log subscriber is reported as
 * `agent/error 'subscribe'` naming the open turn (R7); an inherited prefix is folded once (history,
 * pending inbox, turn numbering) and its first request logs `request/header resume`; a prefix that
 * ends inside an open turn is refused (INVALID_OPTION); `history()` is a copy.
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { makeAgent, valid } from './contain-helpers.js'
import { counterIds, trace } from './helpers.js'

/** A finished session: turn 1 answered 'a', then one injected message left pending (next-step). */
async function finishedLog(): Promise<readonly LogEvent[]> {
  const { agent } = makeAgent([{ text: 'a' }], { sessionId: 's' })
  agent.followup('hi')
  await agent.whenIdle()
  agent.inject('pending')
  return agent.events
}

describe('the agent handle: construction', () => {
  it('ids: without options.ids message ids are random UUIDs (v4), one per message', () => {
    const { agent } = makeAgent([], { ids: undefined })
    const a = agent.inject('x')
    const b = agent.inject('y')
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(b).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(b).not.toBe(a)
    expect(agent.inbox.nextStep.map((m) => m.id)).toEqual([a, b])
  })

  it('R7: a throwing log subscriber is reported as agent/error where "subscribe" with the open turn; the append stands', async () => {
    const { agent, errors } = makeAgent([{ text: 'a' }], { expectErrors: ['subscribe'] })
    const payloads: Array<{ where: string; turn: number | undefined }> = []
    agent.on('agent/error', (p) => void payloads.push({ where: p.where, turn: p.turn }))
    const boom = new Error('observer broke')
    agent.subscribe((e) => {
      if (e.type === 'agent/inbox/spliced' || e.type === 'turn/start') throw boom
    })
    agent.inject('x') // idle: no open turn
    agent.followup('go')
    await agent.whenIdle()
    expect(errors.map((e) => [e.where, e.error])).toEqual([
      ['subscribe', boom], // the inject's splice
      ['subscribe', boom], // the followup's splice
      ['subscribe', boom], // turn/start 1
      ['subscribe', boom], // the claim's splice (next-step)
      ['subscribe', boom], // the claim's splice (next-turn)
    ])
    expect(payloads).toEqual([
      { where: 'subscribe', turn: undefined },
      { where: 'subscribe', turn: undefined },
      { where: 'subscribe', turn: 1 },
      { where: 'subscribe', turn: 1 },
      { where: 'subscribe', turn: 1 },
    ])
    expect(trace(agent.events).slice(0, 3)).toEqual(['splice next-step 0 -0 +[m1]', 'splice next-turn 0 -0 +[m2]', 'turn/start 1'])
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 completed')
    valid(agent.events)
  })

  it('docs/spec/lifecycle.md §8: a prefix is folded once: history, the pending inbox and the turn numbering go on; the first request logs request/header resume', async () => {
    const prefix = await finishedLog()
    const first = makeAgent([], { sessionId: 's', prefix })
    expect(first.agent.history()).toEqual([
      expect.objectContaining({ role: 'user', id: 'm1', content: [{ type: 'text', text: 'hi' }] }),
      expect.objectContaining({ role: 'assistant' }),
    ])
    expect(first.agent.inbox.nextStep.map((m) => m.id)).toEqual(['m2'])
    expect(first.agent.snapshot()).toMatchObject({ status: 'idle' })

    const { agent } = makeAgent([{ text: 'b' }], { sessionId: 's', prefix, ids: counterIds('n') })
    agent.followup('again')
    await agent.whenIdle()
    expect(trace(agent.events.slice(prefix.length))).toEqual([
      'splice next-turn 0 -0 +[n1]',
      'turn/start 2',
      'splice next-step 0 -1 +[]',
      'splice next-turn 0 -1 +[]',
      'step/start 2.1',
      'user/message m2',
      'user/message n1',
      'request/header resume',
      'assistant/message stop',
      'step/end 2.1 stop',
      'turn/end 2 completed',
    ])
    valid(agent.events)
  })

  it('a prefix that ends inside an open turn is refused: INVALID_OPTION naming field prefix, its last seq and the session', async () => {
    const prefix = await finishedLog()
    const end = prefix.findIndex((e) => e.type === 'turn/end')
    const cut = prefix.slice(0, end)
    let thrown: unknown
    try {
      makeAgent([], { sessionId: 's', prefix: cut })
    } catch (err) {
      thrown = err
    }
    expect(thrown).toMatchObject({
      code: 'INVALID_OPTION',
      message: `INVALID_OPTION: the prefix ends inside an open turn: repair it first (seq ${cut.length - 1}, field prefix)`,
      field: 'prefix',
      seq: cut.length - 1,
      sessionId: 's',
    })
  })

  it('history() is a copy: a later turn does not change an array handed out before', async () => {
    const { agent } = makeAgent([{ text: 'a' }, { text: 'b' }])
    agent.followup('one')
    await agent.whenIdle()
    const before = agent.history()
    expect(before).toHaveLength(2)
    agent.followup('two')
    await agent.whenIdle()
    expect(before).toHaveLength(2)
    expect(agent.history()).toHaveLength(4)
    expect(agent.history()).not.toBe(agent.history())
  })
})
