/**
 * Model failures: the error an adapter throws to report a coded failure, and the mapping of any
 * thrown value to a `Failure` (docs/spec/events.md "Stream chunks": `{code, message, status?, retryAfterMs?}`).
 */
import { FAILURE_CODES, Failure, type FailureCode } from '../events/index.js'

const BRAND = Symbol.for('turnlog.model-error')

/**
 * An adapter error that carries its failure verbatim. `checkedStream` reports `failure` as is
 * (unless the signal was aborted, which always wins as `ABORTED`). Recognised across copies of the
 * package by a global brand, like `TurnlogError`.
 */
export class ModelError extends Error {
  readonly [BRAND] = true
  readonly failure: Failure

  constructor(failure: Failure, options?: { cause?: unknown }) {
    super(`${failure.code}: ${failure.message}`, options)
    this.name = 'ModelError'
    this.failure = failure
  }

  /** True for a `ModelError`, also one made by another copy of the package (it checks a brand, not the class). */
  static is(e: unknown): e is ModelError {
    try {
      return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true
    } catch {
      return false // a proxy whose trap throws is no ModelError
    }
  }
}

/** The failure code for an HTTP status (body-specific refinements are the adapter's job). */
export function failureCodeForStatus(status: number): FailureCode {
  if (status === 429) return 'RATE_LIMIT'
  if (status === 401 || status === 403) return 'INVALID_CREDENTIAL'
  if (status === 402) return 'QUOTA'
  if (status === 408) return 'TIMEOUT'
  if (status === 413) return 'CONTEXT_WINDOW_EXCEEDED'
  if (status >= 500) return 'SERVER'
  return 'UNKNOWN'
}

const KNOWN = new Set<string>(FAILURE_CODES)

/** System and undici error codes of a broken or refused connection. */
const TRANSPORT_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH',
  'ENETUNREACH', 'ENETDOWN', 'EPROTO', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_ABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
])
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT',
])

/** Reads one member of a thrown value: user data, so a throwing getter (or proxy trap) reads as absent. */
function prop(e: unknown, key: string): unknown {
  try {
    return typeof e === 'object' && e !== null ? (e as Record<string, unknown>)[key] : undefined
  } catch {
    return undefined
  }
}

/** Describes any thrown value or abort reason in one line. */
export function describe(e: unknown): string {
  try {
    if (e instanceof Error) return e.message || e.name
    if (typeof e === 'string') return e
    try {
      const s = JSON.stringify(e)
      if (typeof s === 'string') return s
    } catch {
      // fall through
    }
    return String(e)
  } catch {
    // a throwing getter, toString or proxy trap: still one line, never a crash
    return 'unprintable error'
  }
}

function classify(e: unknown): FailureCode {
  const name = prop(e, 'name')
  if (name === 'TimeoutError') return 'TIMEOUT'
  if (name === 'AbortError') return 'ABORTED'
  // walk the cause chain (fetch wraps the socket error: TypeError('fetch failed', {cause}))
  let cur: unknown = e
  for (let depth = 0; depth < 5 && cur !== undefined && cur !== null; depth++) {
    const code = prop(cur, 'code')
    if (typeof code === 'string') {
      if (KNOWN.has(code)) return code as FailureCode
      if (TIMEOUT_CODES.has(code)) return 'TIMEOUT'
      if (TRANSPORT_CODES.has(code)) return 'TRANSPORT'
    }
    cur = prop(cur, 'cause')
  }
  const status = prop(e, 'status') ?? prop(e, 'statusCode')
  if (typeof status === 'number' && Number.isInteger(status)) return failureCodeForStatus(status)
  const message = prop(e, 'message')
  if (name === 'TypeError' && (message === 'fetch failed' || message === 'terminated')) return 'TRANSPORT'
  return 'UNKNOWN'
}

/**
 * Maps anything an adapter threw to a failure:
 * - the signal is aborted → `ABORTED` (cancellation wins over whatever the adapter says);
 * - a `ModelError` → its failure;
 * - otherwise a code from the error: a known failure code in `code`, a connection error code
 *   (`ECONNRESET`, undici's `UND_ERR_*`, … also in the `cause` chain) → `TRANSPORT` or `TIMEOUT`,
 *   a `TimeoutError` → `TIMEOUT`, an `AbortError` → `ABORTED`, an HTTP `status` → its code,
 *   else `UNKNOWN`. `status` (integer) and `retryAfterMs` (finite, ≥ 0) are kept when the error
 *   carries them.
 */
export function failureFromError(e: unknown, signal?: AbortSignal): Failure {
  if (signal?.aborted) return { code: 'ABORTED', message: `aborted: ${describe(signal.reason)}` }
  if (ModelError.is(e)) {
    try {
      const parsed = Failure.safeParse(prop(e, 'failure'))
      if (parsed.success) return parsed.data
    } catch {
      // zod reads getters unguarded: a failure whose members throw is classified below
    }
  }
  let code: FailureCode
  try {
    code = classify(e)
  } catch {
    code = 'UNKNOWN'
  }
  const failure: Failure = { code, message: describe(e) }
  const status = prop(e, 'status') ?? prop(e, 'statusCode')
  if (typeof status === 'number' && Number.isInteger(status)) failure.status = status
  const retryAfterMs = prop(e, 'retryAfterMs')
  if (typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    failure.retryAfterMs = retryAfterMs
  }
  return failure
}
