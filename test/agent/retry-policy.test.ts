/**
 * The built-in transient retry policy (docs/spec/lifecycle.md §4, agent/retry-policy.ts): its defaults (5
 * retries, 500 ms doubling to 10 s, 10% jitter, the five transient codes), the delay formula,
 * `Retry-After` under the cap, the listener's decisions (R6: cancellation beats retry), and the
 * real timers' `sleep` ending early on abort. Agent-level checks that each default code is retried
 * and that the log checker's L16 budget follows `retry.maxRetries`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Failure } from '../../events/index.js'
import { DEFAULT_RETRY_ON, realTimers, resolveRetry, retryDelay, retryListener } from '../../agent/retry-policy.js'
import type { RequestErrorPayload, Timers } from '../../agent/types.js'
import { verify } from '../../replay/verify.js'
import { makeAgent, valid } from './contain-helpers.js'
import { instantTimers, trace } from './helpers.js'

const fail = (code: string, extra: Partial<Failure> = {}): Failure => ({ code, message: code, ...extra })

describe('resolveRetry: the documented defaults (docs/spec/lifecycle.md §4)', () => {
  it('L16: 5 retries, 500 ms doubling to 10 s, 10% jitter, RATE_LIMIT/SERVER/TIMEOUT/TRANSPORT/EMPTY_RESPONSE', () => {
    const r = resolveRetry()
    expect(r).toEqual({
      maxRetries: 5, baseDelayMs: 500, maxDelayMs: 10_000, jitter: 0.1,
      retryOn: new Set(['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE']),
    })
    expect([...DEFAULT_RETRY_ON]).toEqual(['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE'])
    expect(resolveRetry({})).toEqual(r)
  })

  it('each option overrides its default only', () => {
    const r = resolveRetry({ maxRetries: 0, baseDelayMs: 0, maxDelayMs: 1, jitter: 0, retryOn: ['X'] })
    expect(r).toEqual({ maxRetries: 0, baseDelayMs: 0, maxDelayMs: 1, jitter: 0, retryOn: new Set(['X']) })
    expect(resolveRetry({ maxRetries: 2 })).toMatchObject({ maxRetries: 2, baseDelayMs: 500, maxDelayMs: 10_000, jitter: 0.1 })
  })
})

describe('retryDelay', () => {
  const policy = resolveRetry()
  const mid = (): number => 0.5 // no jitter

  it('doubles from the base per attempt and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 12].map((a) => retryDelay(policy, a, fail('SERVER'), mid))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000,
    ])
    const p = resolveRetry({ baseDelayMs: 300, maxDelayMs: 1000 })
    expect([1, 2, 3].map((a) => retryDelay(p, a, fail('SERVER'), mid))).toEqual([300, 600, 1000])
  })

  it('jitters by ±jitter around the delay, rounded, never above the cap nor below 0', () => {
    expect(retryDelay(policy, 1, fail('SERVER'), () => 0)).toBe(450)
    expect(retryDelay(policy, 1, fail('SERVER'), () => 0.999)).toBe(550) // 549.9 rounded
    expect(retryDelay(policy, 1, fail('SERVER'), () => 0.123)).toBe(462) // 462.3
    expect(retryDelay(policy, 1, fail('SERVER'), () => 0.25)).toBe(475)
    expect(retryDelay(policy, 6, fail('SERVER'), () => 0.999)).toBe(10_000) // 10999 capped
    const wild = resolveRetry({ jitter: 2 })
    expect(retryDelay(wild, 1, fail('SERVER'), () => 0)).toBe(0) // -500 floored at 0
    expect(retryDelay(wild, 1, fail('SERVER'), () => 0.75)).toBe(1000)
  })

  it('honours Retry-After under the cap, without jitter (0 included)', () => {
    expect(retryDelay(policy, 3, fail('RATE_LIMIT', { retryAfterMs: 1200 }), () => 0)).toBe(1200)
    expect(retryDelay(policy, 1, fail('RATE_LIMIT', { retryAfterMs: 0 }), () => 0)).toBe(0)
    expect(retryDelay(policy, 1, fail('RATE_LIMIT', { retryAfterMs: 60_000 }), () => 0)).toBe(10_000)
  })
})

describe('retryListener', () => {
  function payload(over: Partial<RequestErrorPayload> = {}): RequestErrorPayload {
    return { turn: 3, step: 2, failure: fail('SERVER'), retries: 0, signal: new AbortController().signal, agent: null as never, ...over }
  }
  function env(sleep: Timers['sleep'] = async () => {}) {
    const appended: unknown[][] = []
    const slept: Array<[number, AbortSignal]> = []
    const timers: Timers = {
      ...instantTimers(),
      random: () => 0.5,
      sleep: (ms, signal) => {
        slept.push([ms, signal])
        return sleep(ms, signal)
      },
    }
    return { appended, slept, env: { timers, appendRetry: (...a: unknown[]) => void appended.push(a) } }
  }
  const NEXT = { kind: 'from-next' } as never

  it('R6/L16: a retryable failure within the budget logs llm/retry (attempt = retries + 1), sleeps the delay with the turn signal, and retries', async () => {
    const e = env()
    const p = payload({ retries: 2, failure: fail('TIMEOUT') })
    const next = vi.fn(async () => NEXT)
    expect(await retryListener(resolveRetry(), e.env)(p, next)).toEqual({ kind: 'retry' })
    expect(next).not.toHaveBeenCalled()
    expect(e.appended).toEqual([[3, 2, 3, 2000, p.failure]])
    expect(e.slept).toEqual([[2000, p.signal]])
  })

  it('R6: passes to the next listener (no log, no sleep) for a code not retried, an exhausted budget, or an aborted turn', async () => {
    const policy = resolveRetry({ maxRetries: 2 })
    const aborted = new AbortController()
    aborted.abort()
    for (const p of [
      payload({ failure: fail('INVALID_CREDENTIAL') }),
      payload({ retries: 2 }),
      payload({ retries: 3 }),
      payload({ signal: aborted.signal }),
    ]) {
      const e = env()
      expect(await retryListener(policy, e.env)(p, async () => NEXT)).toBe(NEXT)
      expect(e.appended).toEqual([])
      expect(e.slept).toEqual([])
    }
    const e = env()
    expect(await retryListener(policy, e.env)(payload({ retries: 1 }), async () => NEXT)).toEqual({ kind: 'retry' })
    expect(e.appended[0]![2]).toBe(2)
  })

  it('R6: cancellation beats retry: a turn aborted during the wait gets undefined (the failure stands), also when sleep rejects', async () => {
    for (const how of ['resolve', 'reject'] as const) {
      const c = new AbortController()
      const e = env(async () => {
        c.abort()
        if (how === 'reject') throw new Error('aborted')
      })
      const next = vi.fn(async () => NEXT)
      expect(await retryListener(resolveRetry(), e.env)(payload({ signal: c.signal }), next)).toBeUndefined()
      expect(next).not.toHaveBeenCalled()
      expect(e.appended).toHaveLength(1)
    }
    // a sleep that rejects without an abort still retries
    const e = env(async () => {
      throw new Error('timer broke')
    })
    expect(await retryListener(resolveRetry(), e.env)(payload(), async () => NEXT)).toEqual({ kind: 'retry' })
  })
})

describe('realTimers', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('sleep resolves after its delay and leaves no timer and no abort listener behind', async () => {
    vi.useFakeTimers()
    const listeners = new Set<unknown>()
    const signal = {
      aborted: false,
      addEventListener: (_t: string, fn: unknown) => listeners.add(fn),
      removeEventListener: (_t: string, fn: unknown) => listeners.delete(fn),
    } as unknown as AbortSignal
    let done = false
    const p = realTimers.sleep(1000, signal).then(() => (done = true))
    expect(listeners.size).toBe(1)
    await vi.advanceTimersByTimeAsync(999)
    expect(done).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    await p
    expect(done).toBe(true)
    expect(listeners.size).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('sleep ends at once when the signal aborts (no timer left) or was already aborted', async () => {
    vi.useFakeTimers()
    const c = new AbortController()
    const p = realTimers.sleep(1_000_000, c.signal)
    expect(vi.getTimerCount()).toBe(1)
    c.abort()
    await p
    expect(vi.getTimerCount()).toBe(0)
    await realTimers.sleep(1_000_000, c.signal) // already aborted
    expect(vi.getTimerCount()).toBe(0)
  })

  it('setTimeout/clearTimeout are the platform timers; random is in [0, 1)', async () => {
    vi.useFakeTimers()
    const fired: number[] = []
    realTimers.setTimeout(() => fired.push(1), 10)
    const h = realTimers.setTimeout(() => fired.push(2), 10)
    realTimers.clearTimeout(h)
    await vi.advanceTimersByTimeAsync(10)
    expect(fired).toEqual([1])
    const r = realTimers.random()
    expect(r >= 0 && r < 1).toBe(true)
    expect(realTimers.random).toBe(Math.random)
  })
})

describe('the policy in the agent', () => {
  it('L13/L16: each default transient code is retried once by default; another code is not', async () => {
    for (const code of ['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE']) {
      const { agent } = makeAgent([{ error: { code } }, { text: 'ok' }])
      agent.followup('go')
      await agent.whenIdle()
      expect(trace(agent.events).filter((l) => l.startsWith('llm/retry') || l.startsWith('turn/end'))).toEqual([
        `llm/retry 1 ${code}`, `turn/end 1 error ${code}`, 'turn/end 2 completed',
      ])
      valid(agent.events)
    }
    const { agent } = makeAgent([{ error: { code: 'CONTEXT_WINDOW_EXCEEDED' } }])
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 error CONTEXT_WINDOW_EXCEEDED')
  })

  it('L16: the default budget is 5 retries; the first delays are 500, 1000, 2000, 4000, 8000 ms', async () => {
    const timers = instantTimers()
    const f = { error: { code: 'SERVER' } }
    const { agent } = makeAgent([f, f, f, f, f, f, f], { timers })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('llm/retry'))).toEqual([1, 2, 3, 4, 5].map((n) => `llm/retry ${n} SERVER`))
    expect(agent.events.filter((e) => e.type === 'turn/start')).toHaveLength(6)
    expect(timers.slept).toEqual([500, 1000, 2000, 4000, 8000])
    valid(agent.events)
  })

  it('L16: the log checker allows as many retries as retry.maxRetries (7 > the default 5)', async () => {
    const f = { error: { code: 'SERVER' } }
    const { agent } = makeAgent([f, f, f, f, f, f, f, f, { text: 'ok' }], { retry: { maxRetries: 7 } })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('llm/retry'))).toHaveLength(7)
    expect(trace(agent.events).at(-1)).toBe('turn/end 8 error SERVER')
    expect(verify(agent.events, { maxRetries: 7 }).violations).toEqual([])
  })

  it('retry: false disables the policy: a transient failure is terminal', async () => {
    const { agent } = makeAgent([{ error: { code: 'SERVER' } }, { text: 'ok' }], { retry: false })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('turn/'))).toEqual(['turn/start 1', 'turn/end 1 error SERVER'])
  })
})
