/**
 * The LogChecker itself (events/invariants/checker.ts): L1 by position with its exact message, the
 * order of one event's violations (by invariant number, whichever rule group found them first),
 * extension events judged by L1 only and invisible to the state of L2–L16, and `skip`.
 */
import { describe, expect, it } from 'vitest'
import type { EventDraft, LogEvent } from '../../events/envelope.js'
import { LogChecker } from '../../events/invariants/checker.js'
import { LogWriter, fail, um } from './log-writer.js'
import { at, checkerAfter, expectAfter, expectExactly } from './exact.js'

const ext = (seq: number, extra: Record<string, unknown> = {}): LogEvent =>
  ({ seq, time: 0, type: 'acme/note', data: { note: 'hi' }, ignorable: true, ...extra }) as unknown as LogEvent

describe('L1 by position, exact verdicts', () => {
  it('L1: an event whose seq is not its position names both', () => {
    const c = new LogChecker()
    const e = at(3, { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [um('a')] } })
    expect(c.check(e)).toEqual([{ invariant: 'L1', seq: 0, message: 'seq 3 at position 0' }])
    expect(c.check({ ...e, seq: 0 })).toEqual([])
  })

  it('L1: skip counts a position (an event that failed validation)', () => {
    const c = new LogChecker()
    c.skip()
    const e = at(1, { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [um('a')] } })
    expect(c.position).toBe(1)
    expect(c.check(e)).toEqual([])
    expect(c.check({ ...e, seq: 0 })).toEqual([{ invariant: 'L1', seq: 1, message: 'seq 0 at position 1' }])
  })

  it('L1: an extension event is judged by L1 only', () => {
    const c = new LogChecker()
    expect(c.check(ext(0, { sourceEventSeqs: [5], surfaceOp: 'append' }))).toEqual([])
    expect(c.check(ext(2))).toEqual([{ invariant: 'L1', seq: 0, message: 'seq 2 at position 0' }])
  })
})

describe('L1–L16 the order of one event\'s violations', () => {
  it('L4, L8, L16: found by structure (L4, L16) and surface (L8) groups, reported by number', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    const bad: EventDraft = { type: 'llm/retry', data: { turn: 1, step: 1, attempt: 2, delayMs: 0, failure: fail('SERVER') }, surfaceOp: 'append' }
    expectExactly(w, bad, [
      ['L4', 'llm/retry with no turn open'],
      ['L8', 'surfaceOp on llm/retry, which is not a surface type'],
      ['L16', "llm/retry attempt 2: the failure chain's next attempt is 1"],
    ])
  })

  it('L1, L2, L8, L13, L14: a wrong seq first, then by number', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    w.append({ type: 'compaction/start', data: { compactionId: 'k', turn: 1 } })
    const c = checkerAfter(w.session.events)
    const e = at(w.next + 1, { type: 'turn/start', data: { turn: 3, cause: { kind: 'retry', of: 1 } }, sourceEventSeqs: [0] })
    expect(c.check(e).map((v) => [v.invariant, v.seq])).toEqual([['L1', w.next], ['L2', w.next], ['L8', w.next], ['L13', w.next], ['L14', w.next]])
  })
})

describe('the open turn and step', () => {
  it('L2, L3: openTurn and openStep follow the turn and step boundaries', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    const state = () => { const c = checkerAfter(w.session.events); return [c.openTurn, c.openStep] }
    expect(state()).toEqual([null, null])
    w.turnStart()
    expect(state()).toEqual([1, null])
    w.stepStart(w.claim())
    expect(state()).toEqual([1, 1])
    w.stream([{ type: 'text', text: 'a' }], 'stop')
    w.message([{ type: 'text', text: 'a' }], 'stop')
    w.stepEnd({ kind: 'stop' })
    expect(state()).toEqual([1, null])
    w.turnEnd()
    expect(state()).toEqual([null, null])
  })
})

describe('extension events leave the state of L2–L16 alone', () => {
  it('L13: an extension event between a failed turn/end and its retry turn does not stand between them', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.failedStep('SERVER', w.claim())
    w.turnEnd({ kind: 'error', failure: fail('SERVER') })
    const events = [...w.session.events, ext(w.next)]
    expectAfter(events, { type: 'turn/start', data: { turn: 2, cause: { kind: 'retry', of: 1 } } }, [])
  })

  it('L15: an extension event between a prune and its replacement does not consume the expectation', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    const u = w.session.events.find((e) => e.type === 'user/message')!.seq
    w.append({ type: 'compaction/prune', data: { callId: 'x', shadowedSeq: u, originalChars: 1 } })
    const events = [...w.session.events, ext(w.next)]
    expectAfter(events, { type: 'turn/start', data: { turn: 2 } }, [['L15', 'compaction/prune of x is not followed directly by a replacing tool/result, but by turn/start']])
  })

  it('L8: an extension event with surface fields does not enter the surface', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    const before = checkerAfter(w.session.events).surfaceSeqs()
    const c = checkerAfter([...w.session.events, ext(w.next, { surfaceOp: 'append', sourceEventSeqs: [0] })])
    expect(c.surfaceSeqs()).toEqual(before)
    expect(c.position).toBe(w.next + 1)
  })
})
