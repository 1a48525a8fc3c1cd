/**
 * The built-in transient retry policy (docs/spec/lifecycle.md §4): an `agent/request-error` listener. For a
 * retryable failure within the budget it appends `llm/retry {attempt, delayMs}`, waits (the wait
 * ends early on cancel, and then the failure stands: cancellation beats retry) and returns
 * `retry`. Anything else goes to the next listener.
 */
import type { Failure } from '../events/index.js'
import type { RequestErrorDecision, RequestErrorPayload, RetryOptions, Timers } from './types.js'
import type { Next } from './hooks.js'

export const DEFAULT_RETRY_ON = ['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE'] as const

export interface ResolvedRetry {
  maxRetries: number
  baseDelayMs: number
  maxDelayMs: number
  jitter: number
  retryOn: ReadonlySet<string>
}

export function resolveRetry(o: RetryOptions = {}): ResolvedRetry {
  return {
    maxRetries: o.maxRetries ?? 5,
    baseDelayMs: o.baseDelayMs ?? 500,
    maxDelayMs: o.maxDelayMs ?? 10_000,
    jitter: o.jitter ?? 0.1,
    retryOn: new Set(o.retryOn ?? DEFAULT_RETRY_ON),
  }
}

/** The delay of attempt n (1-based): base doubling, capped, jittered; `Retry-After` honoured under the cap. */
export function retryDelay(policy: ResolvedRetry, attempt: number, failure: Failure, random: () => number): number {
  if (failure.retryAfterMs !== undefined) return Math.min(failure.retryAfterMs, policy.maxDelayMs)
  const raw = Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxDelayMs)
  const jittered = raw * (1 + policy.jitter * (2 * random() - 1))
  return Math.max(0, Math.min(Math.round(jittered), policy.maxDelayMs))
}

export interface RetryEnv {
  appendRetry(turn: number, step: number, attempt: number, delayMs: number, failure: Failure): void
  timers: Timers
}

export function retryListener(policy: ResolvedRetry, env: RetryEnv) {
  return async (
    p: RequestErrorPayload,
    next: Next<RequestErrorPayload, RequestErrorDecision>,
  ): Promise<RequestErrorDecision> => {
    if (!policy.retryOn.has(p.failure.code) || p.retries >= policy.maxRetries || p.signal.aborted) return next()
    const attempt = p.retries + 1
    const delayMs = retryDelay(policy, attempt, p.failure, env.timers.random)
    env.appendRetry(p.turn, p.step, attempt, delayMs, p.failure)
    try {
      await env.timers.sleep(delayMs, p.signal)
    } catch {
      // an aborted wait: the cancel decides below
    }
    return p.signal.aborted ? undefined : { kind: 'retry' }
  }
}

export const realTimers: Timers = {
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve()
      const t = setTimeout(done, ms)
      function done() {
        clearTimeout(t)
        signal.removeEventListener('abort', done)
        resolve()
      }
      signal.addEventListener('abort', done, { once: true })
    }),
  random: Math.random,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
}
