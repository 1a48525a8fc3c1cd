/**
 * One B8 round (bench/b8-workers.ts): a fresh database, `procs` worker processes (b8-worker.ts)
 * started and READY (boot not timed), then `sessions` messages sent, one per session; the clock
 * runs until every session is handed back (no lease, nothing pending), after an untimed warm-up
 * of one session per slot. Measured alongside: the
 * most PostgreSQL connections open on the database, the workers' CPU time and errors, the load
 * average. Checked from the log of every session: one user message, one turn answered with one
 * final answer (0: lost; more: run twice). With `killAt`, worker 0 is SIGKILLed once that share of
 * the sessions is done, and the time until each session it held is leased by another worker is
 * the takeover time.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { postgresStore } from '../stores/postgres/index.js'
import { benchDb } from './pg-server.js'

const CHILD = fileURLToPath(new URL('./b8-worker.js', import.meta.url))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/** How often the bench checks progress (completion and takeover times are this precise). */
const PROBE_MS = 100

export interface RoundSpec {
  procs: number
  /** Sessions served at once per process (`runWorkers` concurrency). */
  conc: number
  /** Connections of each process's pool (it opens one more to LISTEN). */
  poolMax: number
  sessions: number
  latencyMs: number
  leaseMs: number
  /** SIGKILL worker 0 when this share of the sessions is done. */
  killAt?: number
  /** Give up on the round after this long (the round is reported with what completed). */
  limitMs: number
  /** The workers' fallback polling period (claims, inbox checks); LISTEN wakes them earlier. */
  pollMs: number
  /** The data dir of the server (scripts/pg.sh), to read its CPU time. */
  pgDir?: string
  /** Load the workers' library from this build instead of this one (the "before" of an A/B pair). */
  lib?: string
  /** Write a CPU profile of each worker's measured part here (b8-worker.ts). */
  profileDir?: string
}

export interface RoundResult {
  procs: number
  pollMs: number
  conc: number
  poolMax: number
  sessions: number
  completed: number
  ms: number
  sessionsPerSec: number
  /** Of the sessions handed back (all, unless `timedOut`): without the user's message or a final
   * answer / with either twice. */
  lost: number
  runTwice: number
  /** Sessions whose turn was closed and run again (a lease lost or a worker killed; docs/spec/lifecycle.md §8). */
  resumed: number
  claims: number
  workerErrors: number
  firstError?: string
  /** The most connections open on the round's database (workers, plus 10 of the bench's own pool). */
  maxConnections: number
  /** Worker CPU time (user + system) per completed session. */
  workerCpuMsPerSession: number
  /** PostgreSQL server CPU time per completed session (null: not measured). */
  pgCpuMsPerSession: number | null
  /** Statements the workers sent per completed session, by kind (b8-queries.ts), and in all. */
  queriesPerSession: Record<string, number>
  queriesTotalPerSession: number
  /** Events and `turnlog_append` calls per completed session (the log's length; the appends). */
  eventsPerSession: number
  load1: [number, number]
  /** When the round started (ISO). */
  at: string
  timedOut: boolean
  takeover?: { killedSessions: number; msMax: number; msMedian: number; leaseMs: number }
}

interface Child { c: ChildProcess; out: () => string; id: string }

/** utime, stime, cutime, cstime of /proc/PID/stat in ms (100 ticks/s), and the parent pid. */
function procTimes(pid: number): { self: number; children: number; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const n = (i: number) => Number(f[i]) * 10
    return { ppid: Number(f[1]), self: n(11) + n(12), children: n(13) + n(14) }
  } catch {
    return null
  }
}

/**
 * CPU time (ms) the PostgreSQL server in `pgDir` used so far: the postmaster's own and its reaped
 * children's, plus its live children's (backends, background workers). Null when unknown.
 */
export function pgCpuMs(pgDir: string | undefined): number | null {
  if (!pgDir) return null
  let pm: number
  try {
    pm = Number(readFileSync(`${pgDir}/data/postmaster.pid`, 'utf8').split('\n')[0])
  } catch {
    return null
  }
  const own = procTimes(pm)
  if (!own) return null
  let total = own.self + own.children
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    const t = procTimes(Number(d))
    if (t && t.ppid === pm) total += t.self
  }
  return total
}

