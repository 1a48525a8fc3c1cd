/**
 * The wakeup rules W1–W3 (events/invariants/schedules.ts; docs/decisions/wakeups.md
 * ) on hand-written logs: each rule's violation at the first event that shows it, and the
 * repair/fork closers that owe a firing's message (a log cut right after `schedule/fired`).
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { fork } from '../../replay/fork.js'
import { schedulesReducer } from '../../reducers/schedules.js'
import { repairEvents } from '../../replay/repair.js'
import { verify } from '../../replay/verify.js'

const HEADER = { format: 'turnlog/1', id: 's', createdAt: 0 } as never
const text = (t: string) => [{ type: 'text', text: t }]

function log(...drafts: Array<[string, unknown, number?]>): LogEvent[] {
  return drafts.map(([type, data, time], seq) => ({ seq, time: time ?? 1000 + seq, type, data }) as LogEvent)
}
const created = (id: string, due: number, extra: Record<string, unknown> = {}): [string, unknown] =>
  ['schedule/created', { scheduleId: id, due, content: text('wake'), deliver: 'followup', whenBusy: 'queue', ...extra }]
const splice = (id: string, sched: string, target = 'next-turn', start = 0): [string, unknown] =>
  ['agent/inbox/spliced', { target, start, inserted: [{ id, role: 'user', content: text('wake'), source: { kind: 'schedule', scheduleId: sched } }] }]
const violations = (events: LogEvent[]) => verify(events).violations.map((v) => `${v.invariant}@${v.seq}`)

describe('wakeup rules W1–W3', () => {
  it('a valid log: created, fired at or after due, its splice right after; a repeating schedule fires on its period', () => {
    expect(violations(log(
      created('a', 1005), ['schedule/fired', { scheduleId: 'a', due: 1005 }, 1005], splice('m1', 'a'),
      created('b', 2000, { every: 100 }), ['schedule/fired', { scheduleId: 'b', due: 2300, missed: 3 }, 2350], splice('m2', 'b', 'next-turn', 1),
      ['schedule/fired', { scheduleId: 'b', due: 2400 }, 2400], splice('m3', 'b', 'next-turn', 2),
      ['schedule/canceled', { scheduleId: 'b' }],
    ))).toEqual([])
  })

  it('W1: a second created of one id, a firing or cancel of an unknown, canceled or spent schedule', () => {
    expect(violations(log(created('a', 0), created('a', 0)))).toEqual(['W1@1'])
    expect(violations(log(['schedule/fired', { scheduleId: 'x', due: 0 }]))).toEqual(['W1@0'])
    expect(violations(log(created('a', 0), ['schedule/canceled', { scheduleId: 'a' }], ['schedule/canceled', { scheduleId: 'a' }]))).toEqual(['W1@2'])
    expect(violations(log(created('a', 0), ['schedule/fired', { scheduleId: 'a', due: 0 }], splice('m', 'a'), ['schedule/fired', { scheduleId: 'a', due: 0 }]))).toEqual(['W1@3'])
  })

  it('W2: a firing before its due time, off its due time, or with missed on a one-shot', () => {
    expect(violations(log(created('a', 5000), ['schedule/fired', { scheduleId: 'a', due: 5000 }, 4999], splice('m', 'a')))).toEqual(['W2@1'])
    expect(violations(log(created('a', 1000), ['schedule/fired', { scheduleId: 'a', due: 1001 }, 2000], splice('m', 'a')))).toEqual(['W2@1'])
    expect(violations(log(created('a', 1000, { every: 10 }), ['schedule/fired', { scheduleId: 'a', due: 1025, missed: 2 }, 2000], splice('m', 'a')))).toEqual(['W2@1'])
    expect(violations(log(created('a', 1000), ['schedule/fired', { scheduleId: 'a', due: 1000, missed: 1 }, 2000], splice('m', 'a')))).toEqual(['W2@1'])
  })

  it('W3: a firing not followed by its splice, a splice of another source or target, a schedule message without firing, a dropped firing while idle', () => {
    expect(violations(log(created('a', 0), ['schedule/fired', { scheduleId: 'a', due: 0 }], ['schedule/canceled', { scheduleId: 'a' }]))).toEqual(['W1@2', 'W3@2'])
    expect(violations(log(created('a', 0), ['schedule/fired', { scheduleId: 'a', due: 0 }], splice('m', 'b')))).toEqual(['W3@2'])
    expect(violations(log(created('a', 0), ['schedule/fired', { scheduleId: 'a', due: 0 }], splice('m', 'a', 'next-step')))).toEqual(['W3@2'])
    expect(violations(log(created('a', 0), splice('m', 'a')))).toEqual(['W3@1'])
    expect(violations(log(created('a', 0, { whenBusy: 'drop' }), ['schedule/fired', { scheduleId: 'a', due: 0, dropped: true }]))).toEqual(['W3@1'])
  })

  it('W3 closers: repair of a log cut right after a firing delivers its message; fork at that seq too; the fork keeps pending schedules', () => {
    const cut = log(created('a', 1000), created('b', 9000, { every: 10 }), ['schedule/fired', { scheduleId: 'a', due: 1000 }, 1500])
    expect(violations(cut)).toEqual([])
    const r = repairEvents({ header: HEADER, events: cut })
    expect(r.closers.map((e) => [e.type, e.data])).toEqual([
      ['agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [{ id: 'a-2', role: 'user', content: text('wake'), source: { kind: 'schedule', scheduleId: 'a' } }] }],
    ])
    expect(violations(r.log.events)).toEqual([])
    const f = fork({ header: HEADER, events: cut }, 2)
    expect(violations(f.events)).toEqual([])
    // the fork's own log still holds schedule b (pending) and delivered a's message, canceled with the inbox
    expect(f.closers.map((e) => e.type)).toEqual(['agent/inbox/spliced', 'agent/inbox/spliced', 'session/end-seed'])
    const st = schedulesReducer.initial()
    for (const e of f.events) schedulesReducer.apply(st, e)
    expect(st.pending.map((p) => [p.scheduleId, p.due])).toEqual([['b', 9000]])
  })
})
