/**
 * bench/README.md B10 (docs/spec/lifecycle.md §9 "a PostgreSQL worker hands the session's lease back while it is
 * parked"): 10,000 parked sessions in one PostgreSQL; a worker holds no lease and makes no
 * per-session queries while nothing is decided (its queries per poll interval do not grow with the
 * number of parked sessions). Figures (queries, CPU) are printed; the assertions count, never time.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { scriptedModel } from '../../models/index.js'
import { postgresStore, runWorkers, type PostgresStore } from '../../workers/index.js'
import { defineTool } from '../../tools/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll, until } from '../stores/postgres/helpers.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

const PARKED = 10_000

function agent() {
  const rm = defineTool({ name: 'rm', description: 'delete', parameters: z.object({ path: z.string() }), needsApproval: true, execute: () => 'ok' })
  return {
    model: scriptedModel((request) => {
      const last = request.messages[request.messages.length - 1]
      return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'rm', args: { path: 'x' } }] }
    }, { info: { name: 'scripted' } }),
    tools: [rm],
    system: 'b10',
  }
}

describe('B10: parked sessions cost a worker nothing per session', () => {
  it(`${PARKED} parked sessions: no lease held, no claim, queries per poll independent of the sessions`, async () => {
    const store = postgresStore({ connectionString: await freshDb('b10') })
    stores.push(store)
    await store.migrate()
    const first = runWorkers({ store, leaseMs: 2000, pollMs: 50, lingerMs: 20, agent })
    await store.send('p0', 'delete x')
    await until(async () => (await readAll(store, 'p0')).some((e) => e.type === 'step/parked') && (await store.sessions())[0]?.leaseOwner === null, 'parked and handed back')
    await first.stop()
    // 9,999 more copies of the parked session (same events, own header id)
    await store.pool.query(
      `INSERT INTO turnlog_sessions (id, header, length, token, pending, due_at)
       SELECT 'p' || g, (header::jsonb || jsonb_build_object('id', 'p' || g))::json, length, 0, 0, due_at
       FROM turnlog_sessions, generate_series(1, $1 - 1) AS g WHERE id = 'p0'`, [PARKED])
    await store.pool.query(`INSERT INTO turnlog_events (session_id, seq, event) SELECT 'p' || g, seq, event FROM turnlog_events, generate_series(1, $1 - 1) AS g WHERE session_id = 'p0'`, [PARKED])
    await store.pool.query('ANALYZE turnlog_sessions')
    let queries = 0
    const query = store.pool.query.bind(store.pool)
    ;(store.pool as { query: unknown }).query = (...args: unknown[]) => {
      queries++
      return (query as (...a: unknown[]) => unknown)(...args)
    }
    const pollMs = 100
    const polls = 30
    const cpu0 = process.cpuUsage()
    const w = runWorkers({ store, leaseMs: 2000, pollMs, lingerMs: 20, agent })
    try {
      await new Promise((r) => setTimeout(r, pollMs * polls))
    } finally {
      await w.stop()
    }
    const cpu = process.cpuUsage(cpu0)
    const held = await store.pool.query('SELECT count(*)::int AS n FROM turnlog_sessions WHERE lease_owner IS NOT NULL')
    console.log(`B10: ${PARKED} parked sessions, ${polls} polls of ${pollMs} ms: ${queries} queries (${(queries / polls).toFixed(2)} per poll, ${Math.round(queries / (polls * pollMs / 60_000))} per minute), CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms (this process, incl. the test's own), claimed ${w.stats.claimed}`)
    expect((held.rows[0] as { n: number }).n).toBe(0)
    expect(w.stats.claimed).toBe(0)
    // one claim query per poll (plus the start and the LISTEN catch-up), nothing per session
    expect(queries).toBeLessThanOrEqual(polls * 2 + 5)
  })
})
