/**
 * Input rounds on PostgreSQL (docs/spec/lifecycle.md §11; stores/postgres/answer.ts): answers travel the
 * decisions' channel. A worker parks a session on an open round and hands its lease back;
 * `store.answer` from outside is validated (refused naming the field, nothing recorded), durable
 * at once, makes the session claimable, and is logged once by the worker that claims it; the body's
 * next round runs once (R10, R11). An app's own agent that owns the session receives an answer
 * given elsewhere (NOTIFY / poll) and logs it once. First answer wins (INPUT_ANSWERED); an expired
 * round is claimed when due and a late answer is refused. Every log verifies (L21).
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { createAgent } from '../../agent/index.js'
import { postgresStore, runWorkers, type PostgresStore } from '../../workers/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll, until, verifyOk } from '../stores/postgres/helpers.js'
import { roundsTool } from './helpers.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

async function newStore(): Promise<PostgresStore> {
  const store = postgresStore({ connectionString: await freshDb('in') })
  stores.push(store)
  await store.migrate()
  return store
}

function model() {
  return scriptedModel((request) => {
    const last = request.messages[request.messages.length - 1]
    return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'ship', args: { item: 'book' } }] }
  }, { info: { name: 'scripted' } })
}

const asked = (ev: LogEvent[]) => ev.filter((e): e is EventOf<'tool/input-requested'> => e.type === 'tool/input-requested')
const provided = (ev: LogEvent[]) => ev.filter((e): e is EventOf<'tool/input-provided'> => e.type === 'tool/input-provided')
const openRound = (ev: LogEvent[]) => {
  const done = new Set(provided(ev).map((e) => e.data.requestId))
  return asked(ev).find((e) => !done.has(e.data.requestId))?.data
}

async function leaseOwner(store: PostgresStore, id: string): Promise<string | null> {
  const r = await store.pool.query('SELECT lease_owner FROM turnlog_sessions WHERE id = $1', [id])
  return (r.rows[0] as { lease_owner: string | null }).lease_owner
}

describe('input rounds on PostgreSQL (docs/spec/lifecycle.md §11, R10, R11, L21)', () => {
  it('R10 R11 L21: a worker parks on a round and hands the lease back; store.answer reaches a worker, logged once; each round runs once', async () => {
    const store = await newStore()
    const tool = roundsTool({ rounds: 2 })
    const w = runWorkers({ store, concurrency: 2, leaseMs: 2000, pollMs: 50, lingerMs: 20, agent: () => ({ model: model(), tools: [tool.tool] }) })
    try {
      await store.send('q1', 'ship it')
      await until(async () => openRound(await readAll(store, 'q1')) !== undefined && (await leaseOwner(store, 'q1')) === null, 'parked on round 1, handed back')
      expect(tool.runs.map((r) => r.round)).toEqual([0]) // R9: nothing runs while parked
      const r1 = openRound(await readAll(store, 'q1'))!
      await expect(store.answer('q1', r1.requestId, { action: 'accept', responses: { address: { zip: '1' } } })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'responses.address/city' })
      expect((await store.pool.query('SELECT count(*)::int AS n FROM turnlog_decisions')).rows[0]).toEqual({ n: 0 })
      await expect(store.answer('q1', 'nope', { action: 'decline' })).rejects.toMatchObject({ code: 'UNKNOWN_INPUT' })
      const a1 = await store.answer('q1', r1.requestId, { action: 'accept', responses: { address: { city: 'Gent' } } }, { by: { kind: 'user', id: 'bo' } })
      expect(a1).toMatchObject({ requestId: r1.requestId, round: 1 })
      await expect(store.answer('q1', r1.requestId, { action: 'decline' })).rejects.toMatchObject({ code: 'INPUT_ANSWERED' })
      await until(async () => { const ev = await readAll(store, 'q1'); return asked(ev).length === 2 && (await leaseOwner(store, 'q1')) === null }, 'round 2 asked, handed back')
      const r2 = openRound(await readAll(store, 'q1'))!
      expect(r2.round).toBe(2)
      await store.answer('q1', r2.requestId, { action: 'accept', responses: { speed: 'fast' } })
      await until(async () => (await readAll(store, 'q1')).some((e) => e.type === 'turn/end') && (await leaseOwner(store, 'q1')) === null, 'the turn ends')
      const ev = await readAll(store, 'q1')
      expect(provided(ev).map((e) => [e.data.round, e.data.by])).toEqual([[1, { kind: 'user', id: 'bo' }], [2, { kind: 'user' }]])
      expect(tool.runs.map((r) => r.round)).toEqual([0, 1, 2]) // R10/R11: once per round
      const rows = await store.pool.query('SELECT count(*)::int AS n FROM turnlog_decisions WHERE logged_seq IS NULL')
      expect(rows.rows[0]).toEqual({ n: 0 })
      const pending = await store.pool.query("SELECT pending FROM turnlog_sessions WHERE id = 'q1'")
      expect(pending.rows[0]).toEqual({ pending: 0 })
      expect(verifyOk(await readAll(store, 'q1'))).toEqual([])
    } finally {
      await w.stop()
    }
  })

  it('R11: an app-owned parked agent receives an answer recorded elsewhere (NOTIFY) and logs it once', async () => {
    const store = await newStore()
    const tool = roundsTool({ rounds: 1 })
    const a = createAgent({ store, sessionId: 'q2', model: model(), tools: [tool.tool] })
    a.followup('ship it')
    expect(await a.whenSettled()).toBe('parked')
    await a.flush()
    const other = postgresStore({ connectionString: store.connectionString! })
    stores.push(other)
    const requestId = a.inputs()[0]!.requestId
    await other.answer('q2', requestId, { action: 'decline' }, { by: { kind: 'user', id: 'cy' } })
    await until(async () => tool.runs.length === 2, 'the next round ran')
    await a.whenIdle()
    expect(tool.runs[1]!.input).toMatchObject({ action: 'decline', by: { kind: 'user', id: 'cy' } })
    await expect(a.answer(requestId, { action: 'decline' })).rejects.toMatchObject({ code: 'INPUT_ANSWERED' })
    await a.dispose()
    expect(provided(await readAll(store, 'q2'))).toHaveLength(1)
    const rows = await store.pool.query('SELECT logged_seq FROM turnlog_decisions WHERE session_id = $1', ['q2'])
    expect(rows.rows.every((r) => (r as { logged_seq: number | null }).logged_seq !== null)).toBe(true)
    expect(verifyOk(await readAll(store, 'q2'))).toEqual([])
  })

  it('R9 L21: an expiring round is claimed when due and answered cancel by expired; a late answer is refused', async () => {
    const store = await newStore()
    const tool = roundsTool({ rounds: 1, expiresInMs: 1500 })
    const w = runWorkers({ store, concurrency: 2, leaseMs: 2000, pollMs: 50, lingerMs: 0, agent: () => ({ model: model(), tools: [tool.tool] }) })
    try {
      await store.send('q3', 'ship it')
      await until(async () => openRound(await readAll(store, 'q3')) !== undefined, 'asked')
      const r = openRound(await readAll(store, 'q3'))!
      // parked without a lease, due when the round expires (due_at counts open rounds' expiresAt)
      await until(async () => (await leaseOwner(store, 'q3')) === null || (await readAll(store, 'q3')).some((e) => e.type === 'turn/end'), 'handed back')
      const due = await store.pool.query("SELECT due_at IS NOT NULL AS due FROM turnlog_sessions WHERE id = 'q3'")
      if (!(await readAll(store, 'q3')).some((e) => e.type === 'turn/end')) expect(due.rows[0]).toEqual({ due: true })
      await until(async () => (await readAll(store, 'q3')).some((e) => e.type === 'turn/end'), 'expired and the turn ends')
      const ev = await readAll(store, 'q3')
      expect(provided(ev).map((e) => e.data.by)).toEqual([{ kind: 'expired' }])
      await expect(store.answer('q3', r.requestId, { action: 'decline' })).rejects.toMatchObject({ code: 'INPUT_ANSWERED' })
      expect(tool.runs.map((x) => x.input?.action)).toEqual([undefined, 'cancel'])
      expect(verifyOk(await readAll(store, 'q3'))).toEqual([])
    } finally {
      await w.stop()
    }
  })
})
