/**
 * One input limit (`MAX_INPUT_BYTES`, 1 MiB; docs/decisions/input-size-limit.md) on every send, as
 * on decisions: an in-process `followup`/`steer`/`inject` and SQLite's `store.send` refuse a message
 * over it with the coded `INPUT_TOO_LARGE` before anything is written (PostgreSQL's `send` in
 * test/stores/postgres/input-size.test.ts).
 */
import { describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import { MAX_INPUT_BYTES } from '../../events/input-size.js'
import { scriptedModel } from '../../models/scripted.js'
import { memoryStore } from '../../stores/memory.js'
import { freshStore } from './sqlite/helpers.js'

const big = 'x'.repeat(MAX_INPUT_BYTES + 1)

describe('one input limit on every send', () => {
  it('followup, steer and inject refuse a message over 1 MiB with INPUT_TOO_LARGE and log nothing', async () => {
    const agent = createAgent({ model: scriptedModel([{ text: 'ok' }]), store: memoryStore(), sessionId: 'a1' })
    try {
      for (const send of [(m: unknown) => agent.followup(m as string), (m: unknown) => agent.steer(m as string), (m: unknown) => agent.inject(m as string)]) {
        expect(() => send(big)).toThrow(expect.objectContaining({ code: 'INPUT_TOO_LARGE', field: 'message' }))
        expect(() => send({ role: 'user', content: [{ type: 'text', text: big }] })).toThrow(expect.objectContaining({ code: 'INPUT_TOO_LARGE' }))
      }
      expect(agent.events).toEqual([])
      // at the limit is fine (the JSON of the message is a little larger than its text)
      agent.followup('x'.repeat(MAX_INPUT_BYTES - 1000))
      await agent.whenIdle()
      expect(agent.events.some((e) => e.type === 'turn/end')).toBe(true)
    } finally {
      await agent.dispose()
    }
  })

  it('SQLite store.send refuses a message over 1 MiB with INPUT_TOO_LARGE and creates nothing', async () => {
    const store = await freshStore()
    try {
      await expect(store.send('s1', big)).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE', sessionId: 's1' })
      expect(await store.has('s1')).toBe(false)
    } finally {
      await store.close?.()
    }
  })
})
