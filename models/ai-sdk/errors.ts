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
  return typeof e === 'object' && e !== null ? (e as Record<string, unknown>)[key] : undefined
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
  // an `error` part of a stream carries the provider's payload (e.g. Anthropic's overloaded_error)
  const type = prop(prop(e, 'error'), 'type') ?? prop(e, 'type')
  if (type === 'overloaded_error' || type === 'api_error') {
    const msg = prop(prop(e, 'error'), 'message')
    return { code: 'SERVER', message: typeof msg === 'string' ? msg : String(type) }
  }
  return failureFromError(e, signal)
}
