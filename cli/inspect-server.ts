/**
 * `turnlog inspect LOG`: the report page served on 127.0.0.1 (never another interface), following
 * a log that is still being written, from a `TailSource`: a JSONL file (`jsonlTail`: read from a
 * byte offset through the JSONL push decoder — a partial last line waits for its `\n`, every record
 * is checked as `readLog` checks it) or a PostgreSQL session (cli/inspect-pg.ts: by seq offset).
 * New events go to every page over Server-Sent Events: `GET /events?from=SEQ` sends the events from
 * SEQ on, in batches, then each batch as it is read. The source is polled (fs.watch is not reliable
 * on every filesystem; the store's NOTIFY is for sent input, not appends); a log is never written to.
 *
 * Requests whose Host is not this loopback address are refused (a web page elsewhere cannot reach
 * the log through DNS rebinding).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { LogEvent } from '../events/envelope.js'
import type { TailSource as HttpTailSource } from '../http/tail.js'
import { TurnlogError } from '../events/errors.js'
import { JsonlDecoder } from '../events/jsonl.js'
import { openLogFile } from '../replay/read-log.js'
import { SessionTail } from '../http/tail.js'
import { renderPage } from './page.js'

/** Where the events come from: turnlog/http's `TailSource` (read after `events.length`, in seq
 * order; a coded error on a defect; `transient` errors are retried at the next poll, every other
 * one stops the tail), plus the log's header once known (the page shows its id). */
export interface TailSource extends HttpTailSource {
  header(): unknown
}

/**
 * Where a page's SSE stream starts: after the `Last-Event-ID` its EventSource sends on a reconnect
 * (the seq of the last event it got), else `?from=` (what the page had at load), else 0. The
 * header wins: the page's URL keeps the `from` of its first load, and a reconnect that honoured it
 * resent everything since then.
 */
export function resumeFrom(from: string | null, lastEventId: string | string[] | undefined): number {
  const last = typeof lastEventId === 'string' && /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) + 1 : null
  if (last !== null) return last
  const n = Number(from ?? 0)
  return Number.isInteger(n) && n >= 0 ? n : 0
}

export interface InspectorOptions {
  /** The JSONL file to follow (or give `source`). */
  file?: string
  /** Any other source (a PostgreSQL session: cli/inspect-pg.ts); closed with the inspector. */
  source?: TailSource
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

/** A JSONL file as a tail source: new bytes from the last offset through the push decoder. */
export async function jsonlTail(file: string): Promise<TailSource> {
  const decoder = new JsonlDecoder({ file })
  // only a regular file is a log: a missing path or a directory is IO_ERROR (exit 2), never a crash
  const { fh } = await openLogFile(file)
  const buf = new Uint8Array(1 << 20)
  let offset = 0
  return {
    header: () => decoder.header ?? null,
    async read(events) {
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, offset)
        if (bytesRead === 0) break
        offset += bytesRead
        decoder.push(buf.subarray(0, bytesRead), events)
      }
    },
    close: () => fh.close(),
  }
}

export async function startInspector(opts: InspectorOptions): Promise<Inspector> {
  if (!opts.source && opts.file === undefined) throw new TurnlogError('INVALID_ARGUMENT', 'startInspector needs a file or a source', { field: 'LOG' })
  const source = opts.source ?? await jsonlTail(opts.file!)
  // the same tail as turnlog/http: one reader per log, every page waits on it
  let starting = true
  let startError: unknown = null
  const tail = new SessionTail(source, {
    pollMs: opts.pollMs ?? 200,
    onError: (err) => {
      if (starting) startError = err
      opts.onError?.(err)
    },
  })
  const events = tail.events
  const clients = new Set<AbortController>()
  const poll = (): Promise<void> => tail.refresh()
  await poll()
  starting = false
  if (startError) {
    await source.close()
    throw startError
  }

  /** Sends the events from seq `from` on, then each batch as the tail grows, until the page goes away. */
  async function follow(res: ServerResponse, from: number, stop: AbortSignal): Promise<void> {
    let next = from
    while (!stop.aborted) {
      while (next < events.length) {
        const to = Math.min(events.length, next + BATCH)
        res.write(`id: ${events[to - 1]!.seq}\ndata: ${JSON.stringify(events.slice(next, to))}\n\n`)
        next = to
      }
      if (tail.failed) {
        // the log stopped decoding: keep the page connected with what it has (no reconnect storm)
        await new Promise((r) => stop.addEventListener('abort', r, { once: true }))
        break
      }
      await tail.wait(next, stop)
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
        version: 1, mode: 'live', file: opts.label ?? opts.file ?? '', header: source.header(),
        events, verifyOptions: opts.verifyOptions,
      })
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      res.end(html)
      return
    }
    if (url.pathname === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' })
      res.write('retry: 1000\n\n')
      const stop = new AbortController()
      clients.add(stop)
      const end = (): void => { stop.abort(); clients.delete(stop) }
      req.on('close', end)
      await follow(res, resumeFrom(url.searchParams.get('from'), req.headers['last-event-id']), stop.signal)
      end()
      res.end()
      return
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
    res.end('not found')
  }

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => reject(new TurnlogError('INVALID_ARGUMENT',
        `cannot listen on 127.0.0.1:${opts.port ?? 0}: ${err.message}`, { field: '--port' }, { cause: err })))
      server.listen(opts.port ?? 0, '127.0.0.1', () => resolve())
    })
  } catch (err) {
    await source.close()
    throw err
  }
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
      for (const c of clients) c.abort()
      clients.clear()
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
      await tail.close()
    },
  }
}
