/**
 * AI SDK errors → failures. Duck-typed (no runtime import of `@ai-sdk/provider`, and it works
 * across copies of it): an `APICallError` is anything with an integer `statusCode` and a string
 * `url`; its status, body and headers go through the same mapping as the OpenAI-compatible adapter
 * (429 → RATE_LIMIT or QUOTA, 5xx → SERVER, 401/403 → INVALID_CREDENTIAL, context-length 400s →
 * CONTEXT_WINDOW_EXCEEDED, `retry-after-ms`/`Retry-After` → retryAfterMs). Anything else goes
 * through `failureFromError` (connection codes in the cause chain, AbortError, …).
 */
import type { Failure } from '../../events/index.js'
import { failureFromError } from '../errors.js'
import { httpFailure } from '../openai/errors.js'

function prop(e: unknown, key: string): unknown {
  try {
    return typeof e === 'object' && e !== null ? (e as Record<string, unknown>)[key] : undefined
  } catch {
    return undefined // a throwing getter in provider data reads as absent
  }
}

/** Provider error types (Anthropic's, OpenAI's) in an `error` part → failure codes. */
const STREAM_ERROR_CODES: Record<string, string> = {
  overloaded_error: 'SERVER',
  api_error: 'SERVER',
  server_error: 'SERVER',
  rate_limit_error: 'RATE_LIMIT',
  rate_limit_exceeded: 'RATE_LIMIT',
  authentication_error: 'INVALID_CREDENTIAL',
  permission_error: 'INVALID_CREDENTIAL',
  billing_error: 'QUOTA',
  insufficient_quota: 'QUOTA',
  timeout_error: 'TIMEOUT',
}

/** The failure for anything an AI SDK model threw or reported in an `error` part. */
export function aiSdkFailure(e: unknown, signal: AbortSignal | undefined, now: () => number): Failure {
  if (signal?.aborted) return failureFromError(e, signal)
  const status = prop(e, 'statusCode')
  if (typeof status === 'number' && Number.isInteger(status) && typeof prop(e, 'url') === 'string') {
    const headers = new Headers()
    const raw = prop(e, 'responseHeaders')
    if (typeof raw === 'object' && raw !== null) {
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) if (typeof v === 'string') headers.set(k, v)
    }
    const body = prop(e, 'responseBody')
    const message = prop(e, 'message')
    return httpFailure(status, headers, typeof body === 'string' && body !== '' ? body : typeof message === 'string' ? message : '', now)
  }
  // an `error` part of a stream carries the provider's payload, `{type, message}` (Anthropic's
  // SSE error event) or wrapped once more as `{error: {type, message}}`: keep its message (issue 23)
  const payload = typeof prop(prop(e, 'error'), 'type') === 'string' ? prop(e, 'error') : e
  const type = prop(payload, 'type')
  const msg = prop(payload, 'message')
  if (typeof type === 'string' && !(e instanceof Error)) {
    const code = STREAM_ERROR_CODES[type] ?? 'UNKNOWN'
    return { code, message: typeof msg === 'string' && msg !== '' ? msg : type }
  }
  return failureFromError(e, signal)
}
