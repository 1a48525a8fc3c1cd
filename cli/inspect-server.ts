/**
 * `turnlog inspect LOG`: the report page served on 127.0.0.1 (never another interface), following
 * a JSONL log that is still being written. The file is read from a byte offset through the JSONL
 * push decoder (a partial last line waits for its `\n`, every record is checked as `readLog` checks
 * it), and new events go to every page over Server-Sent Events: `GET /events?from=SEQ` sends the
 * events from SEQ on, in batches, then each batch as it is decoded. The file is polled (fs.watch is
 * not reliable on every filesystem); a log is never written to.
 *
 * Requests whose Host is not this loopback address are refused (a web page elsewhere cannot reach
 * the log through DNS rebinding).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { open } from 'node:fs/promises'
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import { JsonlDecoder } from '../events/jsonl.js'
import { renderPage } from './page.js'

export interface InspectorOptions {
  /** The JSONL file to follow. */
  file: string
  /** What the page shows as the file name. Default `file`. */
  label?: string
  /** Default 0: any free port. */
  port?: number
  /** How often the file is checked for new bytes, in ms. Default 200. */
  pollMs?: number
  verifyOptions?: { maxStepsPerTurn?: number; maxRetries?: number }
  /** Called with a decode error of the tail (the server keeps serving what it has). */
  onError?: (err: unknown) => void
}

export interface Inspector {
  url: string
  port: number
  /** Events decoded so far. */
  readonly events: readonly LogEvent[]
  /** Reads new bytes now (tests call it instead of waiting for the poll). */
  poll(): Promise<void>
  close(): Promise<void>
}

const BATCH = 2000

export async function startInspector(opts: InspectorOptions): Promise<Inspector> {
  const events: LogEvent[] = []
  const decoder = new JsonlDecoder({ file: opts.file })
  let offset = 0
  let failed: unknown = null
  const clients = new Set<ServerResponse>()
  const fh = await open(opts.file, 'r')
  const buf = new Uint8Array(1 << 20)
  let reading: Promise<void> | null = null

  const readMore = async (): Promise<void> => {
    if (failed) return
    const before = events.length
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, offset)
      if (bytesRead === 0) break
      offset += bytesRead
      try {
        decoder.push(buf.subarray(0, bytesRead), events)
      } catch (err) {
        failed = err
        opts.onError?.(err)
        break
      }
    }
    if (events.length > before) {
      for (const c of clients) sendFrom(c, before)
    }
  }
  const poll = (): Promise<void> => {
    reading ??= readMore().finally(() => { reading = null })
    return reading
  }
  await poll()
  if (failed) {
    await fh.close()
    throw failed
  }

  function sendFrom(res: ServerResponse, from: number): void {
    for (let i = from; i < events.length; i += BATCH) {
      const batch = events.slice(i, Math.min(events.length, i + BATCH))
      res.write(`id: ${batch[batch.length - 1]!.seq}\ndata: ${JSON.stringify(batch)}\n\n`)
    }
  }

  let port = 0
  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
      res.end(`internal error: ${(err as Error)?.message ?? String(err)}`)
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = req.headers.host ?? ''
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' })
      res.end('forbidden host')
      return
    }
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`)
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' })
      res.end()
      return
    }
    if (url.pathname === '/') {
      await poll()
      const html = await renderPage({
        version: 1, mode: 'live', file: opts.label ?? opts.file, header: decoder.header ?? null,
        events, verifyOptions: opts.verifyOptions,
      }, { encoding: 'json' }) // served over loopback: plain JSON (no gzip round trip per page load)
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      res.end(html)
      return
    }
    if (url.pathname === '/events') {
      const from = Number(url.searchParams.get('from') ?? req.headers['last-event-id'] ?? 0)
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' })
      res.write('retry: 1000\n\n')
      sendFrom(res, Number.isInteger(from) && from >= 0 ? from : 0)
      clients.add(res)
      req.on('close', () => clients.delete(res))
      return
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
    res.end('not found')
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new TurnlogError('INVALID_ARGUMENT',
      `cannot listen on 127.0.0.1:${opts.port ?? 0}: ${err.message}`, { field: '--port' }, { cause: err })))
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve())
  })
  port = (server.address() as AddressInfo).port
  const timer = setInterval(() => void poll(), opts.pollMs ?? 200)
  timer.unref()

  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    events,
    poll,
    async close() {
      clearInterval(timer)
      for (const c of clients) c.end()
      clients.clear()
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
      await reading
      await fh.close()
    },
  }
}
