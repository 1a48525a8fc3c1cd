/**
 * `GET/HEAD /sessions/:id`: a session's log as a Durable Streams stream in JSON mode
 * (durable-streams PROTOCOL.md §5.5–5.8, §6–8): each message is one log event; offsets are seqs
 * (protocol.ts). Catch-up (no `live`), `live=long-poll` and `live=sse`; `HEAD` gives the tail.
 * Nothing here writes: the log is written by the agent only (POST/PUT/DELETE answer 405).
 */
import type { LogEvent } from '../events/envelope.js'
import { formatOffset, HttpError, nextCursor, parseOffset, unreadable } from './protocol.js'
import { sseFollowResponse } from './sse-follow.js'
import type { SessionTail } from './tail.js'

export interface ReadOptions {
  /** Most events per SSE data event (and per piece of a streamed body). Default 1,000. */
  maxBatch: number
  /** Most events per catch-up or long-poll response. Default 100,000: the stock client reads one
   * response per `live: false` read, so a page that stops short of the tail is seen as the end. */
  maxCatchUp: number
  /** How long a long-poll waits for new events. Default 20 s. */
  longPollMs: number
  /** An SSE response is closed after this long (the client reconnects from its offset). Default 60 s. */
  sseMaxMs: number
}

const JSON_TYPE = 'application/json'

function batchBody(events: readonly LogEvent[], from: number, to: number): string {
  // events are JSON data (lossless by construction): one array, one message per event
  let s = '['
  for (let i = from; i < to; i++) s += (i > from ? ',' : '') + JSON.stringify(events[i])
  return s + ']'
}

/** `HEAD`: the tail, without a body. */
export function headResponse(tail: SessionTail): Response {
  return new Response(null, {
    status: 200,
    headers: { 'content-type': JSON_TYPE, 'stream-next-offset': formatOffset(tail.events.length), 'cache-control': 'no-store' },
  })
}

export async function readResponse(req: Request, url: URL, tail: SessionTail, opts: ReadOptions): Promise<Response> {
  // one value each: with two, the answer would depend on which one a server reads first
  if (url.searchParams.getAll('live').length > 1) throw new HttpError(400, 'BAD_REQUEST', 'live is given more than once')
  if (url.searchParams.getAll('offset').length > 1) throw new HttpError(400, 'BAD_OFFSET', 'offset is given more than once')
  const live = url.searchParams.get('live')
  if (live !== null && live !== 'long-poll' && live !== 'sse') throw new HttpError(400, 'BAD_REQUEST', `live must be long-poll or sse, got ${JSON.stringify(live.slice(0, 40))}`)
  const rawOffset = url.searchParams.get('offset')
  // a live read starts where the client is: it must say where (-1 for the start, now for the tail)
  if (live !== null && rawOffset === null) throw new HttpError(400, 'BAD_OFFSET', `live=${live} needs an offset (-1 for the start, now for the tail)`)
  const from = parseOffset(rawOffset, tail.events.length)
  if (live === 'sse') return sseResponse(req, url, tail, from, opts)
  if (live === 'long-poll') {
    if (tail.events.length <= from) await tail.wait(from, req.signal, opts.longPollMs)
    if (tail.failed) throw unreadable(tail.failed)
    const cursor = nextCursor(url.searchParams.get('cursor'))
    if (tail.events.length <= from) {
      return new Response(null, {
        status: 204,
        headers: { 'stream-next-offset': formatOffset(from), 'stream-up-to-date': 'true', 'stream-cursor': cursor, 'cache-control': 'no-store' },
      })
    }
    return catchUp(req, tail, from, opts, { 'stream-cursor': cursor })
  }
  if (rawOffset === 'now') {
    return new Response('[]', {
      status: 200,
      headers: { 'content-type': JSON_TYPE, 'stream-next-offset': formatOffset(from), 'stream-up-to-date': 'true', 'cache-control': 'no-store' },
    })
  }
  return catchUp(req, tail, from, opts, {})
}

function catchUp(req: Request, tail: SessionTail, from: number, opts: ReadOptions, extra: Record<string, string>): Response {
  const len = tail.events.length
  const to = Math.min(len, from + opts.maxCatchUp)
  const upToDate = to === len
  // the events of [from, to) never change (append-only); whether that range reached the tail may
  const etag = `"${formatOffset(from)}-${formatOffset(to)}${upToDate ? '-u' : ''}"`
  const headers: Record<string, string> = {
    'content-type': JSON_TYPE,
    'stream-next-offset': formatOffset(to),
    etag,
    // a range that stops short of the tail is immutable; one that reached it is not cached (the tail moves)
    'cache-control': upToDate ? 'no-store' : 'private, max-age=60, stale-while-revalidate=300',
    ...extra,
  }
  if (upToDate) headers['stream-up-to-date'] = 'true'
  if (req.headers.get('if-none-match') === etag) return new Response(null, { status: 304, headers })
  if (to - from <= opts.maxBatch) return new Response(batchBody(tail.events, from, to), { status: 200, headers })
  // a long range is written in pieces (one JSON array across them), never built as one string
  const events = tail.events
  const encoder = new TextEncoder()
  let at = from
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const end = Math.min(to, at + opts.maxBatch)
      let s = at === from ? '[' : ''
      for (let i = at; i < end; i++) s += (i > from ? ',' : '') + JSON.stringify(events[i])
      at = end
      if (at === to) s += ']'
      controller.enqueue(encoder.encode(s))
      if (at === to) controller.close()
    },
  })
  return new Response(body, { status: 200, headers })
}

function sseResponse(req: Request, url: URL, tail: SessionTail, from: number, opts: ReadOptions): Response {
  return sseFollowResponse(req, tail, from, nextCursor(url.searchParams.get('cursor')), { maxBatch: opts.maxBatch, maxMs: opts.sseMaxMs })
}
