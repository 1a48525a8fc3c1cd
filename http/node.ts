/**
 * `toNodeListener(handler)`: a Fetch handler as a `node:http` request listener. The request body
 * is streamed to the handler; the response body is streamed to the socket with backpressure; when
 * the client goes away the request's `signal` aborts (that ends the client's stream only: a
 * disconnect never cancels a turn). A live SSE follow (`GET /sessions/:id?live=sse`) is written
 * straight to the socket (sse-follow.ts), with the socket's own backpressure (`drain`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { directBody } from './sse-follow.js'

export type FetchHandler = (req: Request) => Promise<Response>

export function toNodeListener(handler: FetchHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const abort = new AbortController()
    res.on('close', () => abort.abort())
    const host = req.headers.host ?? 'localhost'
    const url = new URL(req.url ?? '/', `http://${host}`)
    const headers = new Headers()
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined) continue
      if (Array.isArray(v)) for (const x of v) headers.append(k, x)
      else headers.set(k, v)
    }
    const method = req.method ?? 'GET'
    const hasBody = method !== 'GET' && method !== 'HEAD'
    const request = new Request(url, {
      method,
      headers,
      signal: abort.signal,
      ...(hasBody ? { body: Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
    } as RequestInit)
    void (async () => {
      let response: Response
      try {
        response = await handler(request)
      } catch (err) {
        response = new Response(JSON.stringify({ error: { code: 'INTERNAL', message: (err as Error)?.message ?? String(err) } }), { status: 500, headers: { 'content-type': 'application/json' } })
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
        const h = direct({ write: (b) => res.write(b), end: () => res.end() })
        res.on('drain', () => h.resume())
        res.on('close', () => h.end())
        return
      }
      const reader = response.body.getReader()
      abort.signal.addEventListener('abort', () => { void reader.cancel().catch(() => {}) }, { once: true })
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          if (!res.write(value)) await new Promise<void>((r) => { res.once('drain', r); res.once('close', r) })
          if (abort.signal.aborted) break
        }
      } catch {
        // the body failed or was cancelled: end what was sent
      } finally {
        res.end()
      }
    })()
  }
}
