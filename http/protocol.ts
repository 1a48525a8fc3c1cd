/**
 * The small pieces of the two wire protocols: Durable Streams offsets and cursors, coded JSON
 * errors, the headers a browser may read.
 *
 * Offsets (Durable Streams PROTOCOL.md §6): the seq of the next event to read, as 16 decimal
 * digits (`0000000000000042`): opaque to clients, sortable as strings, URL-safe, never `-1` or
 * `now` (the protocol's sentinels, accepted on requests).
 */

/** Why a request failed, with a stable code (the JSON body `{ error: { code, message } }`). */
export class HttpError extends Error {
  /** `field`: the member of the request that was wrong (sent as `error.field`), when one was. */
  constructor(readonly status: number, readonly code: string, message: string, readonly headers: Record<string, string> = {}, options?: { cause?: unknown }, readonly field?: string) {
    super(message, options)
    this.name = 'HttpError'
  }
}

/** A log that cannot be read (a corrupt line, a bad seq): a 500 that names no server path; the
 * defect itself is the cause (`onError` gets it). */
export function unreadable(cause: unknown): HttpError {
  return new HttpError(500, 'LOG_UNREADABLE', 'the session log cannot be read', {}, { cause })
}

export function errorResponse(err: HttpError, extraHeaders: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { code: err.code, message: err.message, ...(err.field !== undefined ? { field: err.field } : {}) } }), {
    status: err.status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...err.headers, ...extraHeaders },
  })
}

const OFFSET = /^\d{16}$/

export function formatOffset(seq: number): string {
  return String(seq).padStart(16, '0')
}

/**
 * The seq an `offset` query value names: absent or `-1` → 0, `now` → `tail`, else a 16-digit
 * offset not past `tail`. Anything else is a 400 `BAD_OFFSET`.
 */
export function parseOffset(raw: string | null, tail: number): number {
  if (raw === null || raw === '-1') return 0
  if (raw === 'now') return tail
  if (!OFFSET.test(raw)) throw new HttpError(400, 'BAD_OFFSET', `offset must be -1, now or an offset this server gave (16 digits), got ${JSON.stringify(raw.slice(0, 40))}`)
  const seq = Number(raw)
  if (seq > tail) throw new HttpError(400, 'BAD_OFFSET', `offset ${raw} is past the end of the log (${formatOffset(tail)})`)
  return seq
}

/** The cursor epoch and interval of PROTOCOL.md §8.1 (2024-10-09T00:00:00Z, 20 s). */
const CURSOR_EPOCH = Date.UTC(2024, 9, 9)
const CURSOR_INTERVAL_MS = 20_000

/** The `Stream-Cursor` for a live response: the current interval, always past the client's. */
export function nextCursor(clientCursor: string | null, now: number = Date.now()): string {
  const interval = Math.floor((now - CURSOR_EPOCH) / CURSOR_INTERVAL_MS)
  const client = clientCursor !== null && /^\d{1,15}$/.test(clientCursor) ? Number(clientCursor) : -1
  if (client >= interval) return String(client + 1 + Math.floor(Math.random() * 180))
  return String(interval)
}

/** Response headers a browser app must be able to read (CORS `Access-Control-Expose-Headers`). */
export const EXPOSED_HEADERS = [
  'Stream-Next-Offset', 'Stream-Cursor', 'Stream-Up-To-Date', 'Stream-Closed', 'ETag', 'x-vercel-ai-ui-message-stream',
].join(', ')
