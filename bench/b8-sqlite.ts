/**
 * B8 on SQLite (bench/README.md B8 "and on one SQLite file"): sessions completed per second by 1, 2, 4
 * and 8 worker processes on ONE SQLite file (bench/b8-sqlite-worker.ts), a scripted model with
 * 200 ms latency per request (`TURNLOG_B8_LATENCY_MS`), 4 steps per session, `TURNLOG_B8S_PER_SLOT`
 * (default 5) sessions per worker slot, 8 slots per process. Once every worker is READY, a warm-up
 * (not timed, as B8 on PostgreSQL: bench/b8-round.ts) runs one session per slot, so each process
 * has compiled its code paths before the clock starts (eight cold processes on two cores would
 * otherwise charge the 8-worker round for eight compilations); then the sessions are sent, and the
 * round ends when every session is answered and handed back. Nothing may be
 * lost or run twice (each session's log has its one message, answered once, and verifies). The
 * ratio of each round to the 1-worker round of the same run is the value (target: 8 workers ≥ 7.5×).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LogEvent } from '../events/envelope.js'
import { verify } from '../replay/verify.js'
import { sqliteStore } from '../stores/sqlite/index.js'
import { envInt, round, type BenchResult } from './common.js'

const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js'
const WORKER = fileURLToPath(new URL(`./b8-sqlite-worker${ext}`, import.meta.url))

interface Round { procs: number; sessions: number; ms: number; sessionsPerSec: number; lost: number; runTwice: number; errors: number; claims: number; workerCpuMs: number; load1: number[] }

/** Polls until `n` sessions whose id starts with `prefix` are answered and handed back. */
async function settled(store: ReturnType<typeof sqliteStore>, prefix: string, n: number): Promise<void> {
  for (;;) {
    const rows = (await store.sessions()).filter((r) => r.id.startsWith(prefix))
    if (rows.length === n && rows.every((r) => r.status === 'idle' && r.pending === 0 && r.events > 0)) return
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function round1(procs: number, conc: number, perSlot: number, latency: number, log: (l: string) => void): Promise<Round> {
  const dir = await mkdtemp(join(process.env.TURNLOG_BENCH_DIR || tmpdir(), 'turnlog-b8s-'))
  const file = join(dir, 'b8.db')
  const store = sqliteStore(file)
  await store.migrate()
  const kids = Array.from({ length: procs }, (_, i) => {
    const c = spawn(process.execPath, [...process.execArgv, WORKER, file, String(conc), String(latency), `w${i}`], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    const ready = new Promise<void>((res) => c.stdout.on('data', (d) => {
      out += String(d)
      if (out.includes('READY')) res()
    }))
    return { c, ready, out: () => out }
  })
  try {
    await Promise.all(kids.map((k) => k.ready))
    const slots = procs * conc
    await Promise.all(Array.from({ length: slots }, (_, i) => store.send(`warm-${i}`, 'warm up')))
    await settled(store, 'warm-', slots)
    for (const k of kids) k.c.kill('SIGUSR2')
    await new Promise((r) => setTimeout(r, 100))
    const sessions = slots * perSlot
    const load0 = loadavg()[0]!
    const t0 = performance.now()
    // sent at once, as B8 on PostgreSQL sends (bench/b8-round.ts): on SQLite one transaction (the
    // store groups the sends of one tick), where one by one they were 320 transactions and fsyncs
    await Promise.all(Array.from({ length: sessions }, (_, i) => store.send(`b8-${i}`, `session ${i}`)))
    await settled(store, 'b8-', sessions)
    const ms = performance.now() - t0
    let lost = 0
    let runTwice = 0
    for (let i = 0; i < sessions; i++) {
      const r = await store.open(`b8-${i}`, 'read')
      const ev: LogEvent[] = []
      for await (const e of r.events()) ev.push(e)
      const users = ev.filter((e) => e.type === 'user/message').length
      const answers = ev.filter((e) => e.type === 'assistant/message' && (e.data as { finish?: string }).finish === 'stop').length
      if (users === 0 || answers === 0 || !verify(ev).ok) lost++
      if (users > 1 || answers > 1) runTwice++
    }
    const stats = await Promise.all(kids.map(async (k) => {
      k.c.kill('SIGTERM')
      await new Promise((r) => k.c.on('exit', r))
      const line = k.out().split('\n').find((l) => l.startsWith('stats '))
      return line ? JSON.parse(line.slice(6)) as { claimed: number; errors: number; cpuMs: number } : { claimed: 0, errors: 1, cpuMs: 0 }
    }))
    const r: Round = {
      procs, sessions, ms: Math.round(ms), sessionsPerSec: sessions / (ms / 1000), lost, runTwice,
      errors: stats.reduce((n, s) => n + s.errors, 0), claims: stats.reduce((n, s) => n + s.claimed, 0),
      workerCpuMs: stats.reduce((n, s) => n + s.cpuMs, 0), load1: [load0, loadavg()[0]!],
    }
    log(`  B8 sqlite ${procs} worker${procs > 1 ? 's' : ''}: ${sessions} sessions in ${(ms / 1000).toFixed(1)} s = ${r.sessionsPerSec.toFixed(1)}/s (lost ${lost}, twice ${runTwice}, errors ${r.errors}, worker CPU ${(r.workerCpuMs / 1000).toFixed(1)} s, load ${r.load1.map((x) => x.toFixed(1)).join('→')})`)
    return r
  } finally {
    for (const k of kids) if (k.c.exitCode === null) k.c.kill('SIGKILL')
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
}

export async function benchSqliteWorkers(log: (l: string) => void = () => {}): Promise<BenchResult> {
  const latency = envInt('TURNLOG_B8_LATENCY_MS', 200)
  const perSlot = envInt('TURNLOG_B8S_PER_SLOT', 5)
  const conc = 8
  const rounds: Round[] = []
  for (const procs of [1, 2, 4, 8]) rounds.push(await round1(procs, conc, perSlot, latency, log))
  const base = rounds[0]!.sessionsPerSec
  return {
    value: round(rounds[rounds.length - 1]!.sessionsPerSec / base, 2),
    unit: 'x one worker (8 processes)',
    target: '>= 7.5',
    detail: {
      latencyMs: latency, concurrency: conc, sessionsPerSlot: perSlot, stepsPerSession: 4,
      rounds: rounds.map((r) => ({ ...r, sessionsPerSec: round(r.sessionsPerSec, 1), ratio: round(r.sessionsPerSec / base, 2), load1: r.load1.map((x) => round(x, 1)) })),
      ideal: 'every slot busy on model latency alone: procs × 8 × 1000 / (4 × latency) sessions/s',
      node: process.version,
    },
  }
}
