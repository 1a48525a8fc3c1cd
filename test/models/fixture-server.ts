/**
 * A loopback node:http server that plays the vendored recorded provider streams
 * (test/fixtures/streams/SOURCES.md) as the provider would: SSE over HTTP on 127.0.0.1.
 *
 * The fixture is named by the URL: `http://127.0.0.1:PORT/<dir>/<file>/…`; whatever the client
 * appends (`/chat/completions`, `/messages`) is ignored. vercel/ai's `.chunks.txt` files hold one
 * JSON event per line: an Anthropic file is framed `event: <type>` + `data:`, any other as
 * `data:` lines ending with `data: [DONE]`; openai-python's `.sse` files are served verbatim.
 *
 * Each SSE event is written separately (a real server flushes per event). With `stallAfter: n`
 * the server writes n events and then holds the response open, so a test can cancel mid-stream
 * and observe (`closed`) that the client closed the connection.
 */
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const STREAMS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'streams')

/** The SSE events of a fixture file, each a complete `...\n\n` frame. */
export function sseEvents(file: string): string[] {
  const raw = readFileSync(join(STREAMS_DIR, file), 'utf8')
  if (file.endsWith('.sse')) return raw.split(/(?<=\n\n)/).filter((e) => e.trim() !== '')
  const lines = raw.split('\n').filter((l) => l.trim() !== '')
  if (file.includes('anthropic')) {
    return lines.map((l) => `event: ${(JSON.parse(l) as { type: string }).type}\ndata: ${l}\n\n`)
  }
  return [...lines.map((l) => `data: ${l}\n\n`), 'data: [DONE]\n\n']
}

export interface FixtureServer {
  /** The base URL that serves `file` (pass it as the adapter's baseURL). */
  url(file: string, opts?: { stallAfter?: number; status?: number; headers?: Record<string, string>; body?: string }): string
  /** Requests received (path and parsed JSON body). */
  readonly requests: { path: string; body: unknown; headers: IncomingMessage['headers'] }[]
  /** Responses the client closed before the server ended them. */
  closed(): number
  /** Resolves once the client has closed `n` responses early. */
  waitClosed(n: number): Promise<void>
  close(): Promise<void>
}

interface Route { file: string; stallAfter?: number; status?: number; headers?: Record<string, string>; body?: string }

export async function startFixtureServer(): Promise<FixtureServer> {
  const routes = new Map<string, Route>()
  const requests: FixtureServer['requests'] = []
  let closedEarly = 0
  let waiters: { n: number; resolve: () => void }[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (d: string) => (body += d))
    req.on('end', () => {
      const id = (req.url ?? '').split('/')[1] ?? ''
      let parsed: unknown
      try {
        parsed = body === '' ? undefined : JSON.parse(body)
      } catch {
        parsed = body
      }
      requests.push({ path: req.url ?? '', body: parsed, headers: req.headers })
      const route = routes.get(id)
      if (route === undefined) {
        res.writeHead(404).end('no such fixture')
        return
      }
      res.on('close', () => {
        if (res.writableEnded) return
        closedEarly++
        waiters = waiters.filter((w) => (closedEarly >= w.n ? (w.resolve(), false) : true))
      })
      if (route.status !== undefined) {
        res.writeHead(route.status, { 'content-type': 'application/json', ...route.headers })
        res.end(route.body ?? '')
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      res.flushHeaders()
      const events = sseEvents(route.file)
      const limit = route.stallAfter ?? events.length
      let i = 0
      const next = (): void => {
        if (res.destroyed) return
        if (i >= limit) {
          if (route.stallAfter === undefined) res.end()
          return // stalled: hold the response open until the client goes away
        }
        res.write(events[i++], () => setImmediate(next))
      }
      next()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  let counter = 0
  return {
    url(file, opts = {}) {
      const id = `f${counter++}`
      routes.set(id, { file, ...opts })
      return `http://127.0.0.1:${port}/${id}`
    },
    requests,
    closed: () => closedEarly,
    waitClosed: (n) =>
      closedEarly >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
