/**
 * B8 workers (bench/README.md): sessions completed per second by 1, 2, 4 and 8 worker
 * processes on one PostgreSQL, a scripted model with 200 ms latency per request, 4 steps per
 * session, 400 sessions; ratio to 1 worker measured in the same run (target: 8 workers ≥ 7.5×).
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
 * Knobs: bench/b8-plan.ts (TURNLOG_B8_PER_SLOT=0 for bench/README.md's 400 sessions in every round;
 * the default trims the 1-, 2- and 4-worker rounds to 50 sessions per slot). Each round's line
 * prints its ratio to the 1-worker round of the same run and build; so does a closing line.
 * Full size, as bench/README.md words it (~12 min quiet, the 1-worker round alone ~5.5 min):
 *   npm run build && TURNLOG_B8_PER_SLOT=0 node dist/bench/run.js B8
 * Rows of rounds not run this time are kept from the previous bench/results.json (each row says
 * when it was measured and the load average then).
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { round, type BenchResult } from './common.js'
import { b8Plan } from './b8-plan.js'
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
  const plan = b8Plan(process.env)
  const { sessions, latencyMs, conc, builds } = plan
  // one server for every round (a fresh database each), unless TURNLOG_PG_URL names one
  let dir: string | undefined
  if (!process.env.TURNLOG_PG_URL) {
    const r = spawnSync('bash', [PG_SH, 'start'], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`scripts/pg.sh start failed: ${r.stderr}`)
    process.env.TURNLOG_PG_URL = r.stdout.trim().split('\n').pop()!
    dir = r.stderr.trim().split('\n').pop()!
  }
  const rounds = plan.rounds.map(([n, s]): [string, RoundSpec] => [n, dir ? { ...s, pgDir: dir } : s])
  log(`  B8 plan: ${rounds.map(([n, s]) => `${n} (${s.procs}×${s.conc}, ${s.sessions} sessions)`).join(', ')}` +
    (plan.perSlot > 0 ? ` — trimmed to ${plan.perSlot} sessions per slot (TURNLOG_B8_PER_SLOT=0 for bench/README.md's ${sessions} in every round)` : ''))
  const results: Record<string, RoundResult> = {}
  const failures: Record<string, string> = {}
  // a round's ratio to the 1-worker round of the same run and build ("N@LABEL" against "1@LABEL")
  const baseOf = (name: string) => results[name.includes('@') ? `1@${name.split('@')[1]}` : '1']
  const ratioText = (name: string, r: RoundResult) => {
    const one = baseOf(name)
    return one && one !== r ? `, ${(r.sessionsPerSec / one.sessionsPerSec).toFixed(2)}× the 1-worker round of this run (${one.sessions} sessions)` : ''
  }
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
        (r.takeover ? `, takeover of ${r.takeover.killedSessions}: median ${r.takeover.msMedian} ms, max ${r.takeover.msMax} ms (lease ${r.takeover.leaseMs})` : '') +
        ratioText(name, r))
    }
    const quality = ['1', '2', '4', '8'].filter((k) => results[k])
    if (quality.length) log(`  B8 ${quality.map((k) => `${k}: ${results[k]!.sessionsPerSec.toFixed(2)}/s (${results[k]!.sessions})`).join(', ')}` +
      (results['1'] && results['8'] ? `; 8 workers = ${(results['8'].sessionsPerSec / results['1'].sessionsPerSec).toFixed(2)}× 1 worker, same run (target >= 6)` : ''))
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
    const one = baseOf(name)
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
    target: '>= 7.5',
    detail: {
      sessions, perSlot: plan.perSlot,
      sessionsPerRound: Object.fromEntries(Object.entries(results).map(([n, r]) => [n, r.sessions])),
      stepsPerSession: 4, latencyMsPerRequest: latencyMs, concurrencyPerWorker: conc,
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
