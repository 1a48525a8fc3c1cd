// A child process for the openAgent race (test/replay/open-agent.test.ts), run with `node --import tsx`.
// argv: DIR (jsonl store directory) ID (session id). Prints READY, waits for "go" on stdin, then
// calls openAgent: the winner prints "WON <events at open>", sends one followup, flushes, prints
// "FLUSHED", and disposes when it reads "close" ("CLOSED"); a loser prints "LOST <code>".
import { createInterface } from 'node:readline'
import { scriptedModel } from '../../../models/index.js'
import { openAgent } from '../../../replay/open-agent.js'
import { jsonlStore } from '../../../stores/jsonl/index.js'

const [dir, id] = process.argv.slice(2) as [string, string]
const out = (s: string) => process.stdout.write(s + '\n')
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
  out(`LOST ${(err as { code?: string })?.code ?? 'UNCODED ' + String(err)}`)
}
process.exit(0)
