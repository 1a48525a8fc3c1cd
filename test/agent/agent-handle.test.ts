/**
 * The agent handle's small rules not asserted elsewhere: the first cancel cause wins (R5,
 * lifecycle §6); a new failure chain restarts the retry count (L16); wake() from a running agent
 * does nothing.
 */
import { describe, expect, it } from 'vitest'
import { makeAgent, valid } from './contain-helpers.js'
import { trace } from './helpers.js'

describe('the agent handle', () => {
  it('R5: the first cancel cause wins; a second cancel changes nothing', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const { agent } = makeAgent([{ text: 'a' }])
    agent.on('agent/pre-step', async (_p, next) => {
      await gate
      return next()
    })
    agent.followup('go')
    agent.cancel({ kind: 'user' })
    agent.cancel({ kind: 'hook', reason: 'second' })
    release()
    await agent.whenIdle()
    const end = agent.events.at(-1)!.data as any
    expect(end.reason).toEqual({ kind: 'aborted', cause: { kind: 'user' } })
    valid(agent.events)
  })

  it('L16: a failure chain ends with its turn; the next chain counts its llm/retry attempts from 1 again', async () => {
    const f = { error: { code: 'SERVER' } }
    const { agent } = makeAgent([f, { text: 'ok' }, f, { text: 'ok' }])
    agent.followup('one')
    await agent.whenIdle()
    agent.followup('two')
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('llm/retry') || l.startsWith('turn/start'))).toEqual([
      'turn/start 1', 'llm/retry 1 SERVER', 'turn/start 2 retry-of 1', 'turn/start 3', 'llm/retry 1 SERVER', 'turn/start 4 retry-of 3',
    ])
    valid(agent.events)
  })

  it('L16: within one chain the count goes on across retry turns (a success inside a retry turn does not reset it)', async () => {
    const f = { error: { code: 'SERVER' } }
    const { agent } = makeAgent([f, f, { text: 'ok' }])
    const seen: number[] = []
    agent.on('agent/request-error', (p, next) => (seen.push(p.retries), next()))
    agent.followup('one')
    await agent.whenIdle()
    expect(seen).toEqual([0, 1])
    expect(trace(agent.events).filter((l) => l.startsWith('llm/retry'))).toEqual(['llm/retry 1 SERVER', 'llm/retry 2 SERVER'])
  })

  it('lifecycle §3.8: wake() while a turn runs returns false and opens nothing', async () => {
    const { agent } = makeAgent([{ text: 'a' }, { text: 'b' }])
    agent.followup('one')
    agent.inbox.append('next-turn', 'queued')
    expect(agent.wake()).toBe(false)
    await agent.whenIdle()
    expect(agent.events.filter((e) => e.type === 'turn/start')).toHaveLength(2)
  })
})
