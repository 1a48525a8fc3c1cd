/**
 * runWorkers on one SQLite file, in this process (docs/spec/api.md "Stores": the same fencing and workers
 * as PostgreSQL): durable `send` without the lease, each sent message moved into the log exactly
 * once and answered, idle sessions handed back; two worker pools racing (each session served by
 * one); LEASE_LOST fencing; approvals parked with no lease held, decided from elsewhere, logged
 * once (R9, R10); an expiry claimed when due; a due wakeup fired once (docs/spec/lifecycle.md §10, W2);
 * sessions() with its parked / due / running filters. On both drivers.
 * Invariants: L1 (seq), R9, R10, W2.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../../agent/index.js'
import { TurnlogError, type EventOf, type LogEvent } from '../../../events/index.js'
import { scriptedModel } from '../../../models/index.js'
import { defineTool } from '../../../tools/index.js'
import { sqliteStore, runWorkers, type SqliteStore } from '../../../workers/sqlite.js'
import { SAMPLE, expectCode } from '../contract.js'
import { answered, echoAgent, until, verifyOk } from '../postgres/helpers.js'
import { DRIVERS, tempDir } from './helpers.js'
import { join } from 'node:path'

const stores: SqliteStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
})

async function readAll(store: SqliteStore, id: string): Promise<LogEvent[]> {
  const r = await store.open(id, 'read')
  const out: LogEvent[] = []
  for await (const e of r.events()) out.push(e)
  return out
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
    system: 'approvals on sqlite',
  }
}

const decidedOf = (ev: LogEvent[]) => ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided')
const openId = (ev: LogEvent[]) => (ev.find((e) => e.type === 'tool/approval-requested') as EventOf<'tool/approval-requested'> | undefined)?.data.approvalId
const row = async (store: SqliteStore, id: string) => (await store.sessions()).find((r) => r.id === id)!

for (const driver of DRIVERS) {
  describe(`sqlite send + runWorkers (${driver})`, () => {
    const newStore = async (opts: { leaseMs?: number; setInterval?: () => unknown } = {}, file?: string) => {
      const store = sqliteStore(file ?? join(await tempDir(), 'w.db'), { driver, ...opts })
      stores.push(store)
      return store
    }

    it('send is durable without a worker, creates the session, is idempotent on its id; a worker moves each message once, in send order, answers, hands back', async () => {
      const store = await newStore()
      const ids = [await store.send('a', 'q0')]
      expect(await store.send('a', { id: 'm-1', content: [{ type: 'text', text: 'one' }] })).toBe('m-1')
      expect(await store.send('a', { id: 'm-1', content: [{ type: 'text', text: 'one' }] })).toBe('m-1')
      ids.push('m-1')
      expect(await store.sessions()).toMatchObject([{ id: 'a', events: 0, status: 'waiting', pending: 2, leaseOwner: null }])
      expect(await store.pendingSends('a')).toEqual(ids)
      await expectCode(store.send('a', { content: 'nope' as never }), 'INVALID_MESSAGE')
      await expectCode(store.send('../x', 'x'), 'INVALID_SESSION_ID')
      const w = runWorkers({ store, concurrency: 2, leaseMs: 2000, pollMs: 20, agent: () => echoAgent() })
      try {
        await until(async () => (await row(store, 'a')).status === 'idle', 'hand-back')
        ids.push(await store.send('a', 'later'))
        await until(async () => {
          const r = await row(store, 'a')
          return r.status === 'idle' && r.pending === 0 && answered(await readAll(store, 'a')).count.size === 3
        }, 'the later message answered')
      } finally {
        await w.stop()
      }
      const ev = await readAll(store, 'a')
      const a = answered(ev)
      expect([...a.count.keys()]).toEqual(ids)
      expect([...a.count.values()]).toEqual([1, 1, 1])
      expect(a.unanswered).toEqual([])
      expect(verifyOk(ev)).toEqual([])
      expect(await store.pendingSends('a')).toEqual([])
      expect((await row(store, 'a')).title).toBe('q0')
    })

    it('two worker pools on one file: every session served, each message logged once (one owner per session)', async () => {
      const store = await newStore()
      const other = await newStore({}, store.file)
      for (let i = 0; i < 12; i++) await store.send(`s${i % 6}`, `q${i}`)
      const w1 = runWorkers({ store, concurrency: 3, leaseMs: 2000, pollMs: 20, agent: () => echoAgent() })
      const w2 = runWorkers({ store: other, concurrency: 3, leaseMs: 2000, pollMs: 20, agent: () => echoAgent() })
      try {
        await until(async () => (await store.sessions()).every((r) => r.status === 'idle' && r.pending === 0), 'all served')
      } finally {
        await Promise.all([w1.stop(), w2.stop()])
      }
      for (let i = 0; i < 6; i++) {
        const ev = await readAll(store, `s${i}`)
        const a = answered(ev)
        expect([...a.count.values()]).toEqual([1, 1])
        expect(a.unanswered).toEqual([])
        expect(verifyOk(ev)).toEqual([])
      }
      expect(w1.stats.claimed + w2.stats.claimed).toBeGreaterThanOrEqual(6)
    })

    it('LEASE_LOST: a writer whose lease ran out and was taken over can never append again (fencing token)', async () => {
      // no heartbeat: the lease runs out on its own
      const store = await newStore({ leaseMs: 100, setInterval: () => 0 })
      await store.create('f')
      const a = await store.open('f', 'write')
      await a.append(SAMPLE.slice(0, 2), { expectedSeq: 0 })
      await until(async () => (await row(store, 'f')).status === 'expired', 'the lease expired')
      const b = await store.open('f', 'write')
      expect(b.token).toBeGreaterThan(a.token)
      await expectCode(a.append(SAMPLE.slice(2, 3), { expectedSeq: 2 }), 'LEASE_LOST')
      await expectCode(a.append(SAMPLE.slice(2, 3), { expectedSeq: 2 }), 'LEASE_LOST') // stopped for good
      await b.append(SAMPLE.slice(2, 4), { expectedSeq: 2 })
      await a.close() // a stale holder's close releases nothing
      expect((await row(store, 'f')).leaseOwner).toBe(store.owner)
      await b.close()
      expect((await readAll(store, 'f')).map((e) => e.seq)).toEqual([0, 1, 2, 3])
    })

    it('R9/R10: a worker parks the session and hands the lease back (listed as parked); store.decide from another connection is logged once; the body runs once', async () => {
      const store = await newStore()
      const other = await newStore({}, store.file)
      const runs: string[] = []
      const w = runWorkers({ store, concurrency: 4, leaseMs: 2000, pollMs: 20, lingerMs: 20, agent: () => approvalAgent(runs) })
      try {
        await store.send('p1', 'delete b')
        await until(async () => (await row(store, 'p1')).status === 'parked', 'parked and handed back')
        expect((await store.sessions('parked')).map((r) => r.id)).toEqual(['p1'])
        expect(await store.sessions('running')).toEqual([])
        expect(runs).toEqual([]) // R9
        const id = openId(await readAll(store, 'p1'))!
        await expectCode(other.decide('p1', 'nope', { kind: 'approve' }), 'UNKNOWN_APPROVAL')
        const r = await Promise.allSettled([other.decide('p1', id, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } }), store.decide('p1', id, { kind: 'deny' })])
        expect(r.map((x) => x.status)).toEqual(['fulfilled', 'rejected'])
        expect(TurnlogError.is((r[1] as PromiseRejectedResult).reason, 'APPROVAL_DECIDED')).toBe(true)
        await until(async () => (await readAll(store, 'p1')).some((e) => e.type === 'turn/end') && (await row(store, 'p1')).status === 'idle', 'the turn ends')
      } finally {
        await w.stop()
      }
      const ev = await readAll(store, 'p1')
      expect(verifyOk(ev)).toEqual([])
      expect(decidedOf(ev).map((e) => [e.data.decision.kind, e.data.by])).toEqual([['approve', { kind: 'user', id: 'ann' }]])
      expect(runs).toEqual(['b'])
      expect(await row(store, 'p1')).toMatchObject({ pending: 0, parked: false })
      expect(await store.decisionsNotLogged('p1')).toEqual(new Map())
    })

    it('an expiry is claimed when it is due (due_at): decided by expired, nothing held meanwhile', async () => {
      const store = await newStore()
      const runs: string[] = []
      const w = runWorkers({ store, concurrency: 4, leaseMs: 2000, pollMs: 20, lingerMs: 20, agent: () => approvalAgent(runs, 600) })
      try {
        await store.send('p3', 'delete b')
        await until(async () => (await readAll(store, 'p3')).some((e) => e.type === 'turn/end'), 'the expiry ends the turn')
      } finally {
        await w.stop()
      }
      const ev = await readAll(store, 'p3')
      expect(verifyOk(ev)).toEqual([])
      expect(decidedOf(ev).map((e) => e.data.by.kind)).toEqual(['expired'])
      expect(runs).toEqual([])
      expect((await row(store, 'p3')).dueAt).toBeNull()
    })

    it('W2: a wakeup due while no process runs the session is claimed by a worker and fires exactly once', async () => {
      const store = await newStore()
      const a = createAgent({ model: scriptedModel(() => ({ text: 'ok' })), store, sessionId: 'w1', wakeups: { timer: false } })
      const due = a.schedule({ at: Date.now() - 1, message: 'Check the build again.', id: 'due' })
      a.schedule({ in: 3_600_000, message: 'much later', id: 'later' })
      await a.flush()
      await a.dispose()
      expect((await store.sessions('due')).map((r) => r.id)).toEqual(['w1'])
      const w = runWorkers({ store, concurrency: 2, leaseMs: 2000, pollMs: 20, lingerMs: 20, agent: () => ({ model: scriptedModel(() => ({ text: 'ok' })) }) })
      try {
        await until(async () => {
          const r = await row(store, 'w1')
          return r.leaseOwner === null && r.dueAt !== null && Date.parse(r.dueAt) > Date.now() &&
            (await readAll(store, 'w1')).some((e) => e.type === 'schedule/fired')
        }, 'the due wakeup fired and the session handed back')
      } finally {
        await w.stop()
      }
      const ev = await readAll(store, 'w1')
      expect(ev.filter((e) => e.type === 'schedule/fired').map((e) => (e.data as { scheduleId: string }).scheduleId)).toEqual([due])
      expect(verifyOk(ev)).toEqual([])
      expect(await store.sessions('due')).toEqual([])
    })
  })
}
