/**
 * A wakeup that comes due while a turn is open follows its `whenBusy` (docs/spec/lifecycle.md §10, W3):
 * `queue` waits in next-turn for its own turn, `steer` joins the open turn at its next step
 * boundary, `drop` is logged as a dropped firing and delivers nothing. The timer is run from inside
 * the model's stream, so the firing lands while the turn is open (no waiting on real time).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ScheduleDeliver, ScheduleWhenBusy } from '../../events/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { verify } from '../../replay/verify.js'
import { fcRuns } from '../fc-runs.js'
import { Clock, wakeupAgent, wtrace } from './wakeup-harness.js'

function busyRun(whenBusy: ScheduleWhenBusy, deliver: ScheduleDeliver = 'followup') {
  const clock = new Clock()
  let fireNow: (() => void) | null = null
  const model = scriptedModel((_req, index) => {
    // the first request of turn 1: the wakeup comes due now, while the turn is open
    if (index === 0) fireNow?.()
    return { text: `answer ${index}` }
  })
  const h = wakeupAgent({ model }, clock)
  fireNow = () => {
    clock.now += 100
    h.t.runDue()
  }
  h.agent.schedule({ in: 100, message: 'wake', whenBusy, deliver, id: 'W' })
  h.agent.followup({ id: 'p1', content: [{ type: 'text', text: 'hello' }] })
  return h
}

describe('whenBusy (docs/spec/lifecycle.md §10, W3)', () => {
  it('queue: the firing waits in next-turn and gets a turn of its own after the open one', async () => {
    const { agent } = busyRun('queue')
    await agent.whenIdle()
    expect(wtrace(agent.events)).toEqual([
      'created W due 1000100', 'insert next-turn p1(user)', 'turn/start 1', 'remove next-turn 1', 'step 1.1', 'user p1',
      'fired W due 1000100', 'insert next-turn id1(schedule)',
      'turn/end 1',
      'turn/start 2', 'remove next-turn 1', 'step 2.1', 'user id1', 'turn/end 2',
    ])
    await agent.dispose()
  })

  it('steer: the firing joins the open turn at its next step boundary', async () => {
    const { agent } = busyRun('steer')
    await agent.whenIdle()
    expect(wtrace(agent.events)).toEqual([
      'created W due 1000100', 'insert next-turn p1(user)', 'turn/start 1', 'remove next-turn 1', 'step 1.1', 'user p1',
      'fired W due 1000100', 'insert next-step id1(schedule)',
      'remove next-step 1', 'step 1.2', 'user id1', 'turn/end 1',
    ])
    await agent.dispose()
  })

  it('drop: the firing is logged dropped, delivers nothing, and a one-shot is gone', async () => {
    const { agent } = busyRun('drop')
    await agent.whenIdle()
    expect(wtrace(agent.events)).toEqual([
      'created W due 1000100', 'insert next-turn p1(user)', 'turn/start 1', 'remove next-turn 1', 'step 1.1', 'user p1',
      'fired W due 1000100 dropped', 'turn/end 1',
    ])
    expect(agent.schedules()).toEqual([])
    await agent.dispose()
  })

  it('property (W1–W3): any deliver × whenBusy, due idle or busy, gives a valid log with exactly one firing', async () => {
    await fc.assert(fc.asyncProperty(
      fc.constantFrom<ScheduleWhenBusy>('queue', 'steer', 'drop'),
      fc.constantFrom<ScheduleDeliver>('followup', 'steer', 'inject'),
      fc.boolean(),
      async (whenBusy, deliver, busy) => {
        const h = busy ? busyRun(whenBusy, deliver) : wakeupAgent()
        if (!busy) {
          h.agent.schedule({ in: 100, message: 'wake', whenBusy, deliver, id: 'W' })
          h.clock.now += 100
          h.t.runDue()
        }
        await h.agent.whenIdle()
        const fired = h.agent.events.filter((e) => e.type === 'schedule/fired')
        expect(fired).toHaveLength(1)
        expect((fired[0]!.data as { dropped?: true }).dropped === true).toBe(busy && whenBusy === 'drop')
        expect(verify(h.agent.events)).toMatchObject({ ok: true })
        await h.agent.dispose()
      },
    ), { numRuns: fcRuns(40) })
  })
})
