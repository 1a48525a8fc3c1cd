/**
 * The transcript's approvals, parked time and children (docs/spec/lifecycle.md §9, §10; reducers/transcript-waits.ts),
 * on logs the real agent wrote: each request with its decision (who, when, edited arguments, reason),
 * one parked span from the first `step/parked` to the event that ended the wait (re-parkings after a
 * decision belong to it), an open span while the log stands parked, `child/spawned` in its step.
 * Both runners agree (P1).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { createLiveProjection, foldEvents, type TranscriptStep, type TranscriptState } from '../../reducers/index.js'
import { approvalSession, CHILD_ID, familySession, PARKED_MS } from '../fixtures/view-logs.js'

function steps(t: TranscriptState): TranscriptStep[] {
  const out: TranscriptStep[] = []
  for (const i of t.items) if (i.kind === 'turn') for (const s of i.items) if (s.kind === 'step') out.push(s)
  return out
}

const seqOf = (events: readonly LogEvent[], type: string, n = 0): number => events.filter((e) => e.type === type)[n]!.seq

describe('transcript: approvals, parked time, children (docs/spec/lifecycle.md §9, §10)', () => {
  it('L17/L18: requests with decisions (who, when, edited arguments, reason); one parked span through the re-parking; an open one at the end', async () => {
    const { events } = await approvalSession()
    const t = foldEvents(events).transcript
    const [s1, s2, s3] = steps(t)
    expect(s1!.approvals).toEqual([
      {
        kind: 'approval', seq: seqOf(events, 'tool/approval-requested', 0), time: events[seqOf(events, 'tool/approval-requested', 0)]!.time,
        approvalId: 'm2', callId: 'c2', name: 'rm', arguments: '{"path":"b"}',
        decision: { seq: seqOf(events, 'tool/approval-decided', 1), time: events[seqOf(events, 'tool/approval-decided', 1)]!.time, kind: 'deny', by: { kind: 'user', id: 'bob' }, reason: 'keep b' },
      },
      {
        kind: 'approval', seq: seqOf(events, 'tool/approval-requested', 1), time: events[seqOf(events, 'tool/approval-requested', 1)]!.time,
        approvalId: 'm3', callId: 'c3', name: 'rm', arguments: '{"path":"c"}',
        decision: { seq: seqOf(events, 'tool/approval-decided', 0), time: events[seqOf(events, 'tool/approval-decided', 0)]!.time, kind: 'approve', by: { kind: 'user', id: 'ann' }, arguments: '{"path":"c2"}' },
      },
    ])
    // one wait: from the first step/parked to the tool/call after the last decision (the re-parking is inside it)
    const firstParked = seqOf(events, 'step/parked', 0)
    const ended = events.findIndex((e) => e.type === 'tool/call' && e.seq > seqOf(events, 'tool/approval-decided', 1))
    expect(s1!.parked).toEqual([{ kind: 'parked', seq: firstParked, time: events[firstParked]!.time, approvals: ['m2', 'm3'], end: { seq: ended, time: events[ended]!.time } }])
    expect(s1!.parked![0]!.end!.time - s1!.parked![0]!.time).toBeGreaterThanOrEqual(PARKED_MS)
    // a step that asked nothing has none of the three members (its shape is unchanged)
    expect(Object.keys(s2!).sort()).toEqual(['end', 'headerSeq', 'kind', 'messages', 'seq', 'step', 'time', 'turn', 'usage'])
    // the log ends parked: the request is open, the wait has no end
    expect(s3!.approvals).toMatchObject([{ approvalId: 'm6', callId: 'c4', name: 'rm', decision: null }])
    expect(s3!.parked).toMatchObject([{ approvals: ['m6'], end: null }])
  })

  it('P1: the live projection and the bulk fold give the same transcript; every prefix folds', async () => {
    const { events } = await approvalSession()
    const live = createLiveProjection()
    for (const e of events) live.apply(e)
    expect(JSON.parse(JSON.stringify(live.state.transcript))).toEqual(JSON.parse(JSON.stringify(foldEvents(events).transcript)))
    for (let n = 0; n <= events.length; n += 3) expect(() => foldEvents(events.slice(0, n))).not.toThrow()
  })

  it('L19: child/spawned stands in its step with the call and the child id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnlog-tw-'))
    try {
      const { parent } = await familySession(dir)
      const [s1] = steps(foldEvents(parent).transcript)
      const at = seqOf(parent, 'child/spawned')
      expect(s1!.children).toEqual([{ kind: 'child', seq: at, time: parent[at]!.time, callId: 'c1', child: CHILD_ID }])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
