/**
 * B10 (bench/README.md): 10,000 parked sessions in one PostgreSQL, nothing decided. Two figures:
 *
 * - **workers**: a worker process (this one) over `B10_SESSIONS` parked sessions (default 10,000,
 *   copies of one parked by a worker) for `B10_WINDOW_MS` at the default poll (1 s): leases held,
 *   claims, statements per minute, CPU.
 * - **app-owned**: `B10_APP` (default 1,000) parked sessions resumed by the app's own agents in
 *   this process (`resumeAgent`, no worker): the statements that read `turnlog_decisions` per
 *   minute (LISTEN + one fallback poll for all of them; round 15 polled every 500 ms per session),
 *   all statements per minute (the owners' lease heartbeats dominate), then one decision made by
 *   another store reaches its agent (NOTIFY).
 *
 * The value is the workers' statements per minute (target: independent of the sessions).
 */
import { z } from 'zod'
import type { Agent } from '../agent/index.js'
import type { EventOf } from '../events/index.js'
import { scriptedModel } from '../models/index.js'
import { resumeAgent } from '../replay/index.js'
import { defineTool } from '../tools/index.js'
import { postgresStore, runWorkers, type PostgresStore } from '../workers/index.js'
import { envInt, round, type BenchResult } from './common.js'
import { benchDb } from './pg-server.js'

function options() {
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until(cond: () => Promise<boolean> | boolean, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`B10: timed out waiting for ${what}`)
    await sleep(50)
  }
}

/** Counts the statements of a store's pool (all, and those reading turnlog_decisions). */
function counting(store: PostgresStore): { all: number; decisions: number } {
  const c = { all: 0, decisions: 0 }
  const pool = store.pool as unknown as { query: (...args: unknown[]) => unknown }
  const orig = pool.query.bind(pool)
  pool.query = (...args: unknown[]) => {
    c.all++
    const sql = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text
    if (typeof sql === 'string' && sql.includes('FROM turnlog_decisions')) c.decisions++
    return orig(...args)
  }
  return c
}

export async function benchParked(log: (l: string) => void): Promise<Record<string, BenchResult>> {
  const sessions = envInt('B10_SESSIONS', 10_000)
  const apps = Math.min(envInt('B10_APP', 1_000), sessions)
  const windowMs = envInt('B10_WINDOW_MS', 15_000)
  const db = await benchDb('b10')
  const store = postgresStore({ connectionString: db.url })
  try {
    await store.migrate()
    const first = runWorkers({ store, leaseMs: 2000, pollMs: 50, lingerMs: 20, agent: options })
    await store.send('p0', 'delete x')
    await until(async () => (await store.sessions()).some((s) => s.id === 'p0' && s.leaseOwner === null && s.events > 0) &&
      (await store.pool.query(`SELECT 1 FROM turnlog_events WHERE session_id = 'p0' AND event->>'type' = 'step/parked'`)).rows.length > 0, 'p0 parked')
    await first.stop()
    await store.pool.query(
      `INSERT INTO turnlog_sessions (id, header, length, token, pending, due_at)
       SELECT 'p' || g, (header::jsonb || jsonb_build_object('id', 'p' || g))::json, length, 0, 0, due_at
       FROM turnlog_sessions, generate_series(1, $1 - 1) AS g WHERE id = 'p0'`, [sessions])
    await store.pool.query(`INSERT INTO turnlog_events (session_id, seq, event) SELECT 'p' || g, seq, event FROM turnlog_events, generate_series(1, $1 - 1) AS g WHERE session_id = 'p0'`, [sessions])
    await store.pool.query('ANALYZE turnlog_sessions')
    log(`B10: ${sessions} parked sessions`)

    // ---- workers: nothing decided, nothing claimed, statements independent of the sessions
    const wc = counting(store)
    const cpu0 = process.cpuUsage()
    const w = runWorkers({ store, agent: options })
    await sleep(windowMs)
    await w.stop()
    const cpu = process.cpuUsage(cpu0)
    const held = (await store.pool.query('SELECT count(*)::int AS n FROM turnlog_sessions WHERE lease_owner IS NOT NULL')).rows[0] as { n: number }
    const perMin = (n: number) => round(n / (windowMs / 60_000), 1)
    const workers = { statements: wc.all, perMinute: perMin(wc.all), cpuMs: round((cpu.user + cpu.system) / 1000, 0), claimed: w.stats.claimed, leasesHeld: held.n }
    log(`B10 workers: ${JSON.stringify(workers)}`)

    // ---- app-owned parked agents in this process
    const app = postgresStore({ connectionString: db.url })
    const ac = counting(app)
    const agents: Agent[] = []
    const t0 = Date.now()
    for (let i = 1; i <= apps; i++) {
      const a = await resumeAgent({ ...options(), store: app, sessionId: `p${i}` })
      agents.push(a)
    }
    await Promise.all(agents.map((a) => a.whenSettled()))
    const resumeMs = Date.now() - t0
    await until(() => app.decisionListener.listening && app.decisionListener.quiet, 'the LISTEN connection')
    const before = { ...ac }
    const acpu0 = process.cpuUsage()
    await sleep(windowMs)
    const acpu = process.cpuUsage(acpu0)
    const quiet = { all: ac.all - before.all, decisions: ac.decisions - before.decisions }
    // one decision from another store reaches its parked agent (NOTIFY)
    const other = postgresStore({ connectionString: db.url })
    const req = (await other.pool.query(`SELECT event::text AS e FROM turnlog_events WHERE session_id = 'p1' AND event->>'type' = 'tool/approval-requested'`)).rows[0] as { e: string }
    const approvalId = (JSON.parse(req.e) as EventOf<'tool/approval-requested'>).data.approvalId
    const d0 = Date.now()
    await other.decide('p1', approvalId, { kind: 'deny', reason: 'b10' }, { by: { kind: 'user', id: 'bench' } })
    await until(async () => (await other.pool.query(`SELECT 1 FROM turnlog_events WHERE session_id = 'p1' AND event->>'type' = 'turn/end'`)).rows.length > 0, 'the decision to reach p1')
    const decisionMs = Date.now() - d0
    await other.close()
    for (const a of agents) await a.dispose()
    await app.close()
    const appFig = {
      agents: apps, resumeMs, decisionReads: quiet.decisions, decisionReadsPerMinute: perMin(quiet.decisions),
      round15DecisionReadsPerMinute: apps * 120, statementsPerMinute: perMin(quiet.all), cpuMs: round((acpu.user + acpu.system) / 1000, 0),
      notifications: app.decisionListener.stats.notifications, decisionDeliveredMs: decisionMs,
    }
    log(`B10 app-owned: ${JSON.stringify(appFig)}`)
    return {
      B10: {
        value: workers.perMinute, unit: 'statements/min (worker, nothing decided)',
        target: `<= 120 (one claim per 1 s poll, independent of the ${sessions} sessions; no lease held)`,
        detail: { sessions, windowMs, workers, appOwned: appFig },
      },
    }
  } finally {
    await store.close()
    await db.done()
  }
}
