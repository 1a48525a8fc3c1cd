/**
 * The cancel grace period as a unit (agent/grace.ts; docs/spec/lifecycle.md §6, R5/R8): armed only by the turn's
 * abort, once; waiters abandoned when it expires (ABANDONED reported once, a later settlement
 * reported as LATE_SETTLEMENT); a value already settled wins; close() leaves no timer behind.
 */
import { describe, expect, it } from 'vitest'
import { Abandoned, GracePeriod, isAbandoned } from '../../agent/grace.js'
import type { Timers } from '../../agent/types.js'

function host() {
  const timers = new Map<number, { fn: () => void; ms: number }>()
  let n = 0
  const reported: Array<{ code: string; field: unknown; info: unknown; message: string; where: string }> = []
  const t: Timers = {
    sleep: async () => {},
    random: () => 0.5,
    setTimeout: (fn, ms) => (timers.set(++n, { fn, ms }), n),
    clearTimeout: (h) => void timers.delete(h as number),
  }
  return {
    timers,
    reported,
    host: {
      timers: t,
      sessionId: 's',
      reportError: (e: any, where: string) => reported.push({ code: e.code, field: e.field, info: e.info, message: e.message, where }),
    },
    fire: () => {
      for (const [id, x] of [...timers]) {
        timers.delete(id)
        x.fn()
      }
    },
  }
}

const tick = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve()
}

describe('GracePeriod', () => {
  it('R5: before expiry within() settles as its value does; the timer is armed once, by the abort, for cancelGraceMs', async () => {
    const h = host()
    const c = new AbortController()
    const g = new GracePeriod(h.host, c.signal, 250)
    expect(h.timers.size).toBe(0)
    expect(await g.within(Promise.resolve(1), 'w')).toBe(1)
    await expect(g.within(Promise.reject(new Error('no')), 'w')).rejects.toThrow('no')
    expect(await g.within(7 as never, 'w')).toBe(7) // a plain value
    c.abort()
    expect([...h.timers.values()].map((x) => x.ms)).toEqual([250])
    c.signal.dispatchEvent(new Event('abort'))
    expect(h.timers.size).toBe(1)
    expect(g.expired).toBe(false)
    expect(h.reported).toEqual([])
  })

  it('R8: on expiry pending waiters reject with Abandoned(where), reported once as ABANDONED; a late settlement is LATE_SETTLEMENT', async () => {
    const h = host()
    const c = new AbortController()
    c.abort() // already aborted: armed at once
    const g = new GracePeriod(h.host, c.signal, 100)
    expect(h.timers.size).toBe(1)
    let resolveLate!: (v: number) => void
    let rejectLate!: (e: unknown) => void
    const a = g.within(new Promise<number>((r) => (resolveLate = r)), 'hook-a')
    const b = g.within(new Promise<number>((_r, j) => (rejectLate = j)), 'hook-b')
    h.fire()
    expect(g.expired).toBe(true)
    const ea = await a.catch((e: unknown) => e)
    expect(ea).toBeInstanceOf(Abandoned)
    expect(isAbandoned(ea)).toBe(true)
    expect(isAbandoned(new Error('x'))).toBe(false)
    expect((ea as Abandoned).where).toBe('hook-a')
    expect((ea as Abandoned).message).toBe('hook-a did not settle within the cancel grace period: abandoned')
    await expect(b).rejects.toBeInstanceOf(Abandoned)
    expect(h.reported.map((r) => [r.code, r.where, r.field, r.info])).toEqual([
      ['ABANDONED', 'hook-a', 'hook-a', { cancelGraceMs: 100 }], ['ABANDONED', 'hook-b', 'hook-b', { cancelGraceMs: 100 }],
    ])
    expect(h.reported[0]!.message).toContain('hook-a did not settle within 100 ms after the cancel: abandoned')
    resolveLate(1)
    rejectLate(new Error('late'))
    await tick()
    expect(h.reported.slice(2).map((r) => [r.code, r.where, r.field])).toEqual([
      ['LATE_SETTLEMENT', 'hook-a', 'hook-a'], ['LATE_SETTLEMENT', 'hook-b', 'hook-b'],
    ])
    expect(h.reported[2]!.message).toContain('hook-a resolved after it was abandoned: ignored')
    expect(h.reported[3]!.message).toContain('hook-b rejected after it was abandoned: ignored')
    g.expire() // a second expiry changes nothing
    expect(h.reported).toHaveLength(4)
  })

  it('after expiry a value already settled still wins its microtask; a pending one is abandoned at once', async () => {
    const h = host()
    const c = new AbortController()
    const g = new GracePeriod(h.host, c.signal, 5)
    g.expire()
    expect(await g.within(Promise.resolve('ok'), 'w')).toBe('ok')
    await expect(g.within(new Promise(() => {}), 'p')).rejects.toBeInstanceOf(Abandoned)
    expect(h.reported.map((r) => r.code)).toEqual(['ABANDONED'])
    c.abort()
    expect(h.timers.size).toBe(0) // expired: never armed again
  })

  it('a settled waiter is not abandoned by a later expiry', async () => {
    const h = host()
    const c = new AbortController()
    const g = new GracePeriod(h.host, c.signal, 5)
    c.abort()
    expect(await g.within(Promise.resolve(3), 'w')).toBe(3)
    h.fire()
    await tick()
    expect(h.reported).toEqual([])
  })

  it('close() clears the armed timer and stops listening: a later abort arms nothing', async () => {
    const h = host()
    const c1 = new AbortController()
    const g1 = new GracePeriod(h.host, c1.signal, 5)
    c1.abort()
    expect(h.timers.size).toBe(1)
    g1.close()
    expect(h.timers.size).toBe(0)
    g1.close()
    const c2 = new AbortController()
    const g2 = new GracePeriod(h.host, c2.signal, 5)
    g2.close()
    c2.abort()
    expect(h.timers.size).toBe(0)
    expect(g2.expired).toBe(false)
  })
})
