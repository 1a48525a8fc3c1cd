/**
 * runWorkers in this process against a real server (docs/spec/api.md "Across machines"): durable `send`
 * without the lease, each sent message moved into the log exactly once (the append that logs its
 * splice marks it moved), in send order, answered; idle sessions handed back; two workers racing
 * for one session (exactly one runs it); LEASE_LOST fencing; stop() drains.
 * Invariants: L1 (seq), the "exactly once" input, docs/spec/reliability.md "two writers on one session".
 */
import { afterAll, describe, expect, it } from 'vitest'
import { TurnlogError } from '../../../events/errors.js'
import { postgresStore, runWorkers, type PostgresStore } from '../../../workers/index.js'
import { SAMPLE, expectCode } from '../contract.js'
import { dropAll, freshDb } from './db.js'
import { answered, echoAgent, readAll, until, verifyOk } from './helpers.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

async function newStore(opts: { leaseMs?: number } = {}, url?: string): Promise<{ store: PostgresStore; url: string }> {
  const u = url ?? (await freshDb('w'))
  const store = postgresStore({ connectionString: u, ...opts })
  stores.push(store)
  await store.migrate()
  return { store, url: u }
}

describe('postgres send + runWorkers', () => {
  it('migrate() is idempotent, also from several connections at once', async () => {
    const { store, url } = await newStore()
    const others = await Promise.all([1, 2, 3].map(() => newStore({}, url)))
    await Promise.all([store.migrate(), ...others.map((o) => o.store.migrate())])
    expect(await store.list()).toEqual([])
  })

  it('send is durable without a worker, creates the session, and is idempotent on its id', async () => {
    const { store } = await newStore()
    const id = await store.send('s-1', 'hello')
    expect(typeof id).toBe('string')
    expect(await store.send('s-1', { id: 'm-2', content: [{ type: 'text', text: 'two' }] })).toBe('m-2')
    expect(await store.send('s-1', { id: 'm-2', content: [{ type: 'text', text: 'two' }] })).toBe('m-2')
    const rows = await store.sessions()
    expect(rows).toMatchObject([{ id: 's-1', events: 0, status: 'waiting', pending: 2, leaseOwner: null }])
    await expectCode(store.send('s-1', { content: 'nope' as never }), 'INVALID_MESSAGE')
    await expectCode(store.send('../x', 'x'), 'INVALID_SESSION_ID')
    await expectCode(store.send('s-1', 'x', { target: 'elsewhere' as never }), 'INVALID_ARGUMENT')
  })

  it('a worker moves every sent message into the log exactly once, in send order, answers each, and hands the session back', async () => {
    const { store } = await newStore()
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push(await store.send('a', `q${i}`))
    const w = runWorkers({ store, concurrency: 2, leaseMs: 2000, pollMs: 50, agent: () => echoAgent() })
    await until(async () => (await store.sessions())[0]?.status === 'idle', 'hand-back')
    // more input after the hand-back: claimed again
    ids.push(await store.send('a', 'later'))
    await until(async () => {
      const r = (await store.sessions())[0]
      return r?.status === 'idle' && r.pending === 0 && answered(await readAll(store, 'a')).count.size === 6
    }, 'second round')
    await w.stop()
    const events = await readAll(store, 'a')
    expect(verifyOk(events)).toEqual([])
    const { count, unanswered } = answered(events)
    expect([...count.keys()]).toEqual(ids)
    expect([...count.values()].every((n) => n === 1)).toBe(true)
    expect(unanswered).toEqual([])
    expect(w.stats.claimed).toBeGreaterThanOrEqual(2)
    expect(w.stats.handedBack).toBeGreaterThanOrEqual(2)
    // the inbox rows are marked with the seq of the splice that logged them
    const moved = await store.pool.query('SELECT message_id, moved_seq FROM turnlog_inbox ORDER BY n')
    for (const row of moved.rows as Array<{ message_id: string; moved_seq: number }>) {
      const e = events[row.moved_seq]!
      expect(e.type).toBe('agent/inbox/spliced')
      expect((e.data as { inserted: Array<{ id: string }> }).inserted.map((m) => m.id)).toContain(row.message_id)
    }
  })

  it('two workers racing for one session: exactly one runs it (SKIP LOCKED claim, one lease)', async () => {
    const { store, url } = await newStore()
    const { store: other } = await newStore({}, url)
    for (let i = 0; i < 3; i++) await store.send('race', `r${i}`)
    const w1 = runWorkers({ store, concurrency: 1, leaseMs: 5000, pollMs: 20, agent: () => echoAgent(), workerId: 'w1' })
    const w2 = runWorkers({ store: other, concurrency: 1, leaseMs: 5000, pollMs: 20, agent: () => echoAgent(), workerId: 'w2' })
    await until(async () => (await store.sessions())[0]?.status === 'idle', 'served')
    await Promise.all([w1.stop(), w2.stop()])
    expect(w1.stats.claimed + w2.stats.claimed).toBe(1)
    const events = await readAll(store, 'race')
    expect(verifyOk(events)).toEqual([])
    expect([...answered(events).count.values()]).toEqual([1, 1, 1])
  })

  it('LEASE_LOST: a writer whose lease was taken over never appends again (fencing token checked in the append)', async () => {
    const { store, url } = await newStore({ leaseMs: 300 })
    // a second store with heartbeats that never fire: its lease runs out
    const stalled = postgresStore({ connectionString: url, leaseMs: 300, setInterval: () => 0, clearInterval: () => {} })
    stores.push(stalled)
    await store.create('f')
    const w1 = await stalled.open('f', 'write')
    await w1.append(SAMPLE.slice(0, 2), { expectedSeq: 0 })
    await expectCode(store.open('f', 'write'), 'SESSION_OWNED')
    await until(async () => {
      try {
        const w2 = await store.open('f', 'write')
        expect(w2.token).toBeGreaterThan(w1.token)
        await w2.append(SAMPLE.slice(2, 3), { expectedSeq: 2 })
        await w2.close()
        return true
      } catch (err) {
        if (TurnlogError.is(err, 'SESSION_OWNED')) return false
        throw err
      }
    }, 'lease expiry')
    await expectCode(w1.append(SAMPLE.slice(2, 4), { expectedSeq: 2 }), 'LEASE_LOST')
    // stopped for good
    await expectCode(w1.append(SAMPLE.slice(2, 3), { expectedSeq: 2 }), 'LEASE_LOST')
    await w1.close()
    expect((await readAll(store, 'f')).length).toBe(3)
  })

  it('an expired lease with nothing taken over still fences: the late writer gets LEASE_LOST', async () => {
    const { store, url } = await newStore()
    const stalled = postgresStore({ connectionString: url, leaseMs: 200, setInterval: () => 0, clearInterval: () => {} })
    stores.push(stalled)
    await store.create('g')
    const w = await stalled.open('g', 'write')
    await until(async () => {
      const r = await store.sessions()
      return r[0]?.status === 'expired'
    }, 'expiry')
    await expectCode(w.append(SAMPLE.slice(0, 1), { expectedSeq: 0 }), 'LEASE_LOST')
    expect((await readAll(store, 'g')).length).toBe(0)
  })

  it('stop() drains: a running turn finishes, the session is handed back, nothing more is claimed', async () => {
    const { store } = await newStore()
    await store.send('d', 'slow one')
    const agent = () => ({
      ...echoAgent(),
      tools: [{ ...echoAgent().tools[0]!, execute: async () => { await new Promise((r) => setTimeout(r, 300)); return 'x' } }],
    })
    const w = runWorkers({ store, concurrency: 1, leaseMs: 5000, pollMs: 20, agent })
    await until(() => w.active.size === 1, 'claim')
    await w.stop()
    const rows = await store.sessions()
    expect(rows[0]).toMatchObject({ status: 'idle', leaseOwner: null })
    expect(answered(await readAll(store, 'd')).unanswered).toEqual([])
    await store.send('d', 'after stop')
    expect((await store.sessions())[0]).toMatchObject({ status: 'waiting', pending: 1 })
  })
})
