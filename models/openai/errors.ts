/** HTTP and in-stream error payloads of the chat-completions wire → failures. */
import type { Failure } from '../../events/index.js'
import { failureCodeForStatus } from '../errors.js'
import { isObject } from './wire.js'

const CONTEXT_OVERFLOW =
  /context[_ -]?length|context[_ -]?window|maximum context|prompt is too long|too many tokens|input (is )?too long|reduce the length of the messages/i

function errorFields(payload: unknown, fallback: string): { message: string; code?: string; type?: string } {
  if (isObject(payload)) {
    const inner = isObject(payload.error) ? payload.error : payload
    const out: { message: string; code?: string; type?: string } = {
      message: typeof inner.message === 'string' ? inner.message : typeof payload.error === 'string' ? payload.error : fallback,
    }
    if (typeof inner.code === 'string') out.code = inner.code
    if (typeof inner.type === 'string') out.type = inner.type
    return out
  }
  return { message: typeof payload === 'string' && payload !== '' ? payload : fallback }
}

function isOverflow(f: { message: string; code?: string }): boolean {
  return f.code === 'context_length_exceeded' || CONTEXT_OVERFLOW.test(f.message)
}

/** An HTTP error response → a failure (see the module comment). */
export function httpFailure(status: number, headers: Headers, bodyText: string, now: () => number = Date.now): Failure {
  let payload: unknown = bodyText
  try {
    payload = JSON.parse(bodyText)
  } catch {
    // a plain-text body
  }
  const fields = errorFields(payload, bodyText.slice(0, 500) || `HTTP ${status}`)
  let code: string = failureCodeForStatus(status)
  if ((status === 400 || status === 413 || status === 422) && isOverflow(fields)) code = 'CONTEXT_WINDOW_EXCEEDED'
  else if (status === 429 && (fields.code === 'insufficient_quota' || fields.type === 'insufficient_quota')) code = 'QUOTA'
  const failure: Failure = { code, message: `HTTP ${status}: ${fields.message.slice(0, 1000)}`, status }
  const retryAfterMs = parseRetryAfter(headers, now)
  if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs
  return failure
}

export function streamErrorFailure(payload: unknown): Failure {
  const fields = errorFields(payload, 'the provider reported an error mid-stream')
  return { code: isOverflow(fields) ? 'CONTEXT_WINDOW_EXCEEDED' : 'SERVER', message: fields.message.slice(0, 1000) }
}

/** `retry-after-ms` (ms), else `Retry-After` as seconds or an HTTP date; undefined if absent or bad. */
export function parseRetryAfter(headers: Headers, now: () => number = Date.now): number | undefined {
  const ms = headers.get('retry-after-ms')
  if (ms !== null && ms.trim() !== '') {
    const v = Number(ms)
    if (Number.isFinite(v) && v >= 0) return v
  }
  const ra = headers.get('retry-after')
  if (ra === null || ra.trim() === '') return undefined
  const seconds = Number(ra)
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined
  const date = Date.parse(ra)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, date - now())
}
