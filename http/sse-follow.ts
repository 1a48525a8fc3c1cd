/**
 * A live SSE follower of a session (`GET /sessions/:id?live=sse`), built for fan-out (B9: one
 * session, 1,000 followers): when the tail grew (told once per event-loop turn) it writes the batch's
 * bytes (the `data` event and the `control` event after it, as one chunk) that every follower at
 * the same place shares. No promise, timer or abort listener per client per batch.
 *
 * It writes to a sink: the Response's ReadableStream (any Fetch server), or, through
 * `toNodeListener`, straight to the socket (`directBody`: the shared bytes are written to each
 * `ServerResponse` without a web stream per client in between). A slow socket (`write` answers
 * false) pauses the follower until `resume()` (its `drain`): the next batch it writes then starts
 * where it stopped, so nothing is skipped or sent twice.
 */
import { formatOffset } from './protocol.js'
import { sseEvent } from './sse.js'
import type { SessionTail } from './tail.js'
import type { LogEvent } from '../events/envelope.js'

export interface SseSink {
  /** Writes bytes; false when the sink wants no more until `resume()`. */
  write(bytes: Uint8Array): boolean
  end(): void
}

export interface SseFollowHandle {
  /** The sink can take more (a socket's `drain`). */
  resume(): void
  /** Ends the follow (the client went away). */
  end(): void
}

const encoder = new TextEncoder()

function batchBody(events: readonly LogEvent[], from: number, to: number): string {
  let s = '['
  for (let i = from; i < to; i++) s += (i > from ? ',' : '') + JSON.stringify(events[i])
  return s + ']'
}

function control(next: number, cursor: string, upToDate: boolean): string {
  return sseEvent({ event: 'control', data: JSON.stringify({ streamNextOffset: formatOffset(next), streamCursor: cursor, ...(upToDate ? { upToDate: true } : {}) }) })
}

/** Starts following `tail` from `from` into `sink`; ends after `maxMs` (the client reconnects from its offset). */
export function followSse(tail: SessionTail, from: number, cursor: string, opts: { maxBatch: number; maxMs: number }, sink: SseSink): SseFollowHandle {
  let next = from
  let paused = false
  let ended = false
  const end = (): void => {
    if (ended) return
    ended = true
    off()
    clearTimeout(timer)
    try { sink.end() } catch { /* already gone */ }
  }
  const pump = (): void => {
    if (ended || paused) return
    if (tail.failed || tail.closed) return end()
    const len = tail.events.length
    while (next < len) {
      const at = next
      const to = Math.min(len, at + opts.maxBatch)
      const upToDate = to === len
      // data + control in one chunk, shared by every follower at this place with this cursor
      const bytes = tail.shared(`sse:${cursor}:${upToDate ? 'u' : ''}`, at, to, () => sseEvent({ event: 'data', data: batchBody(tail.events, at, to) }) + control(to, cursor, upToDate))
      next = to
      let more: boolean
      try {
        more = sink.write(bytes)
      } catch {
        return end()
      }
      if (!more) {
        paused = true
        return
      }
    }
  }
  // the first control event, also with nothing to send yet (the client learns the offset)
  if (tail.events.length === from) sink.write(encoder.encode(control(from, cursor, true)))
  const off = tail.listen(pump)
  const timer = setTimeout(end, opts.maxMs)
  pump()
  return {
    resume() {
      paused = false
      pump()
    },
    end,
  }
}

/** Responses whose body `toNodeListener` may write straight to the socket (`followSse` with a socket sink). */
const direct = new WeakMap<Response, (sink: SseSink) => SseFollowHandle>()

/** The direct writer of a response, if it has one (`toNodeListener` asks). @internal */
export function directBody(res: Response): ((sink: SseSink) => SseFollowHandle) | undefined {
  return direct.get(res)
}

/**
 * The SSE response of a follow: a ReadableStream body that starts following when first read
 * (so a server that writes it directly never starts the stream path), and the direct path.
 */
export function sseFollowResponse(req: Request, tail: SessionTail, from: number, cursor: string, opts: { maxBatch: number; maxMs: number }): Response {
  let handle: SseFollowHandle | null = null
  // the session stays held from now until the follow ends (or the client leaves before reading)
  const release = tail.hold()
  const onAbort = (): void => { if (handle) handle.end(); else release() }
  req.signal.addEventListener('abort', onAbort, { once: true })
  const start = (sink: SseSink): SseFollowHandle => {
    if (handle) throw new Error('the SSE body is already being read')
    const h = followSse(tail, from, cursor, opts, {
      write: sink.write,
      end: () => {
        req.signal.removeEventListener('abort', onAbort)
        release()
        sink.end()
      },
    })
    handle = h
    if (req.signal.aborted) h.end()
    return h
  }
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (handle) return
      start({
        write: (b) => { controller.enqueue(b); return true },
        end: () => { try { controller.close() } catch { /* cancelled */ } },
      })
    },
    cancel() { if (handle) handle.end(); else release() },
  }, { highWaterMark: 0 })
  const res = new Response(body, {
    status: 200,
    // the protocol's SHOULD for SSE: a stored copy is revalidated, never served as is
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  })
  direct.set(res, start)
  return res
}
