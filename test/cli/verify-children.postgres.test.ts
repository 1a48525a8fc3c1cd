/**
 * `turnlog verify postgres://…#p --children` (L19 across logs): the children are read from the same
 * database; a child whose header names another call is listed as `postgres://…#child line 1
 * (parent.callId)`, exit 1.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { memoryStore } from '../../stores/index.js'
import { postgresStore } from '../../stores/postgres/index.js'
import type { LogStore } from '../../stores/types.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { cli } from './helpers.js'

afterAll(async () => {
  await dropAll()
})

async function copy(from: LogStore, to: LogStore, id: string, as = id, callId?: string): Promise<void> {
  const r = await from.open(id, 'read')
  const events: LogEvent[] = []
  for await (const e of r.events()) events.push(e)
  await r.close()
  const p = r.header.parent
  await to.create(as, p ? { parent: { ...p, ...(callId !== undefined ? { callId } : {}) } } : {})
  const w = await to.open(as, 'write')
  await w.append(events, { expectedSeq: 0 })
  await w.close()
}

describe('turnlog verify --children on PostgreSQL', () => {
  it('L19: the family is read from the same database; a broken header is named by its session URL, line and field', async () => {
    const mem = memoryStore()
    const agent = createAgent({
      store: mem, sessionId: 'p', system: 'parent',
      tools: [defineSubagent({
        name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
        agent: () => ({ model: scriptedModel(() => ({ text: 'Rayleigh scattering.' })), system: 'child' }),
      })],
      model: scriptedModel([{ toolCalls: [{ name: 'research', args: { question: 'why blue' }, id: 'c1' }] }, { text: 'parent done' }]),
    })
    agent.followup('go')
    await agent.whenIdle()
    await agent.flush()
    await agent.dispose()

    const url = await freshDb('verifykids')
    const store = postgresStore({ connectionString: url })
    try {
      await store.migrate()
      await copy(mem, store, 'p')
      await copy(mem, store, 'p.c1-1-c1')
      const ok = await cli(['verify', `${url}#p`, '--children'])
      expect(ok.code, ok.stderr + ok.stdout).toBe(0)
      expect(ok.stdout).toContain('every family rule holds (L19)')
      expect(ok.stdout).toContain('2 sessions (1 child)')

      // the same family under another parent id, its child's header naming another call
      const r = await mem.open('p', 'read')
      const events: LogEvent[] = []
      for await (const e of r.events()) events.push(e.type === 'child/spawned' ? { ...e, data: { ...(e.data as object), child: 'q.c1-1-c1' } } as LogEvent : e)
      await r.close()
      await store.create('q')
      const w = await store.open('q', 'write')
      await w.append(events, { expectedSeq: 0 })
      await w.close()
      const c = await mem.open('p.c1-1-c1', 'read')
      const parent = c.header.parent!
      await c.close()
      await store.create('q.c1-1-c1', { parent: { ...parent, session: 'q', callId: 'c7' } })
      const bad = await cli(['verify', `${url}#q`, '--children'])
      expect(bad.code).toBe(1)
      expect(bad.stdout).toMatch(/L19 FAMILY_HEADER postgres:\/\/\S+#q\.c1-1-c1 line 1 \(parent\.callId\): child q\.c1-1-c1: its header names call c7/)
    } finally {
      await store.close()
    }
  }, 60_000)
})
