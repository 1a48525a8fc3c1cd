/**
 * Issue 9 item 4 (docs/spec/lifecycle.md §4.3, R3): the request is frozen deeply, every time — `tools` is not
 * the agent's own array, `config` is frozen even when no new `request/header` was logged — so an
 * adapter can never change what the next request offers the model.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { scriptedModel, type ModelRequest } from '../../models/index.js'
import { defineTool } from '../../tools/index.js'
import { data, endKinds, makeAgent, valid } from './contain-helpers.js'

function deeplyFrozen(v: unknown, path = 'request'): string[] {
  if (typeof v !== 'object' || v === null) return []
  const out = Object.isFrozen(v) ? [] : [path]
  for (const [k, x] of Object.entries(v)) out.push(...deeplyFrozen(x, `${path}.${k}`))
  return out
}

const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), isConcurrencySafe: () => true, execute: ({ text }) => text })

describe('the frozen request (item 4)', () => {
  it('R3: every request is deeply frozen (tools, config, messages), also when no new request/header was logged; an adapter cannot add a tool', async () => {
    const base = scriptedModel([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }, { text: 'one' }, { text: 'two' }])
    const seen: ModelRequest[] = []
    const mutations: string[] = []
    const { agent } = makeAgent(null, {
      tools: [echo],
      config: { temperature: 0.5 } as never,
      model: {
        stream: (req, signal) => {
          seen.push(req)
          for (const [what, f] of [
            ['tools.push', () => (req.tools as unknown[]).push({ name: 'evil', description: 'x', parameters: {} })],
            ['config.temperature', () => ((req.config as Record<string, unknown>).temperature = 2)],
          ] as const) {
            try {
              f()
              mutations.push(what)
            } catch {
              // refused: frozen
            }
          }
          return base.stream(req, signal)
        },
      },
    })
    agent.followup('first')
    await agent.whenIdle()
    agent.followup('second')
    await agent.whenIdle()
    expect(seen.length).toBe(3)
    expect(mutations).toEqual([])
    for (const r of seen) {
      expect(Object.isFrozen(r)).toBe(true)
      expect([...deeplyFrozen(r.tools, 'tools'), ...deeplyFrozen(r.config, 'config'), ...deeplyFrozen(r.messages, 'messages')]).toEqual([])
      expect(r.tools.map((t) => t.name)).toEqual(['echo'])
      expect(r.config).toEqual({ model: 'model', temperature: 0.5 })
    }
    // one header for all three requests: the later ones are frozen without a new header
    expect(data(agent.events, 'request/header').length).toBe(1)
    expect(endKinds(agent.events)).toEqual(['completed', 'completed'])
    valid(agent.events)
  })
})
