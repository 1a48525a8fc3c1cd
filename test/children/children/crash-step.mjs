// A child process for the re-attach tests of a step that holds more than its running child
// (docs/spec/lifecycle.md §10, issue 25 round 16): a parent agent on jsonlStore whose one step calls the
// subagent 'research' (c1) and one other tool; the child's model streams a chunk, waits until the
// parent's `child/spawned`, the child's prompt and (mode `mixed`) the other call's `tool/call` are
// durable in DIR, prints RUNNING and never ends (the test SIGKILLs the process there).
// argv: LIB DIR SESSION MODE
//   request  the step is [research c1, rm r1 (needsApproval)]: rm's request is open while c1 runs
//   mixed    the step is [research c1, wait w1], both concurrency-safe: w1's body runs (forever)
//            beside the child
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { z } from 'zod'

const [lib, dir, sessionId, mode] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { jsonlStore } = await load('stores/jsonl/index.js')
const { createAgent, defineSubagent } = await load('agent/index.js')
const { defineTool } = await load('tools/index.js')
const { scriptedModel } = await load('models/index.js')

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const has = (id, text) => {
  try {
    return readFileSync(join(dir, `${id}.jsonl`), 'utf8').includes(text)
  } catch {
    return false
  }
}
const childId = `${sessionId}.c1-1-c1`
const ready = () => has(sessionId, '"child/spawned"') && has(childId, '"user/message"') &&
  (mode !== 'mixed' || has(sessionId, '"name":"wait"'))
const hanging = {
  info: { name: 'child-model' },
  async *stream() {
    yield { type: 'block-start', index: 0, blockType: 'text' }
    yield { type: 'text-delta', index: 0, text: 'looking' }
    while (!ready()) await sleep(5)
    console.log('RUNNING')
    await new Promise(() => {})
  },
}
const research = defineSubagent({
  name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
  isConcurrencySafe: () => mode === 'mixed',
  agent: () => ({ model: hanging, system: 'child' }),
})
const rm = defineTool({
  name: 'rm', description: 'removes a file', parameters: z.object({ path: z.string() }), needsApproval: true,
  execute: () => 'removed',
})
const wait = defineTool({
  name: 'wait', description: 'waits', parameters: z.object({ ms: z.number() }), isConcurrencySafe: () => true,
  execute: () => new Promise(() => {}),
})
const other = mode === 'mixed' ? { name: 'wait', args: { ms: 1 }, id: 'w1' } : { name: 'rm', args: { path: 'tmp' }, id: 'r1' }
const parent = createAgent({
  model: scriptedModel([{ toolCalls: [{ name: 'research', args: { question: 'why is the sky blue?' }, id: 'c1' }, other] }, { text: 'never' }]),
  system: 'parent', tools: [research, rm, wait], store: jsonlStore(dir), sessionId,
})
parent.followup('ask the researcher')
await new Promise(() => {})
