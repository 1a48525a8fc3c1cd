/**
 * B9's clients, in their own process (so the server's memory is the server's): `N` SSE readers of
 * `GET /sessions/:id?offset=now&live=sse` (Durable Streams JSON mode). Prints `ready` when every
 * reader got its first control event, then, when every reader has seen a `turn/end` of turn
 * `TURN`, one JSON line: percentiles of the delivery delays (receipt `Date.now()` minus the
 * event's `time`, ms), and the event-loop utilization of this process (near 1: the clients, not
 * the server, are the bottleneck).
 * Usage: node b9-clients.js URL N TURN
 */
import { request } from 'node:http'
import { performance } from 'node:perf_hooks'

const [url, nRaw, turnRaw] = process.argv.slice(2)
const n = Number(nRaw)
const turn = Number(turnRaw)
const delays: number[] = []
let lastText = ''
let lastParsed: Array<{ time: number; type: string; data: { turn?: number } }> = []
const elu0 = performance.eventLoopUtilization()
let ready = 0
let done = 0

function client(): void {
  let buf = ''
  let first = true
  let finished = false
  const req = request(`${url}?offset=now&live=sse`, { agent: false }, (res) => {
    res.setEncoding('utf8')
    res.on('end', () => { if (!finished) { process.stderr.write('client: the server ended the stream early\n'); process.exit(1) } })
    res.on('data', (chunk: string) => {
      const now = Date.now()
      buf += chunk
      let i: number
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i)
        buf = buf.slice(i + 2)
        const event = /^event: (.*)$/m.exec(block)?.[1]
        const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')
        if (event === 'control' && first) { first = false; if (++ready === n) process.stdout.write('ready\n') }
        if (event !== 'data') continue
        // every client gets the same bytes: the load generator parses each distinct text once
        // (1,000 parses per batch would make this process the bottleneck and measure itself)
        if (data !== lastText) { lastText = data; lastParsed = JSON.parse(data) as typeof lastParsed }
        for (const e of lastParsed) {
          delays.push(now - e.time)
          if (e.type === 'turn/end' && e.data.turn === turn && !finished) {
            finished = true
            if (++done === n) {
              delays.sort((a, b) => a - b)
              const at = (p: number): number => delays[Math.min(delays.length - 1, Math.floor((delays.length - 1) * p))]!
              const summary = { samples: delays.length, p50: at(0.5), p99: at(0.99), max: delays[delays.length - 1]!, clientsElu: Math.round(performance.eventLoopUtilization(elu0).utilization * 100) / 100 }
              // exit only once the line is written (a pipe's write is asynchronous)
              process.stdout.write(JSON.stringify(summary) + '\n', () => process.exit(0))
            }
          }
        }
      }
    })
  })
  req.on('error', (err) => { process.stderr.write(`client: ${err.message}\n`); process.exit(1) })
  req.end()
}

for (let i = 0; i < n; i++) client()
