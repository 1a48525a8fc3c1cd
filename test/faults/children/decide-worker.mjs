// The kill loop's worker process (test/faults/pg-kill-loop.test.ts; issue 24 item 8 "with
// decisions"): runWorkers on a scripted model that calls `echo` (no approval) and `rm`
// (`needsApproval`, docs/spec/lifecycle.md §9) with random delays, so a SIGKILL lands mid-stream, mid-tool,
// mid-claim/resume, between a needsApproval answer and its request, and while parked. Every body
// appends "<session> <callId> <tool>" to COUNT when it starts (one O_APPEND write: a kill leaves
// the line whole or absent), so body runs are counted across processes and kills (R10).
// Tool call ids are explicit and unique over every process (`<worker>.<n>`): the scripted model's
// own `call_1, call_2, …` restart in each process, and the count is keyed by call id.
// With TURNLOG_LOOP_ROUNDS=1 the model also calls `ask`, whose body asks 1–2 input rounds (§11).
// Phase markers on stdout: READY | STANDBY | claim <sid> | stream <sid> | approval <sid> |
// tool <sid> | round <sid> (a body continuing an answered round) | error <sid> <code>. SIGTERM: stop() and exit 0.
// argv: LIB URL SEED WORKER-ID LEASE-MS COUNT [BODY-MS]; URL is postgres://… or sqlite:FILE; a body
// takes up to BODY-MS (default 15; the SQLite loop makes it long enough that a kill aimed at a
// body's marker lands while the body runs)
import { appendFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { z } from 'zod'
import { mulberry32 } from '../../support/prng.mjs'

const [lib, url, seedArg, workerId, leaseArg, count, bodyArg] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const sqlite = url.startsWith('sqlite:')
const { postgresStore, sqliteStore, runWorkers } = await load(sqlite ? 'workers/sqlite.js' : 'workers/index.js')
const bodyMs = Number(bodyArg ?? 15)
const rounds = process.env.TURNLOG_LOOP_ROUNDS === '1'
const { scriptedModel } = await load('models/index.js')
const { defineTool } = await load('tools/index.js')

const rand = mulberry32(seedArg)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const say = (line) => process.stdout.write(line + '\n')
let calls = 0
const callId = () => `${workerId}.${++calls}`

function agentFor(sid) {
  say(`claim ${sid}`)
  const body = (name) => async ({ text }, ctx) => {
    appendFileSync(count, `${sid} ${ctx.callId} ${name}\n`)
    say(`tool ${sid}`)
    await sleep(Math.floor(rand() * bodyMs))
    return text
  }
  const echo = defineTool({
    name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }),
    isConcurrencySafe: () => true,
    execute: body('echo'),
  })
  const rm = defineTool({
    name: 'rm', description: 'delete, after a person approves', parameters: z.object({ text: z.string() }),
    // the marker comes before the request is logged: a kill aimed at it lands between the two
    needsApproval: () => (say(`approval ${sid}`), true),
    execute: body('rm'),
  })
  // `ask` (TURNLOG_LOOP_ROUNDS=1, docs/spec/lifecycle.md §11): a body asking 1–2 text rounds; each body
  // start is counted with its round ("<session> <callId> ask <round>"), so R10 is read per round
  const ask = defineTool({
    name: 'ask', description: 'ask a person, in rounds', parameters: z.object({ text: z.string(), rounds: z.number() }),
    execute: async ({ text, rounds }, ctx) => {
      const round = ctx.input?.round ?? 0
      appendFileSync(count, `${sid} ${ctx.callId} ask ${round}\n`)
      say(round > 0 ? `round ${sid}` : `tool ${sid}`)
      await sleep(Math.floor(rand() * bodyMs))
      if (ctx.input !== undefined && ctx.input.action !== 'accept') return `ended: ${ctx.input.action}`
      if (round < rounds) return ctx.inputRequired({ requests: { q: { kind: 'text', message: `${text}: round ${round + 1}?` } } })
      return `asked ${round} rounds: ${JSON.stringify(ctx.input?.responses ?? null)}`
    },
  })
  const model = scriptedModel((request) => {
    say(`stream ${sid}`)
    const last = request.messages[request.messages.length - 1]
    if (last?.role === 'tool') return { text: `answer to ${last.callId}`, delayMs: Math.floor(rand() * 4), chunkSize: 4 }
    const lastUser = [...request.messages].reverse().find((m) => m.role === 'user')
    const text = lastUser?.content?.[0]?.text ?? ''
    const r = rand()
    // about half the questions need a decision: alone, or after a call that needs none (the
    // waiting call is a barrier in model order, §9)
    const toolCalls = r < 0.3 ? [{ id: callId(), name: 'rm', args: { text } }]
      : r < 0.5 ? [{ id: callId(), name: 'echo', args: { text } }, { id: callId(), name: 'rm', args: { text } }]
        : r < 0.7 ? [{ id: callId(), name: 'echo', args: { text } }]
          : rounds && r < 0.9 ? [{ id: callId(), name: 'ask', args: { text, rounds: r < 0.8 ? 1 : 2 } }] : []
    if (toolCalls.length) return { toolCalls, delayMs: Math.floor(rand() * 4), chunkSize: 6 }
    return { text: 'plain answer with a few words', delayMs: Math.floor(rand() * 4), chunkSize: 5 }
  }, { info: { name: 'scripted' } })
  return { model, tools: rounds ? [echo, rm, ask] : [echo, rm], system: 'postgres kill loop with decisions' }
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
say('READY')
