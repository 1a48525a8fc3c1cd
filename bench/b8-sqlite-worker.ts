/**
 * One B8-on-SQLite worker process (bench/b8-sqlite.ts): `runWorkers` on `sqliteStore(FILE)` with a
 * scripted model that answers each request after `LATENCY_MS`, 4 steps per session (three tool
 * calls, then the answer). Prints READY; SIGUSR2 (the warm-up ended) starts its counts again; on
 * SIGTERM stops and prints `stats {json}` (claims, errors and CPU since SIGUSR2).
 * argv: FILE CONCURRENCY LATENCY_MS WORKER_ID
 */
import { z } from 'zod'
import { scriptedModel } from '../models/index.js'
import { defineTool } from '../tools/index.js'
import { runWorkers, sqliteStore } from '../workers/sqlite.js'

const [file, conc, latency, workerId] = process.argv.slice(2)
const LATENCY = Number(latency ?? 200)
const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ n: z.number() }), isConcurrencySafe: () => true, execute: ({ n }) => `echo ${n}` })
const store = sqliteStore(file!, { owner: workerId })
let errors = 0
let firstError: string | undefined
const workers = runWorkers({
  store, concurrency: Number(conc ?? 8), leaseMs: 10_000, lingerMs: 0, workerId,
  onError: (err) => {
    errors++
    firstError ??= String((err as Error)?.message ?? err).slice(0, 160)
  },
  agent: () => ({
    model: scriptedModel((request) => {
      const steps = request.messages.filter((m) => m.role === 'assistant').length
      const entry = steps < 3 ? { toolCalls: [{ name: 'echo', args: { n: steps } }] } : { text: 'done' }
      return new Promise((resolve) => setTimeout(() => resolve(entry), LATENCY))
    }, { info: { name: 'scripted' }, recordRequests: false }),
    tools: [echo],
    system: 'B8 sqlite',
  }),
})
// SIGUSR2: the warm-up ended; the stats count from here
let claimed0 = 0
let cpu0 = process.cpuUsage()
process.on('SIGUSR2', () => {
  claimed0 = workers.stats.claimed
  cpu0 = process.cpuUsage()
  errors = 0
})
process.on('SIGTERM', () => {
  void workers.stop().then(async () => {
    const cpu = process.cpuUsage(cpu0)
    process.stdout.write(`stats ${JSON.stringify({ claimed: workers.stats.claimed - claimed0, errors, firstError, cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`)
    await store.close()
    process.exit(0)
  })
})
process.stdout.write('READY\n')
