/**
 * An app's own parked agent on PostgreSQL (not a worker) hears of a decision another process
 * records by LISTEN/NOTIFY (stores/postgres/listen.ts): `turnlog_decide`'s NOTIFY on
 * `turnlog_input`, the one that wakes workers. The fallback poll is slow and only finds a lost
 * notification; a lost connection is reopened and catches up. Query counts, not times, show that
 * nothing polls per session.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createAgent, type Agent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { postgresStore, type PostgresStore } from '../../stores/postgres/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll, until, verifyOk } from '../stores/postgres/helpers.js'
import { countingTool } from './helpers.js'

const stores: PostgresStore[] = []
let url = ''
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

async function newStore(decisionPollMs?: number): Promise<PostgresStore> {
  if (url === '') {
    url = await freshDb('aplisten')
    const s = postgresStore({ connectionString: url })
    await s.migrate()
    await s.close()
  }
  const store = postgresStore({ connectionString: url, ...(decisionPollMs !== undefined ? { decisionPollMs } : {}) })
  stores.push(store)
  return store
}

/** Counts the statements on the store's pool that read `turnlog_decisions`. */
function countDecisionReads(store: PostgresStore): { reads: number } {
  const counter = { reads: 0 }
  const pool = store.pool as unknown as { query: (...args: unknown[]) => unknown }
  const orig = pool.query.bind(pool)
  pool.query = (...args: unknown[]) => {
    const sql = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text
    if (typeof sql === 'string' && /FROM turnlog_decisions/.test(sql)) counter.reads++
    return orig(...args)
  }
  return counter
}

async function parked(store: PostgresStore, id: string): Promise<{ agent: Agent; runs: string[]; approvalId: string }> {
  const { tool, runs } = countingTool('rm', { needsApproval: true })
  const model = scriptedModel((request) => {
    const last = request.messages[request.messages.length - 1]
    return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'rm', args: { path: 'b' } }] }
  }, { info: { name: 'scripted' } })
  const agent = createAgent({ store, sessionId: id, model, tools: [tool] })
  agent.followup('delete b')
  expect(await agent.whenSettled()).toBe('parked')
  await agent.flush()
  const req = (await readAll(store, id)).find((e) => e.type === 'tool/approval-requested') as EventOf<'tool/approval-requested'>
  return { agent, runs, approvalId: req.data.approvalId }
}

const decidedBy = (ev: LogEvent[]) => ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided').map((e) => e.data.by)

async function finished(store: PostgresStore, id: string, agent: Agent): Promise<LogEvent[]> {
  await until(async () => (await readAll(store, id)).some((e) => e.type === 'turn/end'), 'the decision reaches the parked agent', 30_000)
  expect(await agent.whenSettled()).toBe('idle')
  await agent.dispose()
  const ev = await readAll(store, id)
  expect(verifyOk(ev)).toEqual([])
  return ev
}

describe('a parked app-owned PostgreSQL agent listens for decisions (docs/spec/lifecycle.md §9, R9)', () => {
  it('R9: a decision from another process arrives by NOTIFY with the fallback poll set to an hour: one read for it, the body runs once, the connection ends with the parking', async () => {
    const store = await newStore(3_600_000)
    const counter = countDecisionReads(store)
    const { agent, runs, approvalId } = await parked(store, 'l-notify')
    // the parked session is subscribed (its first read), then LISTEN and its catch-up read: let
    // them land before counting
    await until(() => store.decisionListener.listening && store.decisionListener.quiet, 'the LISTEN connection', 30_000)
    const before = counter.reads
    const other = await newStore()
    await other.decide('l-notify', approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } })
    const ev = await finished(store, 'l-notify', agent)
    expect(decidedBy(ev)).toEqual([{ kind: 'user', id: 'ann' }])
    expect(runs).toEqual(['b'])
    expect(store.decisionListener.stats.notifications).toBeGreaterThanOrEqual(1)
    // the notification's read, nothing else: no per-session poll ran while it was parked
    expect(counter.reads - before).toBe(1)
    // unparked and disposed: no subscription, no connection (the process may exit)
    expect(store.decisionListener.listening).toBe(false)
  }, 90_000)

  it('R9: a lost notification (a row recorded without NOTIFY): the fallback poll finds the decision', async () => {
    const store = await newStore(200)
    const { agent, runs, approvalId } = await parked(store, 'l-lost')
    await until(() => store.decisionListener.listening, 'the LISTEN connection', 30_000)
    // what turnlog_decide does, without its pg_notify: the notification is lost
    const other = await newStore()
    await other.pool.query(
      `WITH d AS (INSERT INTO turnlog_decisions (session_id, approval_id, record) VALUES ($1, $2, $3) RETURNING 1)
       UPDATE turnlog_sessions SET pending = pending + 1 WHERE id = $1`,
      ['l-lost', approvalId, JSON.stringify({ decision: { kind: 'deny', reason: 'no' }, by: { kind: 'user', id: 'bo' }, time: Date.now() })],
    )
    const ev = await finished(store, 'l-lost', agent)
    expect(decidedBy(ev)).toEqual([{ kind: 'user', id: 'bo' }])
    expect(runs).toEqual([])
    expect(store.decisionListener.stats.notifications).toBe(0)
  }, 90_000)

  it('R9: the LISTEN connection is terminated while parked: it is reopened and a decision made meanwhile arrives', async () => {
    const store = await newStore(3_600_000)
    const { agent, runs, approvalId } = await parked(store, 'l-reconnect')
    await until(() => store.decisionListener.listening, 'the LISTEN connection', 30_000)
    const other = await newStore()
    const killed = await other.pool.query(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`)
    expect(killed.rows.length).toBeGreaterThanOrEqual(1)
    await other.decide('l-reconnect', approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'cy' } })
    const ev = await finished(store, 'l-reconnect', agent)
    expect(decidedBy(ev)).toEqual([{ kind: 'user', id: 'cy' }])
    expect(runs).toEqual(['b'])
  }, 90_000)
})
