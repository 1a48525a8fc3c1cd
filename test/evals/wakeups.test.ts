/**
 * Golden sessions with wakeups (docs/spec/lifecycle.md §10, docs/spec/api.md "Golden sessions": wakeups are recorded
 * inputs): `rerun` re-issues the app's `schedule`, `unschedule` and each recorded firing
 * (`schedule/fired` and its message) at its lifecycle position, with its recorded due time and
 * message id; the re-run's own timer does not fire.
 */
import { describe, expect, it } from 'vitest'
import { recordedModel, rerun } from '../../evals/index.js'
import { instantTimers, recordGolden, weatherTools } from './goldens.js'

describe('golden sessions with wakeups (docs/spec/lifecycle.md §10)', () => {
  it('P4 (goldens): a scheduled firing that opened a turn is re-issued at its position; the re-run reproduces the golden', async () => {
    let clock = 1_764_450_000_000
    const g = await recordGolden([{ text: 'Hello.' }, { text: 'Reminder noted.' }], async (a) => {
      a.followup('Hi')
      await a.whenIdle()
      a.schedule({ at: clock + 1_000, message: 'reminder' })
      clock += 5_000
      a.wake() // fires what came due (the timer does not run on this clock)
      await a.whenIdle()
    }, { clock: () => (clock += 1), wakeups: { timer: false } })
    const types = g.events.map((e) => e.type)
    expect(types).toContain('schedule/created')
    expect(types).toContain('schedule/fired')
    expect(types.filter((t) => t === 'turn/start')).toHaveLength(2)
    const r = await rerun(g, { timers: instantTimers, timeoutMs: 5000, model: recordedModel(g), tools: weatherTools() })
    expect(r.divergence, `${r.divergence?.diff}\n${JSON.stringify(r.inputs)}`).toBeNull()
    expect(r.verify.ok).toBe(true)
    expect(r.inputs.filter((i) => i.kind === 'schedule').map((i) => i.outcome), JSON.stringify(r.inputs)).toEqual(['issued', 'issued'])
  })
})
