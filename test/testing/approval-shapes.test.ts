/**
 * The census's approval shapes (testing/fuzz/approval-shapes.ts) on hand-made logs: each detector
 * fires on the shape it names and not on its near misses, so the reach assertions of
 * fuzz-approvals.test.ts cannot pass on a detector that counts everything.
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { approvalShapes } from '../../testing/fuzz/approval-shapes.js'

type E = [type: string, data: Record<string, unknown>]
const log = (...es: E[]): LogEvent[] => es.map(([type, data], seq) => ({ seq, type, data }) as unknown as LogEvent)
const call = (callId: string): E => ['tool/call', { turn: 1, step: 1, callId, name: 'fuzz_approval' }]
const result = (callId: string, code?: string): E => ['tool/result', { turn: 1, step: 1, callId, ...(code ? { error: { code } } : {}) }]
const request = (callId: string): E => ['tool/approval-requested', { turn: 1, step: 1, callId, approvalId: `a-${callId}` }]
const decided = (callId: string, by: string): E =>
  ['tool/approval-decided', { turn: 1, step: 1, callId, approvalId: `a-${callId}`, decision: { kind: by === 'user' ? 'approve' : 'deny' }, by: { kind: by } }]
const start: E = ['turn/start', { turn: 1 }]
const end: E = ['turn/end', { turn: 1, reason: { kind: 'aborted' } }]
const abandoned = { error: { code: 'ABANDONED' } }

describe('approval shapes of a fuzz run (L17 and the round-14 defects)', () => {
  it('L17 (defect 1 shape): an asked call open while a sibling runs, denied by a cancel, then the grace period runs out', () => {
    // c1 started (tool/call), c2 asked after its tool/call while c1 has no result yet
    const events = log(start, call('c1'), call('c2'), request('c2'), decided('c2', 'canceled'), result('c1', 'ABORTED'), result('c2', 'ABORTED_BEFORE_DISPATCH'), end)
    const shapes = approvalShapes(events, [{ turn: 1, at: 4 }], [{ error: abandoned.error, at: 5 }])
    expect([...shapes].sort()).toEqual(['ask denied by cancel or steer', 'ask open while a sibling runs', 'grace ran out after an ask was denied'])
  })

  it('L5, L17 (defect 2 shape): an ask that arrives after its turn was cancelled', () => {
    const events = log(start, call('c1'), request('c1'), decided('c1', 'canceled'), result('c1', 'ABORTED_BEFORE_DISPATCH'), end)
    expect([...approvalShapes(events, [{ turn: 1, at: 2 }], [])].sort()).toEqual(['ask after cancel', 'ask denied by cancel or steer'])
  })

  it('near misses count nothing: a needsApproval request (before any tool/call), an approve, a cancel after the ask, an abandonment before the denial', () => {
    // needsApproval: requested before the step's tool/calls, denied by cancel: not an ask
    expect(approvalShapes(log(start, request('c1'), decided('c1', 'canceled'), call('c1'), result('c1', 'ABORTED_BEFORE_DISPATCH'), end), [{ turn: 1, at: 2 }], [{ error: abandoned.error, at: 3 }]).size).toBe(0)
    // an ask approved by a person, its sibling already committed; the cancel came after the request
    expect(approvalShapes(log(start, call('c1'), result('c1'), call('c2'), request('c2'), decided('c2', 'user'), result('c2'), end), [{ turn: 1, at: 5 }], []).size).toBe(0)
    // denied by a cancel, but the only abandonment was before the denial
    const shapes = approvalShapes(log(start, call('c1'), request('c1'), decided('c1', 'canceled'), result('c1', 'ABORTED_BEFORE_DISPATCH'), end), [{ turn: 1, at: 3 }], [{ error: abandoned.error, at: 2 }])
    expect([...shapes]).toEqual(['ask denied by cancel or steer'])
  })
})
