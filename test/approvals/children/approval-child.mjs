// A child process for the approval process tests (docs/spec/lifecycle.md §9, R10): an agent on jsonlStore whose
// tool 'rm' needs approval; its body appends one line per run to COUNT (so runs are counted across
// processes and kills).
// argv: LIB DIR SESSION COUNT MODE
//   park-exit    followup, park, print PARKED <approvalId>, dispose (the session stays parked), exit 0
//   park-hang    followup, park, print PARKED <approvalId>, then wait (the test SIGKILLs it)
//   park-wait    followup, park, print PARKED <approvalId>; stay the owner until the turn ends (a
//                decision from another process reaches it); print IDLE; exit 0
//   resume       resumeAgent from the store; print RESUMED <status>; wait until idle; print IDLE; exit 0
//   resume-hang  resumeAgent; the approved body prints BODY and never returns (the test SIGKILLs it)
import { appendFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { z } from 'zod'

const [lib, dir, sessionId, count, mode] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { jsonlStore } = await load('stores/jsonl/index.js')
const { createAgent } = await load('agent/index.js')
const { resumeAgent } = await load('replay/index.js')
const { scriptedModel } = await load('models/index.js')
const { defineTool } = await load('tools/index.js')

const hang = mode === 'resume-hang'
const rm = defineTool({
  name: 'rm', description: 'delete a file', parameters: z.object({ path: z.string() }),
  needsApproval: true,
  execute: async ({ path }) => {
    appendFileSync(count, `${path}\n`)
    if (hang) {
      console.log('BODY')
      await new Promise(() => {})
    }
    return `deleted ${path}`
  },
})
// the model asks for rm once, then answers whatever follows a tool result
const model = scriptedModel((request) => {
  const last = request.messages[request.messages.length - 1]
  return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'rm', args: { path: 'b' }, id: 'c1' }] }
})
const store = jsonlStore(dir)
const opts = { store, sessionId, model, tools: [rm], system: 'sys' }

if (mode.startsWith('park')) {
  const agent = createAgent(opts)
  agent.followup('delete b')
  const s = await agent.whenSettled()
  await agent.flush()
  console.log(`PARKED ${s} ${agent.approvals()[0]?.approvalId}`)
  if (mode === 'park-exit') {
    await agent.dispose()
    process.exit(0)
  }
  if (mode === 'park-wait') {
    await agent.whenIdle()
    await agent.flush()
    console.log('IDLE')
    await agent.dispose()
    process.exit(0)
  }
  await new Promise(() => {})
} else {
  const agent = await resumeAgent(opts)
  console.log(`RESUMED ${agent.status}`)
  await agent.whenSettled()
  await agent.whenIdle()
  await agent.flush()
  console.log('IDLE')
  await agent.dispose()
  process.exit(0)
}
