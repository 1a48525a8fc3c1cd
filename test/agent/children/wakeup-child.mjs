// A child process for the wakeup resume test: runs one turn on jsonlStore, schedules a one-shot
// wakeup (in 60 s) and a repeating one (every 10 s), makes them durable, prints SCHEDULED and
// returns without dispose(): the process must exit on its own (the wakeup timer is unref'd).
// argv: LIB (compiled turnlog) DIR (store directory) SESSION
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'

const [lib, dir, sessionId] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { jsonlStore } = await load('stores/jsonl/index.js')
const { createAgent } = await load('agent/index.js')
const { scriptedModel } = await load('models/index.js')

const agent = createAgent({ model: scriptedModel(() => ({ text: 'ok' })), store: jsonlStore(dir), sessionId })
agent.followup('hello')
await agent.whenIdle()
agent.schedule({ in: 60_000, message: 'Check the build again.', id: 'once' })
agent.schedule({ every: 10_000, message: 'tick', id: 'tick', whenBusy: 'queue' })
await agent.flush()
process.stdout.write('SCHEDULED\n')
