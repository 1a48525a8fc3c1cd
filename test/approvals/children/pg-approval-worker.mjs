// A worker process for the PostgreSQL approval chaos test (docs/spec/lifecycle.md §9, R10): runWorkers on a
// scripted model whose every tool call needs approval; the body appends "<session> <turn> <callId>"
// to COUNT (so body runs are counted across processes and SIGKILLs) after a random short delay. The
// turn is part of the key: the scripted model's ids (call_1, …) start again in every process, so a
// call re-asked in a later turn after a crash has the id of the one the crash cut.
// argv: LIB URL SEED WORKER-ID LEASE-MS COUNT. Prints READY once serving.
import { appendFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { z } from 'zod'

const [lib, url, seedArg, workerId, leaseArg, count] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { postgresStore, runWorkers } = await load('workers/index.js')
const { scriptedModel } = await load('models/index.js')
const { defineTool } = await load('tools/index.js')

let s = Number(seedArg) >>> 0
const rand = () => {
  s = (s + 0x6d2b79f5) >>> 0
  let t = s
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

function agentFor(sid) {
  const rm = defineTool({
    name: 'rm', description: 'delete', parameters: z.object({ path: z.string() }),
    needsApproval: true,
    execute: async ({ path }, ctx) => {
      appendFileSync(count, `${sid} ${ctx.turn} ${ctx.callId}\n`)
      await sleep(Math.floor(rand() * 30))
      return `deleted ${path}`
    },
  })
  const model = scriptedModel((request) => {
    const last = request.messages[request.messages.length - 1]
    if (last?.role === 'tool') return { text: 'done', delayMs: Math.floor(rand() * 4), chunkSize: 4 }
    return { toolCalls: [{ name: 'rm', args: { path: sid } }], delayMs: Math.floor(rand() * 4), chunkSize: 6 }
  }, { info: { name: 'scripted' } })
  return { model, tools: [rm], system: 'approval chaos' }
}

const store = postgresStore({ connectionString: url })
const workers = runWorkers({ store, workerId, concurrency: 16, leaseMs: Number(leaseArg), pollMs: 100, lingerMs: 50, agent: agentFor, onError: () => {} })
process.stdout.write('READY\n')
process.on('SIGTERM', async () => {
  await workers.stop()
  await store.close()
  process.exit(0)
})
