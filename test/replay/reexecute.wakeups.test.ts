/**
 * P4 with wakeups (docs/spec/invariants.md: "recorded inputs: … wakeups"): a recorded session with
 * schedules made by the app and by the model (`scheduleWakeup`), firings idle and busy (queue,
 * steer, drop), coalesced periods and a cancel re-executes to the same log; a changed whenBusy rule
 * (a different recorded firing) diverges at the firing.
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { reexecute } from '../../replay/reexecute.js'
import { verify } from '../../replay/verify.js'
import { Clock, wakeupAgent } from '../agent/wakeup-harness.js'

async function recorded(): Promise<LogEvent[]> {
  const clock = new Clock()
  let during: (() => void) | null = null
  const model = scriptedModel((req, index) => {
    during?.()
    during = null
    if (index === 0) return { toolCalls: [{ name: 'scheduleWakeup', args: { delaySeconds: 5, message: 'look again' }, id: 'c1' }] }
    return { text: `answer ${index}` }
  })
  const h = wakeupAgent({ model, wakeups: { tool: true } }, clock)
  const a = h.agent
  a.schedule({ every: 1000, message: 'tick', whenBusy: 'drop', id: 'tick' })
  a.schedule({ in: 500, message: 'steer me', whenBusy: 'steer', deliver: 'steer', id: 'st' })
  a.followup('hello')
  await a.whenIdle()
  // idle: three periods of tick passed (coalesced), st is due
  clock.now += 3_500
  h.t.runDue()
  await a.whenIdle()
  // busy: a followup's first request finds tick and the model's wakeup due (drop, queue)
  during = () => {
    clock.now += 5_000
    h.t.runDue()
  }
  a.followup('again')
  await a.whenIdle()
  a.unschedule('tick')
  await a.dispose()
  return a.events.slice() as LogEvent[]
}

describe('re-execution of wakeups (P4)', () => {
  it('P4: a session with app- and model-made wakeups, idle and busy firings, coalescing and a cancel reproduces its log', async () => {
    const events = await recorded()
    expect(verify(events).violations).toEqual([])
    const types = events.map((e) => e.type)
    expect(types.filter((t) => t === 'schedule/fired').length).toBeGreaterThanOrEqual(4)
    expect(events.some((e) => e.type === 'schedule/fired' && (e.data as { dropped?: true }).dropped)).toBe(true)
    expect(events.some((e) => e.type === 'schedule/created' && (e.data as { callId?: string }).callId === 'c1')).toBe(true)
    const r = await reexecute(events, {})
    expect(r).toMatchObject({ ok: true })
  })

  it('P4: a recorded firing the agent would deliver differently (whenBusy edited in the log) diverges at that firing', async () => {
    const events = await recorded()
    // the app's every-schedule recorded as whenBusy 'queue': the busy firing is no longer dropped
    const edited = events.map((e) => e.type === 'schedule/created' && (e.data as { scheduleId: string }).scheduleId === 'tick'
      ? { ...e, data: { ...(e.data as object), whenBusy: 'queue' } } : e) as LogEvent[]
    const dropped = edited.findIndex((e) => e.type === 'schedule/fired' && (e.data as { dropped?: true }).dropped)
    const r = await reexecute(edited, { stallMs: 2000 })
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.divergence.seq).toBe(dropped)
  })
})
