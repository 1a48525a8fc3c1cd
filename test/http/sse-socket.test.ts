/**
 * A live SSE follow written straight to the socket by `toNodeListener` (http/node.ts, B9 round
 * 16: one `socket.write` of a pre-framed chunk per batch), read by a raw TCP client that parses
 * the HTTP/1.1 bytes itself, so the framing on the wire is what is checked:
 * - H4 the chunks are well framed and the connection stays reusable (keep-alive) after the follow
 *   ends;
 * - H4 a follow pipelined behind another one (its response has no socket yet) is written after
 *   the first response, whole;
 * - H4 a client that reads nothing while more than the socket buffers hold is written gets every
 *   event once, in order, when it reads (the socket's backpressure pauses the follower).
 */
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { sessionHandler, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { memoryStore } from '../../stores/index.js'
import { allow, serve, until, type Served } from './helpers.js'

interface RawResponse { status: number; headers: string; body: string }

/**
 * Parses HTTP/1.1 responses (chunked or with a content-length) from the bytes of one connection;
 * `complete` says whether the last one ended.
 */
function parseResponses(raw: string): { responses: RawResponse[]; complete: boolean } {
  const responses: RawResponse[] = []
  let at = 0
  while (at < raw.length) {
    const end = raw.indexOf('\r\n\r\n', at)
    if (end < 0) return { responses, complete: false }
    const headers = raw.slice(at, end)
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1])
    let body = ''
    let p = end + 4
    const length = /\r\ncontent-length: (\d+)/i.exec(headers)
    if (length) {
      if (raw.length < p + Number(length[1])) return { responses, complete: false }
      body = raw.slice(p, p + Number(length[1]))
      p += Number(length[1])
    } else {
      expect(headers).toMatch(/\r\ntransfer-encoding: chunked/i)
      for (;;) {
        const nl = raw.indexOf('\r\n', p)
        if (nl < 0) return { responses, complete: false }
        const size = Number.parseInt(raw.slice(p, nl), 16)
        expect(raw.slice(p, nl)).toMatch(/^[0-9a-f]+$/)
        if (raw.length < nl + 2 + size + 2) return { responses, complete: false }
        expect(raw.slice(nl + 2 + size, nl + 4 + size)).toBe('\r\n')
        body += raw.slice(nl + 2, nl + 2 + size)
        p = nl + 4 + size
        if (size === 0) break
      }
    }
    responses.push({ status, headers, body })
    at = p
  }
  return { responses, complete: true }
}

interface SseData { seqs: number[]; texts: string[]; lastControl: string | null }

/** The seqs of an SSE body's data events (in order), the text deltas, and the last control's offset. */
function sseData(body: string): SseData {
  const out: SseData = { seqs: [], texts: [], lastControl: null }
  for (const block of body.split('\n\n').filter((b) => b.trim() !== '')) {
    const event = /^event: (.*)$/m.exec(block)?.[1]
    const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')
    if (event === 'control') out.lastControl = (JSON.parse(data) as { streamNextOffset: string }).streamNextOffset
    if (event !== 'data') continue
    for (const e of JSON.parse(data) as Array<{ seq: number; type: string; data: { chunk?: { type: string; text?: string } } }>) {
      out.seqs.push(e.seq)
      if (e.type === 'assistant/chunk' && e.data.chunk?.type === 'text-delta') out.texts.push(e.data.chunk.text!)
    }
  }
  return out
}

/**
 * A raw TCP client: everything the server sent so far, as latin1 (byte for byte), and whether a
 * text has arrived (checked on the new bytes only: a test that polls a 10 MB text stays cheap).
 */
function rawClient(url: string): { socket: Socket; text: () => string; has: (needle: string) => boolean; send: (s: string) => void } {
  const u = new URL(url)
  const socket = connect(Number(u.port), u.hostname)
  const parts: string[] = []
  let recent = '' // the last bytes, for a text split across reads
  const found = new Map<string, boolean>()
  socket.setEncoding('latin1')
  socket.on('data', (d: string) => {
    for (const [needle, yes] of found) {
      if (!yes && (recent + d).includes(needle)) found.set(needle, true)
    }
    parts.push(d)
    recent = (recent + d).slice(-256)
  })
  return {
    socket,
    text: () => parts.join(''),
    has: (needle) => {
      if (!found.has(needle)) found.set(needle, parts.join('').includes(needle))
      return found.get(needle)!
    },
    send: (s) => socket.write(s, 'latin1'),
  }
}

