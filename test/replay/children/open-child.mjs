// A child process for the openAgent race (test/replay/open-agent.test.ts), run with plain `node`
// on the compiled library (test/stores/child-lib.ts: dist/ or a tsc build of the sources; a
// `--import tsx` child re-compiled the TypeScript sources at every start).
// argv: LIB (compiled turnlog) DIR (jsonl store directory) ID (session id). Prints READY, waits for
// "go" on stdin, then calls openAgent: the winner prints "WON <events at open>", sends one
// followup, flushes, prints "FLUSHED", and disposes when it reads "close" ("CLOSED"); a loser
// prints "LOST <code>".
import { createInterface } from 'node:readline'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const [lib, dir, id] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { scriptedModel } = await load('models/index.js')
const { openAgent } = await load('replay/index.js')
const { jsonlStore } = await load('stores/jsonl/index.js')

const out = (s) => process.stdout.write(s + '\n')
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
out('READY')
await lines.next()
try {
  const agent = await openAgent({ store: jsonlStore(dir), sessionId: id, model: scriptedModel(() => ({ text: 'ok' })) })
  out(`WON ${agent.events.length}`)
  agent.followup(`from ${process.pid}`)
  await agent.whenIdle()
  await agent.flush()
  out('FLUSHED')
  await lines.next()
  await agent.dispose()
  out('CLOSED')
} catch (err) {
  out(`LOST ${err?.code ?? 'UNCODED ' + String(err)}`)
}
process.exit(0)
