/**
 * `toNodeListener(handler)`: a Fetch handler as a `node:http` request listener. The request body
 * is streamed to the handler; the response body is streamed to the socket with backpressure; when
 * the client goes away the request's `signal` aborts (that ends the client's stream only: a
 * disconnect never cancels a turn). A live SSE follow (`GET /sessions/:id?live=sse`) is written
 * straight to the socket (sse-follow.ts), with the socket's own backpressure (`drain`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { directBody, type SseFollowHandle, type SseSink } from './sse-follow.js'

export type FetchHandler = (req: Request) => Promise<Response>

export function toNodeListener(handler: FetchHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    // Nothing a client sends may end the process (issue 38 item 21): a request that cannot be made
    // into a Fetch `Request` (a Host `new URL()` refuses, a method the Fetch API refuses) is a
    // coded 400, and whatever else throws here is answered, never left uncaught.
    let request: Request
    let abort: AbortController
    try {
      abort = new AbortController()
      request = toRequest(req, abort.signal)
    } catch (err) {
      reject(res, err)
      return
    }
    res.on('close', () => abort.abort())
    void respond(handler, request, req, res, abort).catch(() => {
      // the socket failed mid-write: nothing more can be sent on it
      if (!res.destroyed) res.destroy()
    })
  }
}

/** The Fetch `Request` of a node request; throws `BadRequest` for what the Fetch API cannot hold. */
function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const host = req.headers.host ?? 'localhost'
  let url: URL
  try {
    url = new URL(req.url ?? '/', `http://${host}`)
  } catch {
    throw new BadRequest(400, 'BAD_REQUEST', 'the request target or its Host header is not a valid URL')
  }
  // a request target must be a path (origin-form) or this server's own absolute URL
  if (!(req.url ?? '/').startsWith('/') && url.host !== host) throw new BadRequest(400, 'BAD_REQUEST', 'the request target is not a path on this server')
  const headers = new Headers()
  try {
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined) continue
      if (Array.isArray(v)) for (const x of v) headers.append(k, x)
      else headers.set(k, v)
    }
  } catch {
    throw new BadRequest(400, 'BAD_REQUEST', 'a request header cannot be read')
  }
  const method = req.method ?? 'GET'
  const hasBody = method !== 'GET' && method !== 'HEAD'
  try {
    return new Request(url, {
      method,
      headers,
      signal,
      ...(hasBody ? { body: Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
    } as RequestInit)
  } catch {
    throw new BadRequest(405, 'METHOD_NOT_ALLOWED', 'this method is not served', { allow: 'GET, HEAD, POST, OPTIONS' })
  }
}

class BadRequest extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly headers: Record<string, string> = {}) { super(message) }
}

/** Answers a request that never reached the handler (the connection closes after it). */
function reject(res: ServerResponse, err: unknown): void {
  try {
    const e = err instanceof BadRequest ? err : new BadRequest(400, 'BAD_REQUEST', 'the request cannot be read')
    res.shouldKeepAlive = false
    res.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', connection: 'close', ...e.headers })
    res.end(JSON.stringify({ error: { code: e.code, message: e.message } }))
  } catch {
    if (!res.destroyed) res.destroy()
  }
}

async function respond(handler: FetchHandler, request: Request, req: IncomingMessage, res: ServerResponse, abort: AbortController): Promise<void> {
  const method = req.method ?? 'GET'
  let response: Response
  try {
    response = await handler(request)
  } catch {
    // the handler answers its own errors; a throw here is a defect, and its text stays on the server
    response = new Response(JSON.stringify({ error: { code: 'INTERNAL', message: 'internal error' } }), { status: 500, headers: { 'content-type': 'application/json' } })
  }
  const out: Record<string, string | string[]> = {}
  response.headers.forEach((v, k) => { out[k] = v })
  res.writeHead(response.status, out)
  if (!response.body || method === 'HEAD') {
    res.end()
    await response.body?.cancel().catch(() => {})
    return
  }
  res.flushHeaders()
  const direct = directBody(response)
  if (direct) {
    // a live SSE follow: its shared bytes go straight to this socket (no web stream per client)
    followOnSocket(res, direct)
    return
  }
  const reader = response.body.getReader()
  abort.signal.addEventListener('abort', () => { void reader.cancel().catch(() => {}) }, { once: true })
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (!res.write(value)) await drainOrClose(res)
      if (abort.signal.aborted) break
    }
  } catch {
    // the body failed or was cancelled: end what was sent
  } finally {
    res.end()
  }
}

/** Resolves on the response's `drain` or `close`, whichever comes first, leaving no listener behind. */
function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      res.removeListener('drain', done)
      res.removeListener('close', done)
      resolve()
    }
    res.once('drain', done)
    res.once('close', done)
  })
}

const CRLF = Buffer.from('\r\n', 'latin1')

/**
 * Each shared batch (one `Uint8Array` for every follower at the same place) framed once as an
 * HTTP/1.1 chunk: 1,000 followers cost one framing, not 1,000.
 */
const framed = new WeakMap<Uint8Array, Buffer>()

function chunkOf(bytes: Uint8Array): Buffer {
  let f = framed.get(bytes)
  if (f === undefined) {
    f = Buffer.concat([Buffer.from(`${bytes.byteLength.toString(16)}\r\n`, 'latin1'), bytes, CRLF])
    framed.set(bytes, f)
  }
  return f
}

/**
 * Writes a live SSE follow to the response's socket. Once the response owns its socket and has
 * nothing of its own buffered, each batch is one `socket.write` of the pre-framed chunk: the
 * bytes `res.write` would send, without its cork, uncork tick and four-piece writev per follower
 * (B9, round 16: about a quarter less server CPU per fan-out). Otherwise (a pipelined request
 * still queued behind an earlier response has no socket yet; a slow socket with bytes waiting)
 * it writes through `res.write`, which keeps the order. `res.end()` still writes the last chunk,
 * so the connection stays reusable (keep-alive). Without chunked encoding (an HTTP/1.0 client)
 * the bytes go as they are, as `res.write` would send them.
 */
function followOnSocket(res: ServerResponse, start: (sink: SseSink) => SseFollowHandle): void {
  let waiting: { on: NodeJS.EventEmitter } | null = null
  const onDrain = (): void => {
    waiting = null
    h.resume()
  }
  const write = (b: Uint8Array): boolean => {
    const socket = res.socket
    let more: boolean
    if (socket === null || res.writableLength > 0) more = res.write(b)
    else more = socket.write(res.chunkedEncoding ? chunkOf(b) : b)
    if (!more && waiting === null) {
      const on: NodeJS.EventEmitter = socket ?? res
      on.once('drain', onDrain)
      waiting = { on }
    }
    return more
  }
  const h = start({
    write,
    end: () => {
      if (waiting !== null) waiting.on.removeListener('drain', onDrain)
      waiting = null
      res.end()
    },
  })
  res.on('close', () => h.end())
}
