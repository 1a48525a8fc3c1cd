/**
 * Approvals on PostgreSQL (docs/spec/lifecycle.md §9; stores/postgres/decisions.ts) with runWorkers against a
 * real server: a worker parks a session and hands its lease back (a parked session holds no
 * lease); `store.decide` from outside the worker is durable at once, reaches the worker
 * (NOTIFY / claim) and is logged exactly once; two racing decisions: exactly one wins; an expiry is
 * claimed when it is due (`due_at`); the approved body runs once (R10); every log verifies.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { TurnlogError, type EventOf, type LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { postgresStore, runWorkers, type PostgresStore } from '../../workers/index.js'
import { defineTool } from '../../tools/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll, until, verifyOk } from '../stores/postgres/helpers.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

async function newStore(): Promise<PostgresStore> {
  const store = postgresStore({ connectionString: await freshDb('ap') })
  stores.push(store)
  await store.migrate()
  return store
}

function approvalAgent(runs: string[], timeoutMs?: number) {
  const rm = defineTool({
    name: 'rm', description: 'delete', parameters: z.object({ path: z.string() }),
    needsApproval: true, ...(timeoutMs !== undefined ? { approval: { timeoutMs } } : {}),
    execute: ({ path }) => {
      runs.push(path)
      return `deleted ${path}`
    },
  })
  return {
    model: scriptedModel((request) => {
      const last = request.messages[request.messages.length - 1]
      return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'rm', args: { path: 'b' } }] }
    }, { info: { name: 'scripted' } }),
    tools: [rm],
    system: 'approvals on postgres',
  }
}

const decidedOf = (ev: LogEvent[]) => ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided')
const parkedOf = (ev: LogEvent[]) => ev.filter((e) => e.type === 'step/parked')
const openId = (ev: LogEvent[]) => (ev.find((e) => e.type === 'tool/approval-requested') as EventOf<'tool/approval-requested'> | undefined)?.data.approvalId

async function leaseOwner(store: PostgresStore, id: string): Promise<string | null> {
  const r = await store.pool.query('SELECT lease_owner FROM turnlog_sessions WHERE id = $1', [id])
  return (r.rows[0] as { lease_owner: string | null }).lease_owner
}

describe('approvals on PostgreSQL (docs/spec/lifecycle.md §9, R9, R10)', () => {
  it('R9/R10: a worker parks the session and hands the lease back; store.decide from outside reaches a worker, logged once; the body runs once', async () => {
    const store = await newStore()
    const runs: string[] = []
    const w = runWorkers({ store, concurrency: 4, leaseMs: 2000, pollMs: 50, lingerMs: 50, agent: () => approvalAgent(runs) })
    try {
      await store.send('p1', 'delete b')
      await until(async () => parkedOf(await readAll(store, 'p1')).length > 0 && (await leaseOwner(store, 'p1')) === null, 'parked and handed back')
      expect(runs).toEqual([]) // R9
      const id = openId(await readAll(store, 'p1'))!
      const bad = await store.decide('p1', id, { kind: 'approve', arguments: { path: 3 } }).catch((e: unknown) => e)
      expect(TurnlogError.is(bad, 'INVALID_ARGS')).toBe(true)
      const unknown = await store.decide('p1', 'nope', { kind: 'approve' }).catch((e: unknown) => e)
      expect(TurnlogError.is(unknown, 'UNKNOWN_APPROVAL')).toBe(true)
      const d = await store.decide('p1', id, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } })
      expect(d.approvalId).toBe(id)
      const again = await store.decide('p1', id, { kind: 'deny' }).catch((e: unknown) => e)
      expect(TurnlogError.is(again, 'APPROVAL_DECIDED')).toBe(true)
      await until(async () => {
        const ev = await readAll(store, 'p1')
        return ev.some((e) => e.type === 'turn/end') && (await leaseOwner(store, 'p1')) === null
      }, 'the turn ends')
      const ev = await readAll(store, 'p1')
      expect(verifyOk(ev)).toEqual([])
      expect(decidedOf(ev).map((e) => [e.data.decision.kind, e.data.by])).toEqual([['approve', { kind: 'user', id: 'ann' }]])
      expect(runs).toEqual(['b'])
      const row = await store.pool.query('SELECT pending FROM turnlog_sessions WHERE id = $1', ['p1'])
      expect((row.rows[0] as { pending: number }).pending).toBe(0)
    } finally {
      await w.stop()
    }
  })

  it('two decisions racing: exactly one wins (the unique key), and the worker logs that one', async () => {
    const store = await newStore()
    const runs: string[] = []
    const w = runWorkers({ store, concurrency: 4, leaseMs: 2000, pollMs: 50, lingerMs: 50, agent: () => approvalAgent(runs) })
    try {
      await store.send('p2', 'delete b')
      await until(async () => parkedOf(await readAll(store, 'p2')).length > 0, 'parked')
      const id = openId(await readAll(store, 'p2'))!
      const other = postgresStore({ connectionString: store.connectionString! })
      stores.push(other)
      const r = await Promise.allSettled([store.decide('p2', id, { kind: 'approve' }), other.decide('p2', id, { kind: 'deny', reason: 'no' })])
      expect(r.map((x) => x.status).sort()).toEqual(['fulfilled', 'rejected'])
      const lost = r.find((x) => x.status === 'rejected') as PromiseRejectedResult
      expect(TurnlogError.is(lost.reason, 'APPROVAL_DECIDED')).toBe(true)
      const won = r[0]!.status === 'fulfilled' ? 'approve' : 'deny'
      await until(async () => (await readAll(store, 'p2')).some((e) => e.type === 'turn/end'), 'the turn ends')
      const ev = await readAll(store, 'p2')
      expect(verifyOk(ev)).toEqual([])
      expect(decidedOf(ev).map((e) => e.data.decision.kind)).toEqual([won])
      expect(runs).toEqual(won === 'approve' ? ['b'] : [])
    } finally {
      await w.stop()
    }
  })

  it('an expiry is claimed when it is due (due_at): decided by expired, APPROVAL_EXPIRED, nothing held meanwhile', async () => {
    const store = await newStore()
    const runs: string[] = []
    const w = runWorkers({ store, concurrency: 4, leaseMs: 2000, pollMs: 50, lingerMs: 20, agent: () => approvalAgent(runs, 1500) })
    try {
      await store.send('p3', 'delete b')
      await until(async () => (await readAll(store, 'p3')).some((e) => e.type === 'turn/end'), 'the expiry ends the turn')
      const ev = await readAll(store, 'p3')
      expect(verifyOk(ev)).toEqual([])
      expect(decidedOf(ev).map((e) => e.data.by.kind)).toEqual(['expired'])
      const result = ev.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
      expect((result.data as { error?: { code: string } }).error?.code).toBe('APPROVAL_EXPIRED')
      expect(runs).toEqual([])
      const row = await store.pool.query('SELECT due_at FROM turnlog_sessions WHERE id = $1', ['p3'])
      expect((row.rows[0] as { due_at: Date | null }).due_at).toBeNull()
    } finally {
      await w.stop()
    }
  })
})
