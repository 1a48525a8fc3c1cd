/**
 * One B8 worker process: `runWorkers` on a scripted model, 4 steps per session (three tool calls,
 * one answer each), until SIGTERM. Prints READY, then `claimed N` when stopped.
 * argv: URL CONCURRENCY
 */
import { z } from 'zod'
import { scriptedModel } from '../models/index.js'
import { postgresStore, runWorkers } from '../stores/postgres/index.js'
import { defineTool } from '../tools/index.js'

const [url, conc] = process.argv.slice(2)
const echo = defineTool({
  name: 'echo', description: 'echo', parameters: z.object({ n: z.number() }),
  isConcurrencySafe: () => true,
  execute: async ({ n }) => `echo ${n}`,
})
const store = postgresStore({ connectionString: url! })
const workers = runWorkers({
  store, concurrency: Number(conc ?? 8), leaseMs: 10_000, pollMs: 100, lingerMs: 0,
  agent: () => ({
    model: scriptedModel((request) => {
      const steps = request.messages.filter((m) => m.role === 'assistant').length
      return steps < 3 ? { toolCalls: [{ name: 'echo', args: { n: steps } }] } : { text: 'done' }
    }, { info: { name: 'scripted' } }),
    tools: [echo],
    system: 'B8',
  }),
})
process.on('SIGTERM', () => {
  void workers.stop().then(async () => {
    process.stdout.write(`claimed ${workers.stats.claimed}\n`)
    await store.close()
    process.exit(0)
  })
})
process.stdout.write('READY\n')
