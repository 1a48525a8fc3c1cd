// A writer process for the SQLite fault tests: takes the session's lease (waiting out a dead
// holder's), then appends batches of 1–5 splice events at random moments, several in flight at
// once (group commit); after each append RESOLVES it prints
//   D <length>          every event below <length> is durable
// Also prints "WON <token> <length>" when it holds the lease, "ERR <code>" when an append fails.
// stdin: PAUSE stops starting appends and prints PAUSED once those in flight resolved (the process
// is then between transactions, holding no lock of the file); RESUME starts again.
// argv: LIB FILE DRIVER SESSION SEED LEASE-MS
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { mulberry32 } from '../../../support/prng.mjs'

const [lib, file, driver, sessionId, seedArg, leaseArg] = process.argv.slice(2)
const { sqliteStore } = await import(pathToFileURL(join(lib, 'stores/sqlite/index.js')).href)
const rand = mulberry32(seedArg)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const out = (s) => process.stdout.write(s + '\n')
const store = sqliteStore(file, { driver, leaseMs: Number(leaseArg) })

function splice(seq) {
  return {
    seq, time: 1, type: 'agent/inbox/spliced',
    data: { target: 'next-turn', start: seq, inserted: [{ id: `m-${process.pid}-${seq}`, role: 'user', content: [{ type: 'text', text: `x${seq}` }], source: { kind: 'user' } }] },
  }
}

if (!(await store.has(sessionId))) await store.create(sessionId).catch(() => {})
let w
for (;;) {
  try {
    w = await store.open(sessionId, 'write')
    break
  } catch (err) {
    if (err?.code !== 'SESSION_OWNED') throw err
    await sleep(20)
  }
}
let paused = false
let inFlight = Promise.resolve()
process.stdin.setEncoding('utf8')
process.stdin.on('data', (d) => {
  if (d.includes('PAUSE')) {
    paused = true
    const settled = inFlight
    settled.then(() => out('PAUSED'))
  }
  if (d.includes('RESUME')) paused = false
})
out(`WON ${w.token} ${w.length}`)
for (;;) {
  await sleep(Math.floor(rand() * 6))
  if (paused) continue
  const k = 1 + Math.floor(rand() * 3)
  for (let j = 0; j < k; j++) {
    const n = 1 + Math.floor(rand() * 5)
    const at = w.length
    const events = []
    for (let i = 0; i < n; i++) events.push(splice(at + i))
    const p = w.append(events, { expectedSeq: at }).then((r) => out(`D ${r.length}`), (err) => {
      out(`ERR ${err?.code ?? String(err)}`)
      process.exit(3)
    })
    inFlight = Promise.all([inFlight, p])
  }
}
