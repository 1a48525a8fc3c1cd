// A worker process for the postgres and sqlite fault tests: runWorkers on a scripted model with tools, random
// delays (so SIGKILL lands mid-stream, mid-tool, mid-commit, mid-resume). Prints phase markers:
//   READY | claim <sid> | stream <sid> | tool <sid> | error <sid> <code>
// A message whose text starts with "slow" makes its tool take `slowMs`; one that starts with
// "approve" calls `rm`, which needs an approval (docs/spec/lifecycle.md §9) and prints "rm <sid>" when its body
// runs. SIGTERM: stop() and exit 0.
// argv: LIB URL SEED WORKER-ID LEASE-MS [SLOW-MS]; URL is postgres://… or sqlite:FILE
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { z } from 'zod'
import { mulberry32 } from '../../../support/prng.mjs'

const [lib, url, seedArg, workerId, leaseArg, slowArg] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const sqlite = url.startsWith('sqlite:')
const { postgresStore, sqliteStore, runWorkers } = await load(sqlite ? 'workers/sqlite.js' : 'workers/index.js')
const { scriptedModel } = await load('models/index.js')
const { defineTool } = await load('tools/index.js')

const rand = mulberry32(seedArg)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const say = (line) => process.stdout.write(line + '\n')
const slowMs = Number(slowArg ?? 0)

function agentFor(sid) {
  say(`claim ${sid}`)
  const echo = defineTool({
    name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }),
    isConcurrencySafe: () => true,
    execute: async ({ text }) => {
      say(`tool ${sid}`)
      await sleep(text.startsWith('slow') ? slowMs : Math.floor(rand() * 15))
      return text
    },
  })
  const model = scriptedModel((request) => {
    say(`stream ${sid}`)
    const last = request.messages[request.messages.length - 1]
    if (last?.role === 'tool') return { text: `answer to ${last.callId}`, delayMs: Math.floor(rand() * 4), chunkSize: 4 }
    const lastUser = [...request.messages].reverse().find((m) => m.role === 'user')
    const text = lastUser?.content?.[0]?.text ?? ''
    if (text.startsWith('approve')) return { toolCalls: [{ name: 'rm', args: { text } }], delayMs: Math.floor(rand() * 4), chunkSize: 6 }
    if (text.startsWith('slow') || rand() < 0.5) {
      return { toolCalls: [{ name: 'echo', args: { text } }], delayMs: Math.floor(rand() * 4), chunkSize: 6 }
    }
    return { text: `plain answer with a few words`, delayMs: Math.floor(rand() * 4), chunkSize: 5 }
  }, { info: { name: 'scripted' } })
  const rm = defineTool({
    name: 'rm', description: 'needs an approval', parameters: z.object({ text: z.string() }), needsApproval: true,
    execute: async ({ text }) => {
      say(`rm ${sid}`)
      return `removed ${text}`
    },
  })
  return { model, tools: [echo, rm], system: 'fault test' }
}

// standby: loaded and connected, but serving nothing until a line GO on stdin (the kill loop's
// replacements start at once instead of paying the module load after each kill)
if (process.env.TURNLOG_STANDBY) {
  say('STANDBY')
  await new Promise((resolve) => {
    let buf = ''
    process.stdin.setEncoding('utf8')
    process.stdin.on('data', (d) => {
      buf += d
      if (buf.includes('GO')) resolve()
    })
  })
}
const store = sqlite ? sqliteStore(url.slice('sqlite:'.length), { owner: workerId }) : postgresStore({ connectionString: url, owner: workerId })
const workers = runWorkers({
  store, concurrency: 40, leaseMs: Number(leaseArg), pollMs: 100, workerId, agent: (sid) => ({ ...agentFor(sid), maxResumeRuns: 20 }),
  onError: (e, sid) => say(`error ${sid ?? '-'} ${e?.code ?? String(e?.message ?? e).slice(0, 80).replace(/\s+/g, '_')}`),
})
process.on('SIGTERM', async () => {
  await workers.stop()
  await store.close()
  say('STOPPED')
  process.exit(0)
})
if (process.env.TURNLOG_LAG) {
  const { monitorEventLoopDelay } = await import('node:perf_hooks')
  const h = monitorEventLoopDelay({ resolution: 10 })
  h.enable()
  setInterval(() => { say(`lag ${Math.round(h.max / 1e6)} waiting ${store.pool?.waitingCount} total ${store.pool?.totalCount}`); h.reset() }, 1000).unref()
}
say('READY')
