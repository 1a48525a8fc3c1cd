// A child process for the interrupted-step decision tests (round 14, closers read accepted
// decisions): one step asks for 'slow' (no approval; its body prints BODY and never returns) and
// 'rm' (needsApproval). The request for rm is logged before slow's body starts, so the step is
// running, not parked, while the person may decide; the test SIGKILLs this process in the body.
// argv: LIB KIND TARGET SESSION LEASE-MS
//   KIND jsonl: TARGET is the store's directory; the child creates the session and followups 'go'.
//   KIND pg:    TARGET is the server URL; the child runs one worker (the test sends 'go').
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { z } from 'zod'

const [lib, kind, target, sessionId, leaseArg] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { jsonlStore } = await load('stores/jsonl/index.js')
const { createAgent } = await load('agent/index.js')
const { postgresStore, runWorkers } = await load('workers/index.js')
const { scriptedModel } = await load('models/index.js')
const { defineTool } = await load('tools/index.js')

function agentOptions() {
  const slow = defineTool({
    name: 'slow', description: 'wait', parameters: z.object({}),
    execute: async () => {
      console.log('BODY')
      await new Promise(() => {})
    },
  })
  const rm = defineTool({
    name: 'rm', description: 'delete a file', parameters: z.object({ path: z.string() }),
    needsApproval: true,
    execute: ({ path }) => `deleted ${path}`,
  })
  const model = scriptedModel((request) => {
    const last = request.messages[request.messages.length - 1]
    return last?.role === 'tool'
      ? { text: 'done' }
      : { toolCalls: [{ name: 'slow', args: {}, id: 'c1' }, { name: 'rm', args: { path: 'b' }, id: 'c2' }] }
  }, { info: { name: 'scripted' } })
  return { model, tools: [slow, rm], system: 'interrupted' }
}

if (kind === 'jsonl') {
  const agent = createAgent({ store: jsonlStore(target), sessionId, ...agentOptions() })
  agent.followup('go')
} else {
  const store = postgresStore({ connectionString: target })
  runWorkers({ store, workerId: 'child', concurrency: 2, leaseMs: Number(leaseArg), pollMs: 50, lingerMs: 50, agent: agentOptions, onError: () => {} })
  console.log('READY')
}
await new Promise(() => {})
