/**
 * B8 workers (quality.md "Performance"): sessions completed per second by 1, 2, 4 and 8 worker
 * processes on one PostgreSQL, a scripted model with 200 ms latency per request, 4 steps per
 * session, 400 sessions; ratio to 1 worker measured in the same run (target: 8 workers ≥ 6×).
 * Then, to find where it stops scaling (issue 24 item 6):
 * - takeover: 4 workers × 4 sessions with a 2 s lease, worker 0 SIGKILLed after 30% of 100
 *   sessions: the time until each session it held is leased by another worker (≤ 2 leases);
 * - 16, 32, 64 processes at the same concurrency and sessions;
 * - sessions per worker: 8 processes × 8 sessions (the slots of 64 × 1 in 8 processes);
 * - pooling: 64 processes with a pool of 2; polling: 64 processes polling every 100 ms.
 * Workers poll every 1000 ms otherwise (`runWorkers`' default for a 10 s lease; LISTEN wakes them
 * on every send, and a worker claims again as soon as a session is handed back).
 * Every round reports the most connections open on its database, the workers' and the
 * PostgreSQL server's CPU per session, and the load average (the machine is shared).
 * Knobs: TURNLOG_B8_SESSIONS (400), TURNLOG_B8_PER_SLOT (50: a round runs min(SESSIONS, 50 ×
 * its slots) sessions, so every round measures ~40 s of steady state and the 1-worker round does
 * not take 6 minutes; 0: SESSIONS in every round, as quality.md words it), TURNLOG_B8_LATENCY_MS
 * (200), TURNLOG_B8_CONCURRENCY (1), TURNLOG_B8_SCALE=1 (also 16, 32, 64 and 8x8; without it
 * only the quality.md rounds and the takeover, ~3.5 min on a quiet 2-core machine),
 * TURNLOG_B8_ROUNDS=1,8,… (only these; 64-pool2 and 64-poll100 run only when named),
 * TURNLOG_B8_BUILDS=LABEL=DIR,… (each round also on other builds, as NAME@LABEL), TURNLOG_B8_PROFILE=DIR
 * (CPU profiles of the workers; bench/b8-profile.ts), TURNLOG_B8_ROUND_S (600).
 * Rows of rounds not run this time are kept from the previous bench/results.json (each row says
 * when it was measured and the load average then).
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { envInt, round, type BenchResult } from './common.js'
import { runRound, type RoundResult, type RoundSpec } from './b8-round.js'

const PG_SH = fileURLToPath(new URL('../../scripts/pg.sh', import.meta.url))

/** One round in bench/results.json; `ofIdeal`: against every slot busy on model latency alone. */
function row(r: RoundResult, base: number, latencyMs: number): Record<string, unknown> {
  const ideal = (r.procs * r.conc * 1000) / (4 * latencyMs)
  return {
    procs: r.procs, concurrency: r.conc, poolMax: r.poolMax, pollMs: r.pollMs, slots: r.procs * r.conc, sessions: r.sessions,
    completed: r.completed, ms: r.ms, sessionsPerSec: round(r.sessionsPerSec, 1), ratio: round(r.sessionsPerSec / base, 2),
    ofIdeal: round(r.sessionsPerSec / ideal, 2),
    lost: r.lost, runTwice: r.runTwice, resumed: r.resumed, claims: r.claims, workerErrors: r.workerErrors,
    ...(r.firstError ? { firstError: r.firstError } : {}),
    maxConnections: r.maxConnections, workerCpuMsPerSession: round(r.workerCpuMsPerSession, 1),
    pgCpuMsPerSession: r.pgCpuMsPerSession === null ? null : round(r.pgCpuMsPerSession, 1),
    queriesPerSession: round(r.queriesTotalPerSession, 1), eventsPerSession: round(r.eventsPerSession, 1),
    queriesByKindPerSession: r.queriesPerSession,
    load1: r.load1.map((x) => round(x, 1)), timedOut: r.timedOut,
    ...(r.takeover ? { takeover: r.takeover } : {}),
  }
}

