/**
 * One B8 worker process: `runWorkers` (through its public import) on a scripted model that answers
 * each request after `LATENCY_MS` (agents wait on models, not CPU; bench/README.md B8), 4 steps per
 * session (three tool calls, then the answer), until SIGTERM. Its own `pg.Pool` of `POOL_MAX`
 * connections (plus the LISTEN connection), so the connection count per process is a parameter.
 * Prints READY, then on SIGTERM one line `stats {json}`: claims, errors (first message), CPU time
 * and the queries it sent, by kind, since SIGUSR2 (sent when the warm-up is over; since the start
 * without it).
 *
 * - Queries are counted on `pg.Client.prototype.query` (every pool client and the LISTEN client go
 *   through it), keyed by `queryKind` (b8-queries.ts).
 * - `TURNLOG_B8_PROFILE=DIR`: a V8 CPU profile of the measured part (SIGUSR2 → SIGTERM, through
 *   `node:inspector`) is written to DIR/WORKER_ID.cpuprofile (bench/b8-profile.ts summarises it).
 * - `TURNLOG_B8_LIB=DIR`: load the library from DIR (a build of another commit: the "before" of an
 *   A/B round in the same run) instead of this build.
 * argv: URL CONCURRENCY LATENCY_MS POOL_MAX LEASE_MS WORKER_ID POLL_MS
 */
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { z } from 'zod'
import { queryKind } from './b8-queries.js'

const [url, conc, latency, poolMax, leaseMs, workerId, pollMs] = process.argv.slice(2)
const LATENCY = Number(latency ?? 200)
const libDir = process.env.TURNLOG_B8_LIB
const load = async <T>(own: string, rel: string): Promise<T> =>
  (await import(libDir ? pathToFileURL(join(libDir, rel)).href : own)) as T
type WorkersMod = typeof import('../workers/index.js')
const { postgresStore, runWorkers } = await load<WorkersMod>('../workers/index.js', 'workers/index.js')
const { scriptedModel } = await load<typeof import('../models/index.js')>('../models/index.js', 'models/index.js')
const { defineTool } = await load<typeof import('../tools/index.js')>('../tools/index.js', 'tools/index.js')

// every query of this process, by kind (counted from SIGUSR2 on)
let counting = false
const queries: Record<string, number> = {}
const origQuery = pg.Client.prototype.query as (...a: unknown[]) => unknown
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (counting) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text ?? ''
    const k = queryKind(text)
    queries[k] = (queries[k] ?? 0) + 1
  }
  return origQuery.apply(this, args)
} as typeof pg.Client.prototype.query

const echo = defineTool({
  name: 'echo', description: 'echo', parameters: z.object({ n: z.number() }),
  isConcurrencySafe: () => true,
  execute: async ({ n }) => `echo ${n}`,
})
const pool = new pg.Pool({ connectionString: url!, max: Number(poolMax ?? 10) })
pool.on('error', () => {})
const store = postgresStore({ pool, connectionString: url! })
let errors = 0
let firstError: string | undefined
const workers = runWorkers({
  store, concurrency: Number(conc ?? 8), leaseMs: Number(leaseMs ?? 10_000), pollMs: Number(pollMs ?? 100), lingerMs: 0,
  ...(workerId ? { workerId } : {}),
  onError: (err) => {
    errors++
    firstError ??= String((err as Error)?.message ?? err).slice(0, 160)
  },
  agent: () => ({
    model: scriptedModel((request) => {
      const steps = request.messages.filter((m) => m.role === 'assistant').length
      const entry = steps < 3 ? { toolCalls: [{ name: 'echo', args: { n: steps } }] } : { text: 'done' }
      // the latency of one request (time to the first chunk); the chunks then follow at once
      return new Promise((resolve) => setTimeout(() => resolve(entry), LATENCY))
    }, { info: { name: 'scripted' }, recordRequests: false }),
    tools: [echo],
    system: 'B8',
  }),
})

const profileDir = process.env.TURNLOG_B8_PROFILE
let profiler: Session | null = null
const post = (s: Session, method: string) => new Promise<unknown>((res, rej) => s.post(method, (err, r) => (err ? rej(err) : res(r))))

let cpuFrom = 0
let claimedFrom = 0
process.on('SIGUSR2', () => {
  const c = process.cpuUsage()
  cpuFrom = (c.user + c.system) / 1000
  claimedFrom = workers.stats.claimed
  counting = true
  if (profileDir && !profiler) {
    profiler = new Session()
    profiler.connect()
    void post(profiler, 'Profiler.enable').then(() => post(profiler!, 'Profiler.start'))
  }
})
process.on('SIGTERM', () => {
  void workers.stop().then(async () => {
    const cpu = process.cpuUsage()
    const cpuMs = Math.round((cpu.user + cpu.system) / 1000 - cpuFrom)
    counting = false
    if (profiler) {
      const r = (await post(profiler, 'Profiler.stop')) as { profile: unknown }
      writeFileSync(join(profileDir!, `${workerId ?? process.pid}.cpuprofile`), JSON.stringify(r.profile))
    }
    process.stdout.write(`stats ${JSON.stringify({ claimed: workers.stats.claimed - claimedFrom, errors, firstError, cpuMs, queries })}\n`)
    await store.close()
    await pool.end()
    process.exit(0)
  })
})
process.stdout.write('READY\n')
