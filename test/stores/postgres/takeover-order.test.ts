/**
 * Issue 24 (round-12 B8 finding): a session whose holder died is taken over before sessions that
 * were never started, so takeover stays within about two lease periods under a backlog. Without
 * the order, an expired lease waited behind every waiting session older than its last activity
 * (B8: 7.1 s after a 2 s lease with every slot busy).
 * The dead holder is the state the database is in after a worker died mid-turn: `lease_owner`
 * set, `lease_until` in the past, a sent message not yet answered.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { postgresStore, runWorkers, type PostgresStore } from '../../../workers/index.js'
import { PgBackend } from '../../../workers/pg-backend.js'
import { dropAll, freshDb } from './db.js'
import { answered, echoAgent, readAll, until, verifyOk } from './helpers.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

describe('docs/spec/api.md "Across machines" (taken over within about two lease periods), B8: expired leases are claimed first', () => {
  it('a worker with one free slot takes over the expired session before 4 older waiting sessions', async () => {
    const store = postgresStore({ connectionString: await freshDb('order') })
    stores.push(store)
    await store.migrate()
    const backlog = ['b0', 'b1', 'b2', 'b3']
    for (const id of backlog) await store.send(id, `waiting ${id}`)
    await store.send('x', 'accepted by a worker that died')
    // the backlog waited longer (older last activity); x's holder died after its last append
    await store.pool.query(`UPDATE turnlog_sessions SET last_activity = now() - interval '10 minutes' WHERE id = ANY($1)`, [backlog])
    await store.pool.query(
      `UPDATE turnlog_sessions SET token = token + 1, lease_owner = 'dead-host:1:dead', lease_until = clock_timestamp() - interval '1 second',
         last_activity = now() WHERE id = 'x'`,
    )
    expect((await store.sessions()).find((r) => r.id === 'x')?.status).toBe('expired')
    const order: string[] = []
    const w = runWorkers({
      store, concurrency: 1, leaseMs: 2000, pollMs: 50, lingerMs: 0,
      agent: (id) => {
        order.push(id)
        return echoAgent()
      },
    })
    try {
      await until(async () => answered(await readAll(store, 'x')).count.size === 1 && (await store.sessions()).find((r) => r.id === 'x')?.status === 'idle', 'x taken over and answered')
    } finally {
      await w.stop()
    }
    expect(order[0]).toBe('x')
    const events = await readAll(store, 'x')
    expect(verifyOk(events)).toEqual([])
    expect(answered(events).unanswered).toEqual([])
  })

  it('B8 item "within one lease period": a lease that missed its heartbeat is claimed when it runs out, not at the next poll', async () => {
    const store = postgresStore({ connectionString: await freshDb('stale') })
    stores.push(store)
    await store.migrate()
    await store.send('y', 'accepted by a worker that stopped beating')
    // its holder beat last 0.7 lease ago (a live holder beats every third of a lease): 300 ms left
    await store.pool.query(
      `UPDATE turnlog_sessions SET token = token + 1, lease_owner = 'dead-host:1:dead', lease_until = clock_timestamp() + interval '300 milliseconds'
       WHERE id = 'y'`,
    )
    const order: string[] = []
    // the poll would come after ten minutes: only the claim at the stale lease's expiry can take y
    const w = runWorkers({
      store, concurrency: 1, leaseMs: 1000, pollMs: 600_000, lingerMs: 0,
      agent: (id) => {
        order.push(id)
        return echoAgent()
      },
    })
    try {
      await until(async () => answered(await readAll(store, 'y')).count.size === 1, 'y taken over at its lease expiry')
    } finally {
      await w.stop()
    }
    expect(order).toEqual(['y'])
    expect(verifyOk(await readAll(store, 'y'))).toEqual([])
  })

  it('the claim says when a stale lease runs out, and nothing of live ones or its own', async () => {
    const store = postgresStore({ connectionString: await freshDb('live') })
    stores.push(store)
    await store.migrate()
    for (const id of ['live', 'stale', 'mine']) await store.send(id, `held ${id}`)
    const hold = (id: string, owner: string, ms: number) => store.pool.query(
      `UPDATE turnlog_sessions SET token = token + 1, lease_owner = $2, lease_until = clock_timestamp() + $3 * interval '1 millisecond' WHERE id = $1`, [id, owner, ms])
    const backend = new PgBackend(store, 1000, () => {})
    // beaten within the last third of a 1 s lease: live, not stale
    await hold('live', 'other', 900)
    await hold('stale', 'other', 900)
    await hold('mine', 'me', 100)
    expect(await backend.claim('me', 1000, 1, [])).toEqual({ claimed: [], staleLeaseExpiresInMs: null })
    await store.pool.query(`UPDATE turnlog_sessions SET lease_until = clock_timestamp() + interval '400 milliseconds' WHERE id = 'stale'`)
    const round = await backend.claim('me', 1000, 1, [])
    expect(round.claimed).toEqual([])
    expect(round.staleLeaseExpiresInMs).toBeGreaterThan(0)
    expect(round.staleLeaseExpiresInMs).toBeLessThanOrEqual(400)
  })
})
