/**
 * Clock skew and the one due column (issue 21; docs/spec/lifecycle.md §9 expiry): `due_at` is anchored on the
 * database's clock (the delay from the batch's own event time, added to the server's now), so an
 * agent whose clock is hours off still makes its session claimable exactly when its expiry is due
 * by the server: the claim condition (`DUE`, compared with the server's clock) selects exactly the
 * due sessions. The skew left is bounded by the time between the batch's events and its commit.
 * A worker whose own clock is minutes behind decides what it was claimed for (an expiry, a
 * wakeup) once: its agent's clock is floored at the log's time base as the database measured it
 * (workers/session-run.ts `logClock`), so it does not hand the session back still due and claim it
 * again in a loop (the claims are counted).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { EventOf } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { postgresStore, type PostgresStore } from '../../stores/postgres/index.js'
import { DUE } from '../../stores/postgres/decisions.js'
import { runWorkers } from '../../workers/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll, until, verifyOk } from '../stores/postgres/helpers.js'
import { countingTool, manualTimers } from './helpers.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

const HOURS = 3 * 3_600_000

function rmModel() {
  return scriptedModel((request) => {
    const last = request.messages[request.messages.length - 1]
    return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'rm', args: { path: 'b' } }] }
  }, { info: { name: 'scripted' } })
}

async function park(store: PostgresStore, id: string, timeoutMs: number, skewMs: number): Promise<void> {
  const { tool } = countingTool('rm', { needsApproval: true, timeoutMs })
  const model = rmModel()
  // the agent's clock is hours off, and so its timer: the expiry never fires in this process
  const agent = createAgent({ store, sessionId: id, model, tools: [tool], clock: () => Date.now() + skewMs, timers: manualTimers().timers })
  agent.followup('delete b')
  expect(await agent.whenSettled()).toBe('parked')
  await agent.dispose()
}

describe('clock skew: due times compared on the database clock (issue 21, docs/spec/lifecycle.md §9)', () => {
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

  it('R9: a worker whose clock is minutes behind the database decides a due expiry once, without a claim loop', async () => {
    const store = postgresStore({ connectionString: await freshDb('skewloop') })
    stores.push(store)
    await store.migrate()
    // parked by an app whose clock is right; the expiry (1 ms) is due by the database at once
    await park(store, 'behind-worker', 1, 0)
    const { tool, runs } = countingTool('rm', { needsApproval: true, timeoutMs: 1 })
    const behind = 5 * 60_000
    const w = runWorkers({
      store, concurrency: 2, leaseMs: 2000, pollMs: 50, lingerMs: 0,
      agent: () => ({ model: rmModel(), tools: [tool], clock: () => Date.now() - behind }),
    })
    try {
      // before the fix the worker found nothing due by its own clock, handed back, and the session
      // (still due by the database) was claimed again at once: stop watching after 30 claims
      await until(async () => w.stats.claimed >= 30 || (await readAll(store, 'behind-worker')).some((e) => e.type === 'turn/end'),
        'the expiry, or a claim loop')
      const ev = await readAll(store, 'behind-worker')
      expect(verifyOk(ev)).toEqual([])
      const decided = ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided')
      expect(decided.map((e) => e.data.by.kind)).toEqual(['expired'])
      const result = ev.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
      expect((result.data as { error?: { code: string } }).error?.code).toBe('APPROVAL_EXPIRED')
      expect(runs).toEqual([])
      // one claim decided it (a second one only if the first lost its lease on a stalled machine)
      expect(w.stats.claimed).toBeLessThanOrEqual(2)
      const row = await store.pool.query('SELECT due_at, lease_owner FROM turnlog_sessions WHERE id = $1', ['behind-worker'])
      expect(row.rows[0]).toMatchObject({ due_at: null })
    } finally {
      await w.stop()
    }
  }, 60_000)

  it('W2: a worker whose clock is minutes behind fires a wakeup due by the database once, without a claim loop', async () => {
    const store = postgresStore({ connectionString: await freshDb('skewwake') })
    stores.push(store)
    await store.migrate()
    // scheduled by an app whose clock is right, without a timer (this process never fires it)
    const a = createAgent({ model: scriptedModel(() => ({ text: 'ok' })), store, sessionId: 'wake-behind', wakeups: { timer: false } })
    const due = a.schedule({ at: Date.now() - 1, message: 'Check the build again.', id: 'due' })
    a.schedule({ in: 3_600_000, message: 'much later', id: 'later' })
    await a.flush()
    await a.dispose()
    const behind = 5 * 60_000
    const w = runWorkers({
      store, concurrency: 2, leaseMs: 2000, pollMs: 50, lingerMs: 0,
      agent: () => ({ model: scriptedModel(() => ({ text: 'ok' })), clock: () => Date.now() - behind }),
    })
    const fired = async () => (await readAll(store, 'wake-behind')).filter((e): e is EventOf<'schedule/fired'> => e.type === 'schedule/fired')
    try {
      await until(async () => w.stats.claimed >= 30 || (await readAll(store, 'wake-behind')).some((e) => e.type === 'turn/end'),
        'the firing, or a claim loop')
      expect((await fired()).map((e) => e.data.scheduleId)).toEqual([due])
      expect(verifyOk(await readAll(store, 'wake-behind'))).toEqual([])
      expect(w.stats.claimed).toBeLessThanOrEqual(2)
    } finally {
      await w.stop()
    }
  }, 60_000)
})
