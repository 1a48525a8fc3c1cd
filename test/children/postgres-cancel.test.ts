/**
 * No orphan child after a parent cancel across processes (issue 25's first test bullet, lifecycle
 * §10, L19): a PostgreSQL worker runs a parent whose subagent call's child is streaming; a stop of
 * the parent is recorded through another connection (`store.cancel`, what `POST /chat/:id/stop`
 * does from any process). The worker cancels the parent's turn, the cancel cascades to the child
 * (`aborted {cause: parent}`), the call gets exactly one result, nothing runs on in the child, and
 * the family passes `verifyFamily`.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import type { ModelAdapter } from '../../models/index.js'
import { scriptedModel } from '../../models/index.js'
import { verifyFamily } from '../../replay/verify-family.js'
import { postgresStore, runWorkers, type PostgresStore } from '../../workers/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll, until } from '../stores/postgres/helpers.js'

const CHILD = 'p.c1-1-c1'
const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

/** A child model that streams a chunk, then waits for its abort (it never answers on its own). */
const hanging: ModelAdapter = {
  info: { contextWindow: 100_000 },
  async *stream(_request, signal) {
    yield { type: 'block-start', index: 0, blockType: 'text' }
    yield { type: 'text-delta', index: 0, text: 'looking' }
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve()
      else signal.addEventListener('abort', () => resolve(), { once: true })
    })
    yield { type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'aborted' } }
  },
}

describe('a parent cancelled from another connection while its child runs (PostgreSQL workers)', () => {
  it('L19: the child ends aborted by its parent, the call has one result, nothing starts in the child after it, the family verifies', async () => {
    const url = await freshDb('subcancel')
    const store = postgresStore({ connectionString: url, leaseMs: 2000 })
    const other = postgresStore({ connectionString: url })
    stores.push(store, other)
    await store.migrate()
    const research = defineSubagent({
      name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
      agent: () => ({ model: hanging, system: 'child' }),
    })
    const w = runWorkers({
      store, concurrency: 4, leaseMs: 2000, pollMs: 50, lingerMs: 0,
      agent: () => ({
        model: scriptedModel([{ toolCalls: [{ name: 'research', args: { question: 'why?' }, id: 'c1' }] }, { text: 'never' }]),
        tools: [research], system: 'parent',
      }),
    })
    try {
      await store.send('p', 'ask')
      const has = async (id: string, type: string) => (await store.has(id)) && (await readAll(store, id)).some((e) => e.type === type)
      await until(async () => await has(CHILD, 'assistant/chunk'), 'the child streams')
      await other.cancel('p')
      await until(async () => await has('p', 'turn/end') && await has(CHILD, 'turn/end'), 'the parent and the child end', 20_000)
      const parent = await readAll(store, 'p')
      const child = await readAll(store, CHILD)
      const results = parent.filter((e): e is EventOf<'tool/result'> => e.type === 'tool/result')
      expect(results).toHaveLength(1)
      expect(results[0]!.data.error).toBeDefined()
      expect(parent.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)).toEqual(['aborted'])
      expect(child.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason)).toEqual([{ kind: 'aborted', cause: { kind: 'parent' } }])
      const h = await store.open('p', 'read')
      const header = h.header
      await h.close()
      const fam = await verifyFamily({ header, events: parent as LogEvent[] }, store)
      expect(fam.violations).toEqual([])
      expect(fam.sessions.map((s) => s.id)).toEqual(['p', CHILD])
    } finally {
      await w.stop()
    }
  }, 60_000)
})
