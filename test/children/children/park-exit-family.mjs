// A child process for the flush test (docs/spec/lifecycle.md §10): a parent on jsonlStore whose subagent's
// child asks for approval. The process parks, awaits the parent's flush() and exits at once
// (process.exit(0)): whatever is durable then is all a later process can see.
// argv: LIB DIR SESSION
// prints: PARKED <status> <approvalId>
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { z } from 'zod'

const [lib, dir, sessionId] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { jsonlStore } = await load('stores/jsonl/index.js')
const { createAgent, defineSubagent } = await load('agent/index.js')
const { scriptedModel } = await load('models/index.js')
const { defineTool } = await load('tools/index.js')

const rm = defineTool({
  name: 'rm', description: 'removes a file', parameters: z.object({ path: z.string() }), needsApproval: true,
  execute: () => 'ok',
})
const cleaner = defineSubagent({
  name: 'cleaner', description: 'cleans up', parameters: z.object({ task: z.string() }),
  agent: () => ({ model: scriptedModel([{ toolCalls: [{ name: 'rm', args: { path: 'tmp' }, id: 'k1' }] }, { text: 'cleaned' }]), tools: [rm], system: 'child' }),
})
const parent = createAgent({
  model: scriptedModel([{ toolCalls: [{ name: 'cleaner', args: { task: 'clean tmp' }, id: 'c1' }] }, { text: 'done' }]),
  tools: [cleaner], store: jsonlStore(dir), sessionId, system: 'parent',
})
parent.followup('clean up')
const s = await parent.whenSettled()
const id = parent.approvals()[0]?.approvalId
await parent.flush()
console.log(`PARKED ${s} ${id}`)
process.exit(0)
