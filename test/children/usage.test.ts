/**
 * Usage rolls up (docs/spec/lifecycle.md §10; docs/spec/api.md `agent.usage()`): own totals at the top level, the
 * children's (grandchildren included) under `children`, both under `total`; the same roll-up from
 * the store (`usageTree`), and the pure reducer on its own.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import { scriptedModel } from '../../models/index.js'
import { emptyTotals, rollUpUsage } from '../../reducers/index.js'
import { usageTree } from '../../replay/index.js'
import { memoryStore } from '../../stores/index.js'

const u = (i: number, o: number) => ({ inputTokens: i, outputTokens: o })

describe('usage roll-up (docs/spec/lifecycle.md §10)', () => {
  it('rollUpUsage sums each bucket of the children into children and total', () => {
    const own = { ...emptyTotals(), requests: 1, inputTokens: 10, outputTokens: 1 }
    const child = rollUpUsage({ ...emptyTotals(), requests: 2, inputTokens: 5, outputTokens: 2, cacheReadTokens: 3 }, {})
    const r = rollUpUsage(own, { a: child, b: child })
    expect(r.inputTokens).toBe(10)
    expect(r.children).toEqual({ requests: 4, inputTokens: 10, outputTokens: 4, cacheReadTokens: 6, cacheWriteTokens: 0, reasoningTokens: 0 })
    expect(r.total).toEqual({ requests: 5, inputTokens: 20, outputTokens: 5, cacheReadTokens: 6, cacheWriteTokens: 0, reasoningTokens: 0 })
    expect(Object.keys(r.byChild)).toEqual(['a', 'b'])
  })

  it("agent.usage() and usageTree(store) roll a child's and a grandchild's usage up", async () => {
    const leaf = defineSubagent({
      name: 'leaf', description: 'grandchild', parameters: z.object({ q: z.string() }),
      agent: () => ({ model: scriptedModel([{ text: 'leaf', usage: u(1, 1) }]) }),
    })
    const mid = defineSubagent({
      name: 'mid', description: 'child', parameters: z.object({ q: z.string() }),
      agent: () => ({
        model: scriptedModel([{ toolCalls: [{ name: 'leaf', args: { q: 'x' }, id: 'l1' }], usage: u(20, 2) }, { text: 'mid', usage: u(30, 3) }]),
        tools: [leaf],
      }),
    })
    const store = memoryStore()
    const parent = createAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'mid', args: { q: 'y' }, id: 'm1' }], usage: u(100, 10) }, { text: 'done', usage: u(200, 20) }]),
      tools: [mid], store, sessionId: 'p',
    })
    parent.followup('go')
    await parent.whenIdle()
    await parent.flush()
    const live = parent.usage()
    expect(live).toMatchObject({ requests: 2, inputTokens: 300, outputTokens: 30 })
    expect(live.children).toMatchObject({ requests: 3, inputTokens: 51, outputTokens: 6 })
    expect(live.total).toMatchObject({ requests: 5, inputTokens: 351, outputTokens: 36 })
    expect(live.byChild['p.c1-1-m1']!.children).toMatchObject({ requests: 1, inputTokens: 1, outputTokens: 1 })
    await parent.dispose()
    expect(await usageTree(store, 'p')).toEqual(live)
  })
})
