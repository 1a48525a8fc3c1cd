// A child process for the SIGKILL crash test: runs an agent on jsonlStore and sends followups at
// random moments; after each followup is accepted and flush() resolved (durable), prints
//   D <messageId> <n>      n = the session length when flush() was called (all of it is durable)
// argv: LIB (compiled turnlog) DIR (store directory) SESSION SEED
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { z } from 'zod'
import { mulberry32 } from '../../support/prng.mjs'

const [lib, dir, sessionId, seedArg] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { jsonlStore } = await load('stores/jsonl/index.js')
const { createAgent } = await load('agent/index.js')
const { scriptedModel } = await load('models/index.js')
const { defineTool } = await load('tools/index.js')

const rand = mulberry32(seedArg)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const echo = defineTool({
  name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }),
  isConcurrencySafe: () => true,
  execute: async ({ text }) => { await sleep(Math.floor(rand() * 4)); return text },
})
const write = defineTool({
  name: 'write', description: 'exclusive', parameters: z.object({ n: z.number() }),
  execute: async ({ n }) => { await sleep(Math.floor(rand() * 4)); return `wrote ${n}` },
})

let calls = 0
const model = scriptedModel((request) => {
  const last = request.messages[request.messages.length - 1]
  const r = rand()
  if (last?.role !== 'tool' && r < 0.55) {
    const k = 1 + Math.floor(rand() * 3)
    const toolCalls = []
    for (let i = 0; i < k; i++) {
      toolCalls.push(rand() < 0.7 ? { name: 'echo', args: { text: `t${++calls}` } } : { name: 'write', args: { n: ++calls } })
    }
    return { toolCalls, delayMs: Math.floor(rand() * 3), chunkSize: 4 }
  }
  return { text: `answer ${++calls} with some words`, delayMs: Math.floor(rand() * 3), chunkSize: 5 }
}, { info: { name: 'scripted' } })

const agent = createAgent({ model, tools: [echo, write], system: 'crash test', store: jsonlStore(dir), sessionId })
agent.on('agent/error', (e) => process.stderr.write(`agent/error ${e.where}: ${e.error?.code ?? e.error}\n`))
await agent.flush()
process.stdout.write('READY\n')

for (let i = 0; ; i++) {
  await sleep(Math.floor(rand() * 12))
  const id = agent.followup({ id: `f${i}`, content: [{ type: 'text', text: `question ${i}` }] })
  if (rand() < 0.3) agent.steer(`steer ${i}`)
  const n = agent.events.length
  agent.flush().then(() => process.stdout.write(`D ${id} ${n}\n`), (err) => {
    process.stderr.write(`flush failed: ${err?.code}\n`)
    process.exit(3)
  })
}
