/**
 * Issue 38 item 26: every input a person or client sends into a session has one limit
 * (`MAX_INPUT_BYTES`, 1 MiB, events/input-size.ts) on every store, refused with the coded
 * `INPUT_TOO_LARGE` before anything is written. Memory and JSONL here; PostgreSQL in
 * test/stores/postgres/input-size.test.ts.
 */
import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MAX_INPUT_BYTES } from '../../events/input-size.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { memoryStore } from '../../stores/memory.js'
import { decideInStore, type StoreDecisionInput } from '../../stores/decide.js'
import { tempDir } from '../http/helpers.js'

const big = 'x'.repeat(MAX_INPUT_BYTES + 1)
const bigUtf8 = 'é'.repeat(MAX_INPUT_BYTES / 2 + 1) // fewer UTF-16 units than bytes

describe('one input limit on every store (issue 38 item 26)', () => {
  it('an agent refuses the same decisions (agent.decide, what turnlog/http calls in-process)', async () => {
    const { createAgent } = await import('../../agent/agent.js')
    const { scriptedModel } = await import('../../models/scripted.js')
    const agent = createAgent({ model: scriptedModel([]), store: memoryStore(), sessionId: 'a1' })
    try {
      await expect(agent.decide('ap-1', { kind: 'deny', reason: big })).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' })
      await expect(agent.decide('ap-1', { kind: 'approve', arguments: { text: big } })).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' })
    } finally {
      await agent.dispose()
    }
  })

  it('memory and JSONL refuse a decision reason or edited arguments over 1 MiB with INPUT_TOO_LARGE and write nothing', async () => {
    const tmp = tempDir()
    try {
      const memory = memoryStore()
      const jsonl = jsonlStore(tmp.dir)
      // memory has no decide of its own: decideInStore is what a store without a channel runs
      const stores = {
        memory: { decide: (id: string, a: string, d: StoreDecisionInput) => decideInStore(memory, id, a, d), has: (id: string) => memory.has(id) },
        jsonl: { decide: (id: string, a: string, d: StoreDecisionInput) => jsonl.decide(id, a, d), has: (id: string) => jsonl.has(id) },
      }
      for (const [name, store] of Object.entries(stores)) {
        for (const decision of [
          { kind: 'deny' as const, reason: big },
          { kind: 'deny' as const, reason: bigUtf8 },
          { kind: 'approve' as const, arguments: { text: big } },
          { kind: 'approve' as const, arguments: big },
        ]) {
          await expect(store.decide('s1', 'ap-1', decision), name).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' })
        }
        expect(await store.has('s1'), name).toBe(false)
      }
      expect(readdirSync(tmp.dir)).toEqual([])
      // at the limit is not over it: the decision goes on to its own checks (no such approval here)
      await expect(stores.memory.decide('s1', 'ap-1', { kind: 'deny', reason: 'x'.repeat(MAX_INPUT_BYTES) })).rejects.not.toMatchObject({ code: 'INPUT_TOO_LARGE' })
    } finally {
      tmp.remove()
    }
  })
})
