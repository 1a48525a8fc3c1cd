/**
 * The agent handle's small rules not asserted elsewhere: the first cancel cause wins (R5,
 * docs/spec/lifecycle.md §6); a new failure chain restarts the retry count (L16); wake() from a running agent
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

  it('docs/spec/lifecycle.md §3.8: wake() while a turn runs returns false and opens nothing', async () => {
    const { agent } = makeAgent([{ text: 'a' }, { text: 'b' }])
    agent.followup('one')
    agent.inbox.append('next-turn', 'queued')
    expect(agent.wake()).toBe(false)
    await agent.whenIdle()
    expect(agent.events.filter((e) => e.type === 'turn/start')).toHaveLength(2)
  })
})

describe('installHooks (createAgent options)', () => {
  it('R7: options.hooks accepts one listener or a list; plugins install after them, compaction first; dispose uninstalls those that returned a function', async () => {
    const order: string[] = []
    const uninstalled: string[] = []
    const plugin = (name: string, off: boolean) => ({
      name,
      install: (agent: any) => {
        agent.on('agent/pre-step', (_p: unknown, next: () => unknown) => (order.push(name), next()))
        return off ? () => void uninstalled.push(name) : undefined
      },
    })
    const { agent } = makeAgent([{ text: 'a' }], {
      hooks: {
        'agent/pre-step': [(_p, next) => (order.push('h1'), next()), (_p, next) => (order.push('h2'), next())],
        'agent/turn-stopping': () => void order.push('single'),
      },
      compaction: plugin('compaction', true) as never,
      plugins: [plugin('p1', false) as never, plugin('p2', true) as never],
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(order).toEqual(['h1', 'h2', 'compaction', 'p1', 'p2', 'single'])
    await agent.dispose()
    expect(uninstalled).toEqual(['compaction', 'p2'])
  })
})
