// A child process for the input-round process tests (docs/spec/lifecycle.md §11, R10, R11): a tool 'ship'
// whose body asks two rounds (a form, then a choice) and then finishes; each body run appends its
// call id and round (0, 1, 2) to COUNT, so runs are counted across processes and kills.
// argv: LIB KIND TARGET SESSION COUNT MODE
//   KIND jsonl (TARGET a directory), pg (a postgres:// URL) or sqlite (a file)
//   ask-exit  (jsonl) followup, park, print PARKED <status> <requestId>, dispose (stays parked), exit 0
//   resume    (jsonl) resumeAgent; print SETTLED <status> <open requestId or ->; dispose; exit 0
//   worker    (pg, sqlite) runWorkers serving the store; print READY; runs until killed
import { appendFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { z } from 'zod'

const [lib, kind, target, sessionId, count, mode] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { scriptedModel } = await load('models/index.js')
const { defineTool } = await load('tools/index.js')

const ship = defineTool({
  name: 'ship', description: 'ship a parcel, asking where and how fast', parameters: z.object({ item: z.string() }),
  execute: ({ item }, ctx) => {
    const round = ctx.input?.round ?? 0
    appendFileSync(count, `${ctx.sessionId ?? sessionId} ${ctx.callId} ${round} ${ctx.input?.action ?? '-'}\n`)
    if (ctx.input !== undefined && ctx.input.action !== 'accept') return `not shipped: ${ctx.input.action}`
    if (round === 0) {
      return ctx.inputRequired({ requests: { address: { kind: 'form', message: 'Where to?', schema: { type: 'object', properties: { city: { type: 'string', minLength: 1 } }, required: ['city'], additionalProperties: false } } } })
    }
    if (round === 1) return ctx.inputRequired({ requests: { speed: { kind: 'choice', message: 'How fast?', options: ['slow', 'fast'] } }, state: { city: ctx.input.responses.address.city } })
    return `shipped ${item} to ${ctx.input.state?.city ?? '?'} (${ctx.input.responses.speed})`
  },
})
const model = () => scriptedModel((request) => {
  const last = request.messages[request.messages.length - 1]
  return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'ship', args: { item: 'book' } }] }
}, { info: { name: 'scripted' } })

if (kind === 'jsonl') {
  const { jsonlStore } = await load('stores/jsonl/index.js')
  const { createAgent } = await load('agent/index.js')
  const { resumeAgent } = await load('replay/index.js')
  const opts = { store: jsonlStore(target), sessionId, model: model(), tools: [ship], system: 'sys' }
  if (mode === 'ask-exit') {
    const agent = createAgent(opts)
    agent.followup('ship the book')
    const s = await agent.whenSettled()
    await agent.flush()
    console.log(`PARKED ${s} ${agent.inputs()[0]?.requestId ?? '-'}`)
    await agent.dispose()
    process.exit(0)
  }
  const agent = await resumeAgent(opts)
  const s = await agent.whenSettled()
  await agent.flush()
  console.log(`SETTLED ${s} ${agent.inputs()[0]?.requestId ?? '-'}`)
  await agent.dispose()
  process.exit(0)
}

const { runWorkers, ...stores } = kind === 'pg' ? await load('workers/index.js') : await load('workers/sqlite.js')
const store = kind === 'pg' ? stores.postgresStore({ connectionString: target }) : stores.sqliteStore(target)
runWorkers({ store, concurrency: 4, leaseMs: 3000, pollMs: 50, lingerMs: 20, agent: () => ({ model: model(), tools: [ship], system: 'sys' }), onError: () => {} })
process.stdout.write('READY\n')
await new Promise(() => {})
