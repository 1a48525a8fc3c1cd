// A child process for the sub-agent crash tests (docs/spec/lifecycle.md §10): a parent agent on jsonlStore whose
// tool 'research' is a defineSubagent; the test SIGKILLs the process at a known point.
// argv: LIB DIR SESSION MODE
//   child-running  the child's model streams a chunk, waits until the parent's `child/spawned` and
//                  the child's prompt are durable in DIR, prints RUNNING and never ends
//   child-done     the child answers; the parent's tools/post-execute hook (after the child ended,
//                  before the parent's tool/result) prints DONE and never returns
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { z } from 'zod'

const [lib, dir, sessionId, mode] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { jsonlStore } = await load('stores/jsonl/index.js')
const { createAgent, defineSubagent } = await load('agent/index.js')
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
const hanging = {
  info: { name: 'child-model' },
  async *stream() {
    yield { type: 'block-start', index: 0, blockType: 'text' }
    yield { type: 'text-delta', index: 0, text: 'looking' }
    while (!(has(sessionId, '"child/spawned"') && has(childId, '"user/message"'))) await sleep(5)
    console.log('RUNNING')
    await new Promise(() => {})
  },
}
const research = defineSubagent({
  name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
  agent: () => ({ model: mode === 'child-running' ? hanging : scriptedModel([{ text: 'Rayleigh scattering.' }]), system: 'child' }),
})
const parent = createAgent({
  model: scriptedModel([{ toolCalls: [{ name: 'research', args: { question: 'why is the sky blue?' }, id: 'c1' }] }, { text: 'never' }]),
  system: 'parent', tools: [research], store: jsonlStore(dir), sessionId,
  hooks: {
    'tools/post-execute': async (p, next) => {
      if (mode !== 'child-done') return next(p)
      await parent.flush()
      console.log('DONE')
      await new Promise(() => {})
    },
  },
})
parent.followup('ask the researcher')
await new Promise(() => {})
