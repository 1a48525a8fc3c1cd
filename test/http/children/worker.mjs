// A worker process for the turnlog/http tests with workers: runWorkers on a scripted model whose
// chunks the test releases through stdin ("RELEASE n" | "RELEASE all"), so "mid-answer" is an exact
// place without sleeps. Prints: READY | claim <sid> | held <sid> <request> <chunk> | error <sid> <code>.
// A waiting chunk gives up when the turn's signal aborts (a stop). SIGTERM: stop() and exit 0.
// argv: LIB URL WORKER-ID LEASE-MS MODE (hold: chunks wait for RELEASE; free: they flow)
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'

const [lib, url, workerId, leaseArg, mode] = process.argv.slice(2)
const load = (p) => import(pathToFileURL(join(lib, p)).href)
const { postgresStore, runWorkers } = await load('workers/index.js')
const { scriptedModel } = await load('models/index.js')

const say = (line) => process.stdout.write(line + '\n')
export const ANSWER = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ') + '.'

let open = mode === 'free' ? Infinity : 0
const waiting = []
process.stdin.setEncoding('utf8')
let buf = ''
process.stdin.on('data', (d) => {
  buf += d
  let i
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i).trim()
    buf = buf.slice(i + 1)
    const m = /^RELEASE (\d+|all)$/.exec(line)
    if (!m) continue
    const n = m[1] === 'all' ? Infinity : Number(m[1])
    if (n === Infinity) open = Infinity
    else open += n
    while (open > 0 && waiting.length > 0) {
      if (open !== Infinity) open--
      waiting.shift().resolve()
    }
  }
})

function agentFor(sid) {
  say(`claim ${sid}`)
  let request = 0
  let chunk = 0
  const sleep = (_ms, signal) => new Promise((resolve, reject) => {
    const at = chunk++
    if (signal.aborted) return reject(signal.reason ?? new Error('aborted'))
    if (open > 0) {
      if (open !== Infinity) open--
      return resolve()
    }
    const w = { resolve: () => { signal.removeEventListener('abort', onAbort); resolve() } }
    const onAbort = () => {
      const i = waiting.indexOf(w)
      if (i >= 0) waiting.splice(i, 1)
      reject(signal.reason ?? new Error('aborted'))
    }
    signal.addEventListener('abort', onAbort, { once: true })
    waiting.push(w)
    say(`held ${sid} ${request} ${at}`)
  })
  const model = scriptedModel(() => { request++; chunk = 0; return { text: ANSWER, chunkSize: 8, delayMs: 1 } }, { sleep, info: { name: 'scripted' } })
  return { model }
}

const store = postgresStore({ connectionString: url, owner: workerId })
const workers = runWorkers({
  store, concurrency: 8, leaseMs: Number(leaseArg), pollMs: 100, workerId, agent: (sid) => agentFor(sid),
  onError: (e, sid) => say(`error ${sid ?? '-'} ${e?.code ?? String(e?.message ?? e).slice(0, 80).replace(/\s+/g, '_')}`),
})
process.on('SIGTERM', async () => {
  await workers.stop()
  await store.close()
  say('STOPPED')
  process.exit(0)
})
say('READY')