export async function benchWorkers(log: (l: string) => void): Promise<BenchResult> {
  const sessions = envInt('TURNLOG_B8_SESSIONS', 400)
  const latencyMs = envInt('TURNLOG_B8_LATENCY_MS', 200)
  const conc = envInt('TURNLOG_B8_CONCURRENCY', 1)
  const limitMs = envInt('TURNLOG_B8_ROUND_S', 600) * 1000
  const perSlot = envInt('TURNLOG_B8_PER_SLOT', 50)
  // the 16/32/64/8x8 rounds take minutes more (64 processes boot): opt-in, their rows are kept
  const scale = process.env.TURNLOG_B8_SCALE === '1'
  // one server for every round (a fresh database each), unless TURNLOG_PG_URL names one
  let dir: string | undefined
  if (!process.env.TURNLOG_PG_URL) {
    const r = spawnSync('bash', [PG_SH, 'start'], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`scripts/pg.sh start failed: ${r.stderr}`)
    process.env.TURNLOG_PG_URL = r.stdout.trim().split('\n').pop()!
    dir = r.stderr.trim().split('\n').pop()!
  }
  const spec = (procs: number, over: Partial<RoundSpec> = {}): RoundSpec => {
    const c = over.conc ?? conc
    const n = perSlot > 0 ? Math.min(sessions, perSlot * procs * c) : sessions
    return { procs, conc, poolMax: 10, sessions: n, latencyMs, leaseMs: 10_000, pollMs: 1000, limitMs, ...(dir ? { pgDir: dir } : {}), ...over }
  }
  const rounds: Array<[string, RoundSpec]> = [
    ['1', spec(1)], ['2', spec(2)], ['4', spec(4)], ['8', spec(8)],
    ['takeover', spec(4, { conc: 4, sessions: Math.min(100, sessions), leaseMs: 2_000, killAt: 0.3 })],
  ]
  const scaleRounds: Array<[string, RoundSpec]> = [...[16, 32, 64].map((p): [string, RoundSpec] => [String(p), spec(p)]), ['8x8', spec(8, { conc: 8 })]]
  if (scale) rounds.push(...scaleRounds)
  const extra: Array<[string, RoundSpec]> = [...(scale ? [] : scaleRounds), ['64-pool2', spec(64, { poolMax: 2 })], ['64-poll100', spec(64, { pollMs: 100 })]]
  // TURNLOG_B8_ROUNDS=1,8,takeover: only these rounds (names as in results.json)
  const only = process.env.TURNLOG_B8_ROUNDS?.split(',').map((x) => x.trim()).filter(Boolean)
  if (only) rounds.splice(0, rounds.length, ...[...rounds, ...extra].filter(([n]) => only.includes(n)))
  // TURNLOG_B8_BUILDS=LABEL=DIR,… (builds of other commits): each round is also run on each of
  // them, just before this build's, as "NAME@LABEL" (the before/after of each change in one run,
  // under the same load)
  const builds = (process.env.TURNLOG_B8_BUILDS ?? '').split(',').filter((x) => x.includes('=')).map((x) => x.split('=') as [string, string])
  if (builds.length) {
    rounds.splice(0, rounds.length, ...rounds.flatMap(([n, s]): Array<[string, RoundSpec]> =>
      [...builds.map(([label, lib]): [string, RoundSpec] => [`${n}@${label}`, { ...s, lib }]), [n, s]]))
  }
  const profile = process.env.TURNLOG_B8_PROFILE
  if (profile) for (const [n, s] of rounds) s.profileDir = join(profile, n)
  const results: Record<string, RoundResult> = {}
  const failures: Record<string, string> = {}
  try {
    for (const [name, s] of rounds) {
      let r: RoundResult
      if (s.profileDir) mkdirSync(s.profileDir, { recursive: true })
      try {
        r = await runRound(s)
      } catch (err) {
        // a scale-out round that cannot even start (e.g. out of connections) is a finding, not the end
        if (['1', '2', '4', '8', 'takeover'].includes(name.replace(/@.*$/, ''))) throw err
        failures[name] = String((err as Error)?.message ?? err).slice(0, 200)
        log(`  B8 ${name}: failed: ${failures[name]}`)
        continue
      }
      results[name] = r
      log(`  B8 ${name}: ${s.procs} proc × ${s.conc} (pool ${s.poolMax}, poll ${s.pollMs} ms): ${r.completed}/${s.sessions} sessions in ${r.ms} ms = ${r.sessionsPerSec.toFixed(1)}/s, ` +
        `lost ${r.lost}, twice ${r.runTwice}, resumed ${r.resumed}, claims ${r.claims}, errors ${r.workerErrors}${r.firstError ? ` (${r.firstError})` : ''}, ` +
        `conns ${r.maxConnections}, ${r.queriesTotalPerSession.toFixed(1)} queries and ${r.eventsPerSession.toFixed(1)} events/session ${JSON.stringify(r.queriesPerSession)}, cpu ${r.workerCpuMsPerSession.toFixed(1)} (workers) + ${r.pgCpuMsPerSession?.toFixed(1) ?? '?'} (pg) ms/session, load ${r.load1.map((x) => x.toFixed(1)).join('→')}` +
        (r.takeover ? `, takeover of ${r.takeover.killedSessions}: median ${r.takeover.msMedian} ms, max ${r.takeover.msMax} ms (lease ${r.takeover.leaseMs})` : ''))
    }
  } finally {
    if (dir) {
      spawnSync('bash', [PG_SH, 'stop', dir])
      delete process.env.TURNLOG_PG_URL
    }
  }
  // ratios against the 1-worker round of the same build ("N@LABEL" rows against "1@LABEL");
  // rows not run this time are kept from the previous results (with when they were measured)
  const prev = previousB8()
  const table: Record<string, unknown> = { ...prev?.detail?.rounds }
  for (const [name, r] of Object.entries(results)) {
    const one = results[name.includes('@') ? `1@${name.split('@')[1]}` : '1']
    // a run without its own 1-worker round is compared with the last one measured (its `at` says when)
    const prevOne = (prev?.detail?.rounds?.['1'] as { sessionsPerSec?: number } | undefined)?.sessionsPerSec
    table[name] = { ...row(r, one?.sessionsPerSec ?? (name.includes('@') ? NaN : prevOne ?? NaN), latencyMs), at: r.at }
  }
  const ratio = (k: string, one = '1') => (results[k] && results[one] ? round(results[k].sessionsPerSec / results[one].sessionsPerSec, 2) : null)
  const quality = ['1', '2', '4', '8'].filter((k) => results[k]).map((k) => results[k]!)
  const t = results.takeover?.takeover
  // a run without the 1- and 8-worker rounds (TURNLOG_B8_ROUNDS) keeps the previous headline
  const fresh = ratio('8') !== null
  return {
    value: ratio('8') ?? prev?.value ?? 0,
    unit: 'x 1 worker (8 workers)',
    target: '>= 6',
    detail: {
      sessions, stepsPerSession: 4, latencyMsPerRequest: latencyMs, concurrencyPerWorker: conc,
      idealSessionsPerSecPerSlot: round(1000 / (4 * latencyMs), 2),
      noneLostOrRunTwice: Object.values(results).every((r) => r.lost === 0 && r.runTwice === 0 && !r.timedOut),
      ...(t ? { takeoverWithin2Leases: t.msMax <= 2 * t.leaseMs } : {}),
      quality: fresh ? quality.map((r) => `${r.procs}: ${round(r.sessionsPerSec, 1)}/s`).join(', ') : prev?.detail?.quality,
      ...(builds.length ? { builds: Object.fromEntries(builds.map(([label, lib]) => [label, { lib, ratio8: ratio(`8@${label}`, `1@${label}`) }])) } : {}),
      rounds: table,
      ...(Object.keys(failures).length ? { failedRounds: failures } : {}),
    },
  }
}

/** The previous B8 entry of bench/results.json (its rounds are kept for the rounds not run this time). */
function previousB8(): { value?: number; detail?: { rounds?: Record<string, unknown>; quality?: unknown } } | undefined {
  try {
    const prev = JSON.parse(readFileSync(new URL('../../bench/results.json', import.meta.url), 'utf8')) as { B8?: { value?: number; detail?: { rounds?: Record<string, unknown>; quality?: unknown } } }
    return prev.B8
  } catch {
    return undefined
  }
}
