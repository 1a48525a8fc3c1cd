/**
 * Wakeups (docs/spec/lifecycle.md §10): `agent.schedule`, `schedules()`, `unschedule`; one timer for the next
 * due time; firings as `schedule/fired` + the splice of their message; `whenBusy`; coalescing.
 * Fake clock and manual timers: no test waits for real time.
 */
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/index.js'
import type { AnyTool } from '../../tools/types.js'
import { verify } from '../../replay/verify.js'
import { wakeupAgent, wtrace } from './wakeup-harness.js'

describe('agent.schedule (docs/spec/lifecycle.md §10)', () => {
  it('W1/W2: a one-shot is logged, listed, armed as ONE timer, and fires once at its due time as a followup turn', async () => {
    const { agent, clock, t } = wakeupAgent()
    const id = agent.schedule({ in: 60_000, message: 'Check the build again.' })
    expect(agent.schedules()).toMatchObject([{ scheduleId: id, due: 1_060_000, deliver: 'followup', whenBusy: 'queue', fired: 0 }])
    expect(t.pending.size).toBe(1)
    expect([...t.pending][0]!.ms).toBe(60_000)
    // a timer that fires early fires nothing and re-arms
    clock.now = 1_030_000
    expect(t.runDue(true)).toBe(1)
    expect(agent.events.filter((e) => e.type === 'schedule/fired')).toHaveLength(0)
    expect(t.pending.size).toBe(1)
    expect([...t.pending][0]!.ms).toBe(30_000)
    clock.now = 1_060_000
    t.runDue()
    await agent.whenIdle()
    expect(wtrace(agent.events)).toEqual([
      `created ${id} due 1060000`,
      `fired ${id} due 1060000`,
      'insert next-turn id2(schedule)',
      'turn/start 1', 'remove next-turn 1', 'step 1.1', 'user id2', 'turn/end 1',
    ])
    expect(agent.schedules()).toEqual([])
    expect(t.pending.size).toBe(0)
    // nothing fires twice
    clock.now += 10 * 60_000
    t.runDue(true)
    expect(agent.events.filter((e) => e.type === 'schedule/fired')).toHaveLength(1)
    expect(verify(agent.events).ok).toBe(true)
    await agent.dispose()
  })

  it('W2: missed periods of an every-schedule coalesce into one firing (missed counts them); the next due time is the following period', async () => {
    const { agent, clock, t } = wakeupAgent()
    const id = agent.schedule({ every: 1000, message: 'tick' })
    clock.now = 1_000_000 + 3500
    t.runDue()
    await agent.whenIdle()
    const fired = agent.events.filter((e) => e.type === 'schedule/fired')
    expect(fired.map((e) => e.data)).toEqual([{ scheduleId: id, due: 1_003_000, missed: 2 }])
    expect(agent.schedules()).toMatchObject([{ scheduleId: id, due: 1_004_000, every: 1000, fired: 1 }])
    expect(t.pending.size).toBe(1)
    await agent.dispose()
  })

  it('unschedule logs schedule/canceled and clears the timer; an unknown id is false and logs nothing', async () => {
    const { agent, t } = wakeupAgent()
    const id = agent.schedule({ at: new Date(2_000_000), message: 'x' })
    expect(agent.unschedule('nope')).toBe(false)
    expect(agent.unschedule(id)).toBe(true)
    expect(agent.unschedule(id)).toBe(false)
    expect(wtrace(agent.events)).toEqual([`created ${id} due 2000000`, `canceled ${id}`])
    expect(t.pending.size).toBe(0)
    await agent.dispose()
  })

  it('bad specs are INVALID_ARGUMENT naming the field; nothing is logged', async () => {
    const { agent } = wakeupAgent()
    const code = (f: () => unknown) => {
      try {
        f()
      } catch (e) {
        return [(e as TurnlogError).code, (e as TurnlogError).field]
      }
      return null
    }
    expect(code(() => agent.schedule({ message: 'x' }))).toEqual(['INVALID_ARGUMENT', 'in'])
    expect(code(() => agent.schedule({ in: 1, at: 5, message: 'x' }))).toEqual(['INVALID_ARGUMENT', 'at'])
    expect(code(() => agent.schedule({ in: -1, message: 'x' }))).toEqual(['INVALID_ARGUMENT', 'in'])
    expect(code(() => agent.schedule({ every: 0.5, message: 'x' }))).toEqual(['INVALID_ARGUMENT', 'every'])
    expect(code(() => agent.schedule({ at: 'not a date', message: 'x' }))).toEqual(['INVALID_ARGUMENT', 'at'])
    expect(code(() => agent.schedule({ in: 1, message: 'x', whenBusy: 'later' as never }))).toEqual(['INVALID_ARGUMENT', 'whenBusy'])
    expect(code(() => agent.schedule({ in: 1 } as never))).toEqual(['INVALID_ARGUMENT', 'message'])
    expect(code(() => agent.schedule({ in: 1, message: { content: 'no' } as never }))).toEqual(['INVALID_MESSAGE', 'message'])
    expect(code(() => agent.schedule(null as never))).toEqual(['INVALID_ARGUMENT', 'spec'])
    expect(agent.events).toHaveLength(0)
    await agent.dispose()
  })

  it('W3: idle deliveries follow deliver: steer opens a turn from next-step, inject waits without a turn', async () => {
    const { agent, clock, t } = wakeupAgent()
    const s = agent.schedule({ in: 10, message: 's', deliver: 'steer', id: 'S' })
    const i = agent.schedule({ in: 20, message: 'i', deliver: 'inject', id: 'I' })
    clock.now += 10
    t.runDue()
    await agent.whenIdle()
    clock.now += 10
    t.runDue()
    await agent.whenIdle()
    expect(wtrace(agent.events)).toEqual([
      `created ${s} due 1000010`, `created ${i} due 1000020`,
      'fired S due 1000010', 'insert next-step id1(schedule)',
      'turn/start 1', 'remove next-step 1', 'step 1.1', 'user id1', 'turn/end 1',
      'fired I due 1000020', 'insert next-step id2(schedule)',
    ])
    expect(agent.status).toBe('idle')
    expect(agent.inbox.nextStep.map((m) => m.id)).toEqual(['id2'])
    await agent.dispose()
  })

  it('dispose clears the timer; a disposed agent refuses schedule', async () => {
    const { agent, t } = wakeupAgent()
    agent.schedule({ in: 1000, message: 'x' })
    await agent.dispose()
    expect(t.pending.size).toBe(0)
    expect(() => agent.schedule({ in: 1, message: 'x' })).toThrow(expect.objectContaining({ code: 'AGENT_DISPOSED' }))
  })
})

