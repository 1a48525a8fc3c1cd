/**
 * L11: a pending id is unique across both lists. The refusal of a duplicate (agent/inbox-driver.ts)
 * is DUPLICATE_PENDING_ID with its message, the session, the field and the ids, and it changes
 * nothing: no event, no live event, both lists as they were.
 */
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/index.js'
import { makeAgent } from './contain-helpers.js'

describe('inbox: the duplicate pending id refusal', () => {
  it('L11: DUPLICATE_PENDING_ID says the id is already pending, names session, field and ids, and logs and emits nothing', () => {
    const { agent } = makeAgent([], { sessionId: 'sd' })
    agent.inbox.append('next-turn', { id: 'x', content: [{ type: 'text', text: 'a' }] })
    const live: string[] = []
    agent.on('agent/inbox/spliced', () => live.push('spliced'))
    agent.on('agent/inbox/inserted', () => live.push('inserted'))
    let caught: unknown
    try {
      agent.inbox.prepend('next-step', { id: 'x', content: [{ type: 'text', text: 'b' }] })
    } catch (e) {
      caught = e
    }
    expect(TurnlogError.is(caught, 'DUPLICATE_PENDING_ID')).toBe(true)
    const e = caught as TurnlogError
    expect(e.message).toContain('a message with this id is already pending')
    expect(e.toJSON()).toMatchObject({ code: 'DUPLICATE_PENDING_ID', sessionId: 'sd', field: 'message.id', info: { ids: ['x'] } })
    expect(agent.events).toHaveLength(1)
    expect(live).toEqual([])
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['x'])
    expect(agent.inbox.nextStep).toEqual([])
  })
})
