// A worker process for the sub-agent PostgreSQL crash test (docs/spec/lifecycle.md §10): runWorkers serving a
// parent whose 'research' subagent call runs a child whose model streams a chunk, waits until the
// parent's `child/spawned` and the child's prompt are committed, prints RUNNING and never ends
// (the test SIGKILLs the process there).
// argv: LIB URL LEASE-MS
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { z } from 'zod'

const [lib, url, leaseArg] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { postgresStore, runWorkers } = await load('workers/index.js')
const { defineSubagent } = await load('agent/index.js')
const { scriptedModel } = await load('models/index.js')

const leaseMs = Number(leaseArg)
const store = postgresStore({ connectionString: url, leaseMs })
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const has = async (id, type) => {
  try {
    const r = await store.open(id, 'read')
    for await (const e of r.events()) if (e.type === type) return true
    return false
  } catch {
    return false
  }
}
const hanging = {
  info: { name: 'child-model' },
  async *stream() {
    yield { type: 'block-start', index: 0, blockType: 'text' }
    yield { type: 'text-delta', index: 0, text: 'looking' }
    while (!((await has('p', 'child/spawned')) && (await has('p.c1-1-c1', 'user/message')))) await sleep(10)
    console.log('RUNNING')
    await new Promise(() => {})
  },
}
const research = defineSubagent({
  name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
  agent: () => ({ model: hanging, system: 'child' }),
})
runWorkers({
  store, concurrency: 2, leaseMs, pollMs: 50, lingerMs: 0,
  agent: () => ({
    model: scriptedModel([{ toolCalls: [{ name: 'research', args: { question: 'why?' }, id: 'c1' }] }, { text: 'never' }]),
    tools: [research], system: 'parent',
  }),
})
console.log('READY')
