/**
 * Input rounds on SQLite (docs/spec/lifecycle.md §11; stores/sqlite/side.ts `answerSqlite`): answers are rows
 * of `turnlog_decisions` keyed by request id. A worker parks a session on an open round and holds
 * no lease; `store.answer` from another store handle (another process's view of the file) is
 * validated (refused naming the field, nothing recorded), durable at once, makes the session
 * claimable, and is logged once by the worker that claims it; the body's next round runs once
 * (R10, R11). An app-owned agent receives an answer recorded elsewhere (its parked poll). First
 * answer wins (INPUT_ANSWERED); an expiring round is due (`due_at`) and a late answer is refused.
 * On both drivers. Every log verifies (L21).
 */
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { sqliteStore, runWorkers, type SqliteStore } from '../../workers/sqlite.js'
import { until, verifyOk } from '../stores/postgres/helpers.js'
import { DRIVERS, tempDir } from '../stores/sqlite/helpers.js'
import { roundsTool } from './helpers.js'

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

for (const driver of DRIVERS) {
  describe(`input rounds on SQLite (${driver}; docs/spec/lifecycle.md §11, R10, R11, L21)`, () => {
    const open = (file: string) => {
      const s = sqliteStore(file, { driver })
      stores.push(s)
      return s
    }
    const leaseOwner = (store: SqliteStore, id: string) =>
      (store.db.prepare('SELECT lease_owner FROM turnlog_sessions WHERE id = ?').get(id) as { lease_owner: string | null }).lease_owner

    it('R10 R11 L21: parked on a round with no lease; store.answer from another handle reaches a worker, logged once; each round runs once', async () => {
      const file = join(await tempDir(), 'in.db')
      const store = open(file)
      const other = open(file)
      const tool = roundsTool({ rounds: 2 })
      const w = runWorkers({ store, concurrency: 2, leaseMs: 2000, pollMs: 50, lingerMs: 20, agent: () => ({ model: model(), tools: [tool.tool] }) })
      try {
        await store.send('q1', 'ship it')
        await until(async () => openRound(await readAll(store, 'q1')) !== undefined && leaseOwner(store, 'q1') === null, 'parked on round 1, no lease')
        expect(tool.runs.map((r) => r.round)).toEqual([0])
        const r1 = openRound(await readAll(store, 'q1'))!
        await expect(other.answer('q1', r1.requestId, { action: 'accept', responses: { address: { zip: '1' } } })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'responses.address/city' })
        expect(store.db.prepare('SELECT count(*) AS n FROM turnlog_decisions').get()).toEqual({ n: 0 })
        await other.answer('q1', r1.requestId, { action: 'accept', responses: { address: { city: 'Gent' } } }, { by: { kind: 'user', id: 'bo' } })
        await expect(other.answer('q1', r1.requestId, { action: 'decline' })).rejects.toMatchObject({ code: 'INPUT_ANSWERED' })
        await until(async () => asked(await readAll(store, 'q1')).length === 2 && leaseOwner(store, 'q1') === null, 'round 2 asked, no lease')
        const r2 = openRound(await readAll(store, 'q1'))!
        await other.answer('q1', r2.requestId, { action: 'accept', responses: { speed: 'fast' } })
        await until(async () => (await readAll(store, 'q1')).some((e) => e.type === 'turn/end') && leaseOwner(store, 'q1') === null, 'the turn ends')
        const ev = await readAll(store, 'q1')
        expect(provided(ev).map((e) => [e.data.round, e.data.by])).toEqual([[1, { kind: 'user', id: 'bo' }], [2, { kind: 'user' }]])
        expect(tool.runs.map((r) => r.round)).toEqual([0, 1, 2])
        expect(store.db.prepare('SELECT count(*) AS n FROM turnlog_decisions WHERE logged_seq IS NULL').get()).toEqual({ n: 0 })
        expect(store.db.prepare("SELECT pending FROM turnlog_sessions WHERE id = 'q1'").get()).toEqual({ pending: 0 })
        expect(verifyOk(ev)).toEqual([])
      } finally {
        await w.stop()
      }
    })

    it('R11: an app-owned parked agent receives an answer recorded by another handle and logs it once', async () => {
      const file = join(await tempDir(), 'app.db')
      const store = open(file)
      const tool = roundsTool({ rounds: 1 })
      const a = createAgent({ store, sessionId: 'q2', model: model(), tools: [tool.tool] })
      a.followup('ship it')
      expect(await a.whenSettled()).toBe('parked')
      await a.flush()
      const requestId = a.inputs()[0]!.requestId
      await open(file).answer('q2', requestId, { action: 'decline' }, { by: { kind: 'user', id: 'cy' } })
      await until(() => tool.runs.length === 2, 'the next round ran')
      await a.whenIdle()
      expect(tool.runs[1]!.input).toMatchObject({ action: 'decline', by: { kind: 'user', id: 'cy' } })
      await a.dispose()
      const ev = await readAll(store, 'q2')
      expect(provided(ev)).toHaveLength(1)
      expect(store.db.prepare('SELECT count(*) AS n FROM turnlog_decisions WHERE logged_seq IS NULL').get()).toEqual({ n: 0 })
      expect(verifyOk(ev)).toEqual([])
    })

    it('R9 L21: an expiring round parks with a due time, is claimed when due and answered cancel by expired; a late answer is refused', async () => {
      const store = open(join(await tempDir(), 'exp.db'))
      const tool = roundsTool({ rounds: 1, expiresInMs: 1500 })
      const w = runWorkers({ store, concurrency: 2, leaseMs: 2000, pollMs: 50, lingerMs: 0, agent: () => ({ model: model(), tools: [tool.tool] }) })
      try {
        await store.send('q3', 'ship it')
        await until(async () => openRound(await readAll(store, 'q3')) !== undefined, 'asked')
        const r = openRound(await readAll(store, 'q3'))!
        await until(async () => leaseOwner(store, 'q3') === null || (await readAll(store, 'q3')).some((e) => e.type === 'turn/end'), 'handed back')
        if (!(await readAll(store, 'q3')).some((e) => e.type === 'turn/end')) {
          expect(store.db.prepare("SELECT due_at IS NOT NULL AS due, parked FROM turnlog_sessions WHERE id = 'q3'").get()).toEqual({ due: 1, parked: 1 })
        }
        await until(async () => (await readAll(store, 'q3')).some((e) => e.type === 'turn/end'), 'expired and the turn ends')
        const ev = await readAll(store, 'q3')
        expect(provided(ev).map((e) => e.data.by)).toEqual([{ kind: 'expired' }])
        await expect(store.answer('q3', r.requestId, { action: 'decline' })).rejects.toMatchObject({ code: 'INPUT_ANSWERED' })
        expect(verifyOk(ev)).toEqual([])
      } finally {
        await w.stop()
      }
    })
  })
}
