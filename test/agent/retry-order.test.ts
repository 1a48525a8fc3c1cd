/**
 * Issue 9 item 7: the built-in transient retry policy is the innermost `agent/request-error`
 * listener (asked last). Every user listener decides first, whenever it was registered (at
 * creation, or later with `agent.on`). R6: cancellation and the budget still bound retries.
 */
import { describe, expect, it } from 'vitest'
import type { RequestErrorPayload } from '../../agent/index.js'
import { data, endKinds, makeAgent, valid } from './contain-helpers.js'

const RATE_LIMITED = [{ error: { code: 'RATE_LIMIT' } }, { text: 'ok' }]

describe('retry-policy order (item 7)', () => {
  it('R6: a listener added with agent.on after creation decides before the built-in policy (it may let the failure stand)', async () => {
    const { agent } = makeAgent(RATE_LIMITED)
    const seen: number[] = []
    agent.on('agent/request-error', (p: RequestErrorPayload) => {
      seen.push(p.retries)
      return undefined // the failure stands: the built-in policy is never asked
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(seen).toEqual([0])
    expect(data(agent.events, 'llm/retry')).toEqual([])
    expect(endKinds(agent.events)).toEqual(['error'])
    valid(agent.events)
  })

  it('R6: listeners (creation-time and later) run in registration order, then the built-in policy when they call next()', async () => {
    const order: string[] = []
    const { agent } = makeAgent(RATE_LIMITED, {
      hooks: { 'agent/request-error': (_p, next) => (order.push('creation'), next()) },
    })
    agent.on('agent/request-error', (_p, next) => (order.push('later'), next()))
    agent.followup('go')
    await agent.whenIdle()
    expect(order).toEqual(['creation', 'later'])
    expect(data(agent.events, 'llm/retry').map((d) => d.attempt)).toEqual([1])
    expect(endKinds(agent.events)).toEqual(['error', 'completed'])
    valid(agent.events)
  })
})
