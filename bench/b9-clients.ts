/**
 * B9's clients, in their own process (so the server's memory is the server's): `N` SSE readers of
 * `GET /sessions/:id?offset=now&live=sse` (Durable Streams JSON mode). Prints `ready` when every
 * reader got its first control event, then, when every reader has seen a `turn/end` of turn
 * `TURN`, one JSON line: percentiles of the delivery delays (receipt `Date.now()` minus the
 * event's `time`, ms), this process's event-loop utilization and CPU time.
 *
 * Why raw sockets (round 16): these clients stand in for 1,000 browsers on other machines, but
 * here they share the server's two cores. With `node:http` clients (a stream, a string decoder and
 * an SSE parse per socket per batch) this process used as much CPU as the server, and a delay
 * was stamped only when this process got round to that socket: the bench measured its own
 * clients. Each reader is now a `net` socket reading into one shared buffer (`onread`: no stream,
 * no allocation per read) that parses the HTTP/1.1 response itself (status line, headers, chunked
 * framing, SSE). Every reader gets the same bytes, so a read equal to the last fully parsed one
 * reuses its parse (a `memcmp`); anything else is parsed for that reader. Each reader still checks
 * what it got: every seq once, in order, from its first data event (else it exits 1).
 * Usage: node b9-clients.js URL N TURN
 */
import { connect } from 'node:net'
import { performance } from 'node:perf_hooks'

const [url, nRaw, turnRaw] = process.argv.slice(2)
const target = new URL(url!)
const n = Number(nRaw)
const turn = Number(turnRaw)
const delays: number[] = []
const elu0 = performance.eventLoopUtilization()
let ready = 0
let done = 0

interface Ev { seq: number; time: number; type: string; data: { turn?: number } }
/** What one read held: the data events' events in order, and whether it held a control event. */
interface Parsed { events: Ev[]; control: boolean }

const request = Buffer.from(`GET ${target.pathname}?offset=now&live=sse HTTP/1.1\r\nHost: ${target.host}\r\nAccept: text/event-stream\r\n\r\n`, 'latin1')
/** The last read that was parsed whole by a reader between chunks (its bytes and what they held). */
let lastRaw: Buffer | null = null
let lastParsed: Parsed = { events: [], control: false }
/** Every socket reads into this one buffer; a read is consumed before the next one (onread). */
const shared = Buffer.alloc(64 * 1024)

function fail(message: string): never {
  process.stderr.write(`b9 client: ${message}\n`)
  process.exit(1)
}

class Reader {
  private head = true
  /** Bytes of the response not yet parsed (a header or chunk split across reads), latin1. */
  private raw = ''
  /** SSE text (the chunks' payload) not yet split into events. */
  private sse = ''
  private first = true
  private next = -1
  private finished = false

  /** Parses `bytes` (a copy of a read) for this reader. */
  parse(bytes: string): Parsed {
    const out: Parsed = { events: [], control: false }
    this.raw += bytes
    if (this.head) {
      const end = this.raw.indexOf('\r\n\r\n')
      if (end < 0) return out
      const header = this.raw.slice(0, end)
      if (!header.startsWith('HTTP/1.1 200')) fail(`status ${header.split('\r\n')[0]}`)
      if (!/\r\ntransfer-encoding: chunked/i.test(header)) fail('the response is not chunked')
      this.head = false
      this.raw = this.raw.slice(end + 4)
    }
    for (;;) {
      const nl = this.raw.indexOf('\r\n')
      if (nl < 0) break
      const size = parseInt(this.raw.slice(0, nl), 16)
      if (!Number.isFinite(size)) fail('bad chunk size')
      if (this.raw.length < nl + 2 + size + 2) break
      if (size === 0) fail('the server ended the stream early')
      this.sse += this.raw.slice(nl + 2, nl + 2 + size)
      this.raw = this.raw.slice(nl + 2 + size + 2)
    }
    let i: number
    while ((i = this.sse.indexOf('\n\n')) >= 0) {
      const block = this.sse.slice(0, i)
      this.sse = this.sse.slice(i + 2)
      const event = /^event: (.*)$/m.exec(block)?.[1]
      if (event === 'control') out.control = true
      if (event !== 'data') continue
      const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')
      out.events.push(...(JSON.parse(Buffer.from(data, 'latin1').toString('utf8')) as Ev[]))
    }
    return out
  }

  /** Between chunks: nothing partial is held, so a read equal to another reader's whole read means the same. */
  get between(): boolean { return !this.head && this.raw === '' && this.sse === '' }

  take(p: Parsed, now: number): void {
    if (p.control && this.first) {
      this.first = false
      if (++ready === n) process.stdout.write('ready\n')
    }
    for (const e of p.events) {
      if (this.next >= 0 && e.seq !== this.next) fail(`expected seq ${this.next}, got ${e.seq}`)
      this.next = e.seq + 1
      delays.push(now - e.time)
      if (e.type === 'turn/end' && e.data.turn === turn && !this.finished) {
        this.finished = true
        if (++done === n) report()
      }
    }
  }

  get done(): boolean { return this.finished }
}

function report(): void {
  delays.sort((a, b) => a - b)
  const at = (p: number): number => delays[Math.min(delays.length - 1, Math.floor((delays.length - 1) * p))]!
  const cpu = process.cpuUsage()
  const summary = {
    samples: delays.length, p50: at(0.5), p99: at(0.99), max: delays[delays.length - 1]!,
    clientsElu: Math.round(performance.eventLoopUtilization(elu0).utilization * 100) / 100,
    clientsCpuMs: Math.round((cpu.user + cpu.system) / 1000),
  }
  // exit only once the line is written (a pipe's write is asynchronous)
  process.stdout.write(JSON.stringify(summary) + '\n', () => process.exit(0))
}

function client(): void {
  const reader = new Reader()
  const socket = connect({
    host: target.hostname, port: Number(target.port),
    onread: {
      buffer: shared,
      callback: (nread: number, buf: Uint8Array): boolean => {
        const now = Date.now()
        const b = buf as Buffer
        if (reader.between && lastRaw !== null && nread === lastRaw.length && b.compare(lastRaw, 0, nread, 0, nread) === 0) {
          reader.take(lastParsed, now)
          return true
        }
        const wasBetween = reader.between
        const parsed = reader.parse(b.toString('latin1', 0, nread))
        // a whole read parsed from a clean start: the next reader with the same bytes reuses it
        if (wasBetween && reader.between) {
          lastRaw = Buffer.from(b.subarray(0, nread))
          lastParsed = parsed
        }
        reader.take(parsed, now)
        return true
      },
    },
  })
  socket.on('connect', () => socket.write(request))
  socket.on('end', () => { if (!reader.done) fail('the server closed the connection early') })
  socket.on('error', (err) => fail(err.message))
}

for (let i = 0; i < n; i++) client()