function start(spec: RoundSpec, url: string, i: number): Child {
  const id = `b8-w${i}`
  const env = { ...process.env }
  if (spec.lib) env.TURNLOG_B8_LIB = spec.lib
  else delete env.TURNLOG_B8_LIB
  if (spec.profileDir) env.TURNLOG_B8_PROFILE = spec.profileDir
  else delete env.TURNLOG_B8_PROFILE
  const c = spawn(process.execPath, [CHILD, url, String(spec.conc), String(spec.latencyMs), String(spec.poolMax), String(spec.leaseMs), id, String(spec.pollMs)], { stdio: ['ignore', 'pipe', 'inherit'], env })
  let out = ''
  c.stdout!.setEncoding('utf8')
  c.stdout!.on('data', (d: string) => (out += d))
  return { c, out: () => out, id }
}

export async function runRound(spec: RoundSpec): Promise<RoundResult> {
  const db = await benchDb('b8')
  const store = postgresStore({ connectionString: db.url })
  const probe = new pg.Client({ connectionString: db.url })
  const children: Child[] = []
  try {
    await store.migrate()
    await probe.connect()
    const dbName = new URL(db.url).pathname.slice(1)
    for (let i = 0; i < spec.procs; i++) children.push(start(spec, db.url, i))
    const bootLimit = Date.now() + 60_000 + spec.procs * 3_000
    while (!children.every((k) => k.out().includes('READY'))) {
      if (Date.now() > bootLimit) throw new Error(`B8: ${children.filter((k) => !k.out().includes('READY')).length} of ${spec.procs} workers not READY`)
      await sleep(50)
    }
    // warm-up (not timed): one session per slot, so every process has run its code paths once
    // (the first session of a process pays for compiling them) and opened its connections
    const slots = spec.procs * spec.conc
    await Promise.all(Array.from({ length: slots }, (_, i) => store.send(`warm-${i}`, 'warm up')))
    const warmLimit = Date.now() + 60_000 + slots * 1_000
    for (;;) {
      const r = await probe.query(`SELECT count(*)::int AS n FROM turnlog_sessions WHERE id LIKE 'warm-%' AND lease_owner IS NULL AND pending = 0 AND length > 0`)
      if ((r.rows[0] as { n: number }).n >= slots) break
      if (Date.now() > warmLimit) throw new Error('B8: the warm-up did not finish')
      await sleep(50)
    }
    for (const k of children) k.c.kill('SIGUSR2')
    await sleep(100)
    const load0 = loadavg()[0]!
    const at = new Date().toISOString()
    const pg0 = pgCpuMs(spec.pgDir)
    const t0 = performance.now()
    await Promise.all(Array.from({ length: spec.sessions }, (_, i) => store.send(`b8-${i}`, `task ${i}`)))
    let maxConnections = 0
    let completed = 0
    let killed: { at: number; victims: Map<string, number | null> } | null = null
    let timedOut = false
    for (;;) {
      const r = await probe.query(
        `SELECT (SELECT count(*) FROM turnlog_sessions WHERE id LIKE 'b8-%' AND lease_owner IS NULL AND pending = 0 AND length > 0)::int AS done,
                (SELECT count(*) FROM pg_stat_activity WHERE datname = $1)::int AS conns`, [dbName])
      const row = r.rows[0] as { done: number; conns: number }
      completed = row.done
      maxConnections = Math.max(maxConnections, row.conns)
      if (spec.killAt !== undefined && killed === null && completed >= spec.killAt * spec.sessions) {
        const held = await probe.query('SELECT id FROM turnlog_sessions WHERE lease_owner = $1', [children[0]!.id])
        children[0]!.c.kill('SIGKILL')
        killed = { at: performance.now(), victims: new Map((held.rows as Array<{ id: string }>).map((x) => [x.id, null])) }
      }
      if (killed) {
        const open = [...killed.victims].filter(([, t]) => t === null).map(([id]) => id)
        if (open.length) {
          const moved = await probe.query('SELECT id FROM turnlog_sessions WHERE id = ANY($1) AND (lease_owner IS DISTINCT FROM $2)', [open, children[0]!.id])
          const now = performance.now()
          for (const x of moved.rows as Array<{ id: string }>) killed.victims.set(x.id, now - killed.at)
        }
      }
      if (completed >= spec.sessions) break
      if (performance.now() - t0 > spec.limitMs) {
        timedOut = true
        break
      }
      // the probe's own load matters on a small machine: round 13 probed every 25 ms, 80
      // statements/s, more than one worker sends (round 14: every 100 ms, 20/s)
      await sleep(PROBE_MS)
    }
    const ms = performance.now() - t0
    const load1 = loadavg()[0]!
    const pg1 = pgCpuMs(spec.pgDir)
    const stats = await Promise.all(children.map(async (k, i) => {
      if (k.c.exitCode !== null || k.c.signalCode !== null || (spec.killAt !== undefined && i === 0)) return null
      k.c.kill('SIGTERM')
      await new Promise((r) => k.c.once('exit', r))
      const line = /stats (.*)/.exec(k.out())?.[1]
      return line ? (JSON.parse(line) as { claimed: number; errors: number; firstError?: string; cpuMs: number; queries?: Record<string, number> }) : null
    }))
    // only sessions handed back are judged: a round cut by its time limit leaves some unfinished
    const counts = await probe.query(
      `SELECT e.session_id,
              count(*) FILTER (WHERE event->>'type' = 'user/message')::int AS users,
              count(*) FILTER (WHERE event->>'type' = 'turn/start')::int AS turns,
              count(*) FILTER (WHERE event->>'type' = 'assistant/message' AND event->'data'->>'finish' = 'stop')::int AS answers
       FROM turnlog_events e JOIN turnlog_sessions s ON s.id = e.session_id
       WHERE e.session_id LIKE 'b8-%' AND s.lease_owner IS NULL AND s.pending = 0
       GROUP BY e.session_id`)
    let lost = timedOut ? 0 : spec.sessions - counts.rows.length
    let runTwice = 0
    let resumed = 0
    for (const x of counts.rows as Array<{ users: number; turns: number; answers: number }>) {
      if (x.answers === 0 || x.users === 0) lost++
      else if (x.answers > 1 || x.users > 1) runTwice++
      // a turn a dead (or lease-less) worker left is closed and run again: still one answer
      if (x.turns > 1) resumed++
    }
    const live = stats.filter((s) => s !== null)
    const byKind: Record<string, number> = {}
    for (const s of live) for (const [k, v] of Object.entries(s.queries ?? {})) byKind[k] = (byKind[k] ?? 0) + v
    const per = (x: number) => (completed ? x / completed : 0)
    const queriesPerSession = Object.fromEntries(Object.entries(byKind).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round(per(v) * 100) / 100]))
    const len = await probe.query(`SELECT coalesce(sum(length), 0)::int AS n FROM turnlog_sessions WHERE id LIKE 'b8-%'`)
    const takeoverMs = killed ? [...killed.victims.values()].filter((t): t is number => t !== null).sort((a, b) => a - b) : []
    return {
      procs: spec.procs, pollMs: spec.pollMs, conc: spec.conc, poolMax: spec.poolMax, sessions: spec.sessions, completed,
      ms: Math.round(ms), sessionsPerSec: completed / (ms / 1000), lost, runTwice, resumed,
      claims: live.reduce((a, s) => a + s.claimed, 0),
      workerErrors: live.reduce((a, s) => a + s.errors, 0),
      ...(live.find((s) => s.firstError)?.firstError ? { firstError: live.find((s) => s.firstError)!.firstError } : {}),
      maxConnections,
      workerCpuMsPerSession: completed ? live.reduce((a, s) => a + s.cpuMs, 0) / completed : 0,
      pgCpuMsPerSession: pg0 !== null && pg1 !== null && completed ? (pg1 - pg0) / completed : null,
      queriesPerSession,
      queriesTotalPerSession: per(Object.values(byKind).reduce((a, b) => a + b, 0)),
      eventsPerSession: per((len.rows[0] as { n: number }).n),
      load1: [load0, load1], at,
      timedOut,
      ...(killed ? {
        takeover: {
          killedSessions: killed.victims.size,
          msMax: takeoverMs.length === killed.victims.size ? Math.round(takeoverMs.at(-1) ?? 0) : Infinity,
          msMedian: Math.round(takeoverMs[Math.floor(takeoverMs.length / 2)] ?? 0),
          leaseMs: spec.leaseMs,
        },
      } : {}),
    }
  } finally {
    for (const k of children) if (k.c.exitCode === null && k.c.signalCode === null) k.c.kill('SIGKILL')
    await probe.end().catch(() => {})
    await store.close()
    await db.done()
  }
}
