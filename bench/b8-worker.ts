/**
 * One B8 worker process: `runWorkers` (through its public import) on a scripted model that answers
 * each request after `LATENCY_MS` (agents wait on models, not CPU; quality.md B8), 4 steps per
 * session (three tool calls, then the answer), until SIGTERM. Its own `pg.Pool` of `POOL_MAX`
 * connections (plus the LISTEN connection), so the connection count per process is a parameter.
 * Prints READY, then on SIGTERM one line `stats {json}`: claims, errors (first message), CPU time
 * since SIGUSR2 (sent when the warm-up is over; since the start without it).
 * argv: URL CONCURRENCY LATENCY_MS POOL_MAX LEASE_MS WORKER_ID POLL_MS
 */
import pg from 'pg'
import { z } from 'zod'
import { scriptedModel } from '../models/index.js'
import { postgresStore, runWorkers } from '../workers/index.js'
import { defineTool } from '../tools/index.js'

const [url, conc, latency, poolMax, leaseMs, workerId, pollMs] = process.argv.slice(2)
const LATENCY = Number(latency ?? 200)
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
let cpuFrom = 0
let claimedFrom = 0
process.on('SIGUSR2', () => {
  const c = process.cpuUsage()
  cpuFrom = (c.user + c.system) / 1000
  claimedFrom = workers.stats.claimed
})
process.on('SIGTERM', () => {
  void workers.stop().then(async () => {
    const cpu = process.cpuUsage()
    const cpuMs = Math.round((cpu.user + cpu.system) / 1000 - cpuFrom)
    process.stdout.write(`stats ${JSON.stringify({ claimed: workers.stats.claimed - claimedFrom, errors, firstError, cpuMs })}\n`)
    await store.close()
    await pool.end()
    process.exit(0)
  })
})
process.stdout.write('READY\n')
