/**
 * Issue 27 item 4 on PostgreSQL: `openAgent` creates a missing session and resumes a present one
 * through the store's ownership (the same scenario as the memory and jsonl stores), and two
 * stores (two pools, as two processes have) racing on one new id give one agent and one
 * `SESSION_OWNED`.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { TurnlogError } from '../../../events/errors.js'
import { openAgent } from '../../../replay/index.js'
import { postgresStore } from '../../../stores/postgres/index.js'
import { openOrCreate, opts } from '../../replay/open-agent-scenario.js'
import { dropAll, freshDb } from './db.js'

afterAll(dropAll)

describe('openAgent on postgresStore (issue 27 item 4)', () => {
  it('P5 L2: creates when missing, resumes when present, one winner when two race', async () => {
    const store = postgresStore({ connectionString: await freshDb('open') })
    await store.migrate()
    try {
      await openOrCreate(store)
    } finally {
      await store.close()
    }
  })

  it('P5: two pools racing on one new session: one agent, one SESSION_OWNED', async () => {
    const url = await freshDb('openrace')
    const a = postgresStore({ connectionString: url })
    await a.migrate()
    const b = postgresStore({ connectionString: url })
    try {
      const race = await Promise.allSettled([openAgent({ ...opts(a), sessionId: 'r' }), openAgent({ ...opts(b), sessionId: 'r' })])
      const won = race.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
      const lost = race.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []))
      expect(won).toHaveLength(1)
      expect(lost).toHaveLength(1)
      expect(TurnlogError.is(lost[0], 'SESSION_OWNED'), String(lost[0])).toBe(true)
      await won[0]!.dispose()
    } finally {
      await a.close()
      await b.close()
    }
  })
})