describe('wakeups on resume and from the model', () => {
  it('W2: resumeAgent({autoStart: false}) holds due wakeups until wake(); wake() fires each once', async () => {
    const { resumeAgent } = await import('../../replay/resume.js')
    const { scriptedModel } = await import('../../models/scripted.js')
    const { agent } = wakeupAgent()
    agent.schedule({ in: 10, message: 'x', id: 'a' })
    await agent.dispose()
    const later = await resumeAgent({ log: agent.events as never, model: scriptedModel(() => ({ text: 'ok' })), clock: () => 2_000_000, autoStart: false })
    // a macrotask: a timer armed at creation would have fired by now
    await new Promise((r) => setImmediate(r))
    expect(later.events.filter((e) => e.type === 'schedule/fired')).toHaveLength(0)
    expect(later.wake()).toBe(true)
    await later.whenIdle()
    expect(later.wake()).toBe(false)
    expect(later.events.filter((e) => e.type === 'schedule/fired').map((e) => e.data)).toEqual([{ scheduleId: 'a', due: 1_000_010 }])
    await later.dispose()
  })

  it('scheduleWakeup: the model schedules (callId recorded); out-of-bounds delays are a TOOL_ERROR result and schedule nothing', async () => {
    const { scriptedModel } = await import('../../models/scripted.js')
    const model = scriptedModel([
      { toolCalls: [{ name: 'scheduleWakeup', args: { delaySeconds: 60, message: 'look again' }, id: 'c1' },
        { name: 'scheduleWakeup', args: { delaySeconds: 0.001, message: 'too soon' }, id: 'c2' }] },
      { text: 'done' },
    ])
    const { agent } = wakeupAgent({ model, wakeups: { tool: true } })
    agent.followup('go')
    await agent.whenIdle()
    const created = agent.events.filter((e) => e.type === 'schedule/created')
    expect(created.map((e) => (e.data as { callId?: string; due: number }).callId)).toEqual(['c1'])
    const results = agent.events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { error?: { code: string } }).error?.code ?? 'ok')
    expect(results).toEqual(['ok', 'TOOL_ERROR'])
    expect(agent.schedules()).toHaveLength(1)
    expect(() => wakeupAgent({ tools: [(agent as unknown as { tools: Map<string, AnyTool> }).tools.get('scheduleWakeup')!], wakeups: { tool: true } }))
      .toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }))
    await agent.dispose()
  })
})
