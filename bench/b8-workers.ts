/**
 * B8 workers (quality.md "Performance"): sessions completed per second by 1, 2 and 4 worker
 * processes on one PostgreSQL (scripted model, 4 steps per session). Each round: fresh database,
 * N processes started and READY (boot not timed), then `TURNLOG_B8_SESSIONS` (default 40)
 * messages sent, one per session, and the clock runs until every session is handed back with its
 * answer. Reported: sessions/s per N and the ratio to 1 worker; checked: no session lost (each has
 * exactly one user message and one final answer) or run twice (claims = sessions).
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { LogEvent } from '../events/envelope.js'
import { postgresStore } from '../stores/postgres/index.js'
import { envInt, round, type BenchResult } from './common.js'
import { benchDb } from './pg-server.js'

const CHILD = fileURLToPath(new URL('./b8-worker.js', import.meta.url))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function round1(procs: number, sessions: number, log: (l: string) => void): Promise<{ perSec: number; lost: number; claims: number }> {
  const db = await benchDb('b8')
  const store = postgresStore({ connectionString: db.url })
  try {
    await store.migrate()
    const children = Array.from({ length: procs }, () => {
      const c = spawn(process.execPath, [CHILD, db.url, '16'], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      c.stdout.setEncoding('utf8')
      c.stdout.on('data', (d: string) => (out += d))
      return { c, out: () => out }
    })
    while (!children.every((k) => k.out().includes('READY'))) await sleep(20)
    const t0 = performance.now()
    await Promise.all(Array.from({ length: sessions }, (_, i) => store.send(`b8-${i}`, `task ${i}`)))
    for (;;) {
      const rows = await store.sessions()
      if (rows.length === sessions && rows.every((r) => r.status === 'idle' && r.events > 0)) break
      await sleep(10)
    }
    const ms = performance.now() - t0
    let claims = 0
    await Promise.all(children.map(async (k) => {
      k.c.kill('SIGTERM')
      await new Promise((r) => k.c.on('exit', r))
      claims += Number(/claimed (\d+)/.exec(k.out())?.[1] ?? 0)
    }))
    let lost = 0
    for (let i = 0; i < sessions; i++) {
      const r = await store.open(`b8-${i}`, 'read')
      const es: LogEvent[] = []
      for await (const e of r.events()) es.push(e)
      const users = es.filter((e) => e.type === 'user/message').length
      const answers = es.filter((e) => e.type === 'assistant/message' && (e.data as { finish: string }).finish === 'stop').length
      if (users !== 1 || answers !== 1) lost++
    }
    log(`  ${procs} worker process${procs === 1 ? '' : 'es'}: ${sessions} sessions in ${ms.toFixed(0)} ms, claims ${claims}, lost ${lost}`)
    return { perSec: sessions / (ms / 1000), lost, claims }
  } finally {
    await store.close()
    await db.done()
  }
}

export async function benchWorkers(log: (l: string) => void): Promise<BenchResult> {
  const sessions = envInt('TURNLOG_B8_SESSIONS', 40)
  const by: Record<string, { sessionsPerSec: number; lost: number; claims: number }> = {}
  for (const n of [1, 2, 4]) {
    const r = await round1(n, sessions, log)
    by[String(n)] = { sessionsPerSec: round(r.perSec, 1), lost: r.lost, claims: r.claims }
  }
  const okAll = Object.values(by).every((x) => x.lost === 0 && x.claims === sessions)
  return {
    value: round(by['4']!.sessionsPerSec / by['1']!.sessionsPerSec, 2),
    unit: 'x 1 worker (4 workers)',
    target: 'reported',
    detail: { sessions, stepsPerSession: 4, workers: by, noneLostOrRunTwice: okAll },
  }
}