const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`

const chat = (base: string, chatId: string, id: string): Promise<string> => fetch(`${base}/chat`, {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ id: chatId, trigger: 'submit-message', messages: [{ id, role: 'user', parts: [{ type: 'text', text: 'hi' }] }] }),
}).then((r) => r.text())

const consecutive = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i)

describe('a live SSE follow written straight to the socket', () => {
  let handler: SessionHandler | null = null
  let served: Served | null = null
  let client: Socket | null = null
  afterEach(async () => {
    client?.destroy()
    await served?.close()
    await handler?.close()
    client = null
    served = null
    handler = null
  })

  it('H4 its chunks are well framed and the connection stays reusable after the follow ends (keep-alive)', async () => {
    handler = sessionHandler({
      chatIdInBody: true,
      store: memoryStore(), authorize: allow, sseMaxMs: 300,
      agent: () => ({ model: scriptedModel(() => ({ text: 'one two three four five six', chunkSize: 3 })) }),
    })
    served = await serve(handler)
    await chat(served.url, 'k1', 'a')
    const c = rawClient(served.url)
    client = c.socket
    c.send(get('/sessions/k1?offset=-1&live=sse'))
    await chat(served.url, 'k1', 'b') // events written while the client follows
    await until(() => parseResponses(c.text()).complete && parseResponses(c.text()).responses.length === 1) // the follow ended (sseMaxMs)
    // the same connection answers the next request
    c.send(get('/sessions/k1'))
    await until(() => parseResponses(c.text()).complete && parseResponses(c.text()).responses.length === 2)
    const [follow, catchUp] = parseResponses(c.text()).responses
    expect(follow!.status).toBe(200)
    expect(follow!.headers).toMatch(/content-type: text\/event-stream/i)
    expect(catchUp!.status).toBe(200)
    const all = (JSON.parse(catchUp!.body) as Array<{ seq: number }>).map((e) => e.seq)
    const seen = sseData(follow!.body)
    // every event from the start once, in order; the last control names the end of what was sent
    expect(seen.seqs).toEqual(consecutive(0, seen.seqs.length))
    expect(seen.seqs.length).toBeGreaterThan(0)
    expect(all.slice(0, seen.seqs.length)).toEqual(seen.seqs)
    expect(Number(seen.lastControl)).toBe(seen.seqs.length)
  })

  it('H4 a follow pipelined behind another one (no socket yet) is written after the first response, whole', async () => {
    handler = sessionHandler({
      chatIdInBody: true,
      store: memoryStore(), authorize: allow, sseMaxMs: 300,
      agent: () => ({ model: scriptedModel(() => ({ text: 'alpha beta gamma delta', chunkSize: 4 })) }),
    })
    served = await serve(handler)
    await chat(served.url, 'p1', 'a')
    const c = rawClient(served.url)
    client = c.socket
    c.send(get('/sessions/p1?offset=-1&live=sse') + get('/sessions/p1?offset=-1&live=sse')) // one write: pipelined
    await chat(served.url, 'p1', 'b') // written to both while the second still waits for the socket
    await until(() => parseResponses(c.text()).complete && parseResponses(c.text()).responses.length === 2)
    const total = (await (await fetch(`${served.url}/sessions/p1`)).json() as unknown[]).length
    for (const r of parseResponses(c.text()).responses) {
      expect(r.status).toBe(200)
      const seen = sseData(r.body)
      expect(seen.seqs).toEqual(consecutive(0, seen.seqs.length))
      expect(Number(seen.lastControl)).toBe(seen.seqs.length)
    }
    // the second response was started before the first ended, and holds the second turn: it
    // was written (through the response, while it had no socket) and then sent whole
    expect(sseData(parseResponses(c.text()).responses[1]!.body).seqs.length).toBe(total)
  })

  it('H4 a client that reads nothing while more than the socket buffers hold is written gets every event once, in order, when it reads', async () => {
    // 4 MB in 512 KB deltas (and again in the step's message): more than the loopback buffers hold
    const text = 'abcdefgh'.repeat(512 * 1024)
    handler = sessionHandler({
      chatIdInBody: true,
      store: memoryStore(), authorize: allow,
      agent: () => ({ model: scriptedModel([{ text: 'ready' }, { text, chunkSize: 512 * 1024 }]) }),
    })
    served = await serve(handler)
    // per server socket (by its peer's port): the most bytes it held back after a write because
    // the kernel took no more (its client did not read)
    const backlog = new Map<number, number>()
    served.server.on('connection', (s: Socket) => {
      const write = s.write.bind(s) as (...a: unknown[]) => boolean
      ;(s as unknown as { write: (...a: unknown[]) => boolean }).write = (...a: unknown[]) => {
        const more = write(...a)
        backlog.set(s.remotePort!, Math.max(backlog.get(s.remotePort!) ?? 0, s.writableLength))
        return more
      }
    })
    await chat(served.url, 'b1', 'a')
    const c = rawClient(served.url)
    client = c.socket
    c.send(get('/sessions/b1?offset=now&live=sse'))
    await until(() => c.has('event: control'))
    c.socket.pause() // reads nothing from now on
    const turn = chat(served.url, 'b1', 'b')
    await until(() => (backlog.get(c.socket.localPort!) ?? 0) > 0) // the kernel holds what it can: the follower waits for drain
    await turn // the whole turn is in the log
    c.socket.resume()
    await until(() => c.has('"type":"turn/end","data":{"turn":2'))
    // dechunk what arrived so far (the follow is still open)
    const raw = c.text()
    let body = ''
    let p = raw.indexOf('\r\n\r\n') + 4
    for (;;) {
      const nl = raw.indexOf('\r\n', p)
      if (nl < 0) break
      const size = Number.parseInt(raw.slice(p, nl), 16)
      if (raw.length < nl + 4 + size) break
      expect(raw.slice(nl + 2 + size, nl + 4 + size)).toBe('\r\n')
      body += raw.slice(nl + 2, nl + 2 + size)
      p = nl + 4 + size
    }
    const seen = sseData(body)
    expect(seen.seqs).toEqual(consecutive(seen.seqs[0]!, seen.seqs[0]! + seen.seqs.length))
    expect(Buffer.from(seen.texts.join(''), 'latin1').toString('utf8')).toBe(text)
  }, 60_000)
})
