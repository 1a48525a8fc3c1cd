/**
 * Clock skew and the one due column (issue 21; lifecycle §9 expiry): `due_at` is anchored on the
 * database's clock (the delay from the batch's own event time, added to the server's now), so an
 * agent whose clock is hours off still makes its session claimable exactly when its expiry is due
 * by the server: the claim condition (`DUE`, compared with the server's clock) selects exactly the
 * due sessions. The skew left is bounded by the time between the batch's events and its commit.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import { scriptedModel } from '../../models/index.js'
import { postgresStore, type PostgresStore } from '../../stores/postgres/index.js'
import { DUE } from '../../stores/postgres/decisions.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { countingTool, manualTimers } from './helpers.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

const HOURS = 3 * 3_600_000

async function park(store: PostgresStore, id: string, timeoutMs: number, skewMs: number): Promise<void> {
  const { tool } = countingTool('rm', { needsApproval: true, timeoutMs })
  const model = scriptedModel((request) => {
    const last = request.messages[request.messages.length - 1]
    return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'rm', args: { path: 'b' } }] }
  }, { info: { name: 'scripted' } })
  // the agent's clock is hours off, and so its timer: the expiry never fires in this process
  const agent = createAgent({ store, sessionId: id, model, tools: [tool], clock: () => Date.now() + skewMs, timers: manualTimers().timers })
  agent.followup('delete b')
  expect(await agent.whenSettled()).toBe('parked')
  await agent.dispose()
}

describe('clock skew: due times compared on the database clock (issue 21, lifecycle §9)', () => {
  it('an agent 3 hours ahead or behind: exactly the sessions whose expiry is due by the server are claimable', async () => {
    const store = postgresStore({ connectionString: await freshDb('skew') })
    stores.push(store)
    await store.migrate()
    await park(store, 'ahead-due', 1, +HOURS)
    await park(store, 'behind-due', 1, -HOURS)
    await park(store, 'ahead-later', HOURS, +HOURS)
    await park(store, 'behind-later', HOURS, -HOURS)
    const r = await store.pool.query(`SELECT id FROM turnlog_sessions WHERE lease_owner IS NULL AND ${DUE} ORDER BY id COLLATE "C"`)
    expect(r.rows.map((x: { id: string }) => x.id)).toEqual(['ahead-due', 'behind-due'])
    // the later ones are due about timeoutMs after the server's now, not hours off
    const later = await store.pool.query(
      `SELECT id, extract(epoch FROM due_at - clock_timestamp()) * 1000 AS in_ms FROM turnlog_sessions WHERE id LIKE '%-later' ORDER BY id COLLATE "C"`)
    for (const row of later.rows as Array<{ id: string; in_ms: string }>) {
      expect(Number(row.in_ms), row.id).toBeGreaterThan(HOURS - 600_000)
      expect(Number(row.in_ms), row.id).toBeLessThanOrEqual(HOURS)
    }
  }, 60_000)
})
