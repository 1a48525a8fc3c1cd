/**
 * L14 (the compaction bracket) and L15 (a prune then its replacing tool/result), from
 * events/invariants/compaction.ts, with the full verdict of each case (invariant, seq, message:
 * no other rule fires), the bracket's state across brackets, and best-effort application.
 */
import { describe, expect, it } from 'vitest'
import type { EventDraft } from '../../events/envelope.js'
import { LogWriter, text, toolBlock, um } from './log-writer.js'
import { checkerAfter, expectAfter, expectClean, expectExactly, forced } from './exact.js'

const start = (id: string, turn = 1): EventDraft => ({ type: 'compaction/start', data: { compactionId: id, turn } })
const end = (id: string, error = false): EventDraft => ({ type: 'compaction/end', data: error ? { compactionId: id, error: { code: 'X', message: 'x' } } : { compactionId: id } })
const summary = (id: string, seq: number): EventDraft => ({ type: 'compaction/summary', data: { compactionId: id, summary: 's', shadowedSeqs: [seq] } })
let n = 0
const replacing = (seq: number, kind: 'compaction' | 'user' = 'compaction'): EventDraft => ({
  type: 'user/message', data: { message: um(`s${++n}`, 's', { kind }) }, surfaceOp: { op: 'replace', start: seq, end: seq }, sourceEventSeqs: [seq],
})

/** One finished turn; the seq of its user/message (the surface head). */
function idle(): { w: LogWriter; first: number } {
  const w = new LogWriter()
  w.simpleTurn('m1')
  return { w, first: w.session.events.find((e) => e.type === 'user/message')!.seq }
}

describe('L14 the bracket, full verdicts', () => {
  it('L14: a turn/start or turn/end while a bracket is open', () => {
    const { w } = idle()
    w.append(start('k1'))
    expectExactly(w, { type: 'turn/start', data: { turn: 2 } }, [['L14', 'turn/start while compaction k1 is open']])
    const events = forced(w.session.events, { type: 'turn/start', data: { turn: 2 } })
    expectAfter(events, { type: 'turn/end', data: { turn: 2, reason: { kind: 'completed' } } }, [['L14', 'turn/end while compaction k1 is open']])
  })

  it('L14: a bracket closed by its end lets the next one start, and turns run again', () => {
    const { w, first } = idle()
    w.append(start('k1'))
    w.append(summary('k1', first))
    const r = w.append(replacing(first)).seq
    w.append(end('k1'))
    expectClean(w, start('k2'))
    expectClean(w, { type: 'turn/start', data: { turn: 2 } })
    w.append(start('k2'))
    expectExactly(w, start('k3'), [['L14', 'compaction/start k3 while compaction k2 is open']])
    // the new bracket has no summary yet
    expectExactly(w, end('k2'), [['L14', 'compaction k2 ended without error and without a summary']])
    expectClean(w, end('k2', true))
    expectClean(w, summary('k2', r))
  })

  it('L14: a failed compaction (end with error) needs no summary; a summary and an error is fine too', () => {
    const { w, first } = idle()
    w.append(start('k1'))
    expectClean(w, end('k1', true))
    w.append(summary('k1', first))
    w.append(replacing(first))
    expectClean(w, end('k1', true))
    expectClean(w, end('k1'))
  })

  it('L14: a summary naming another bracket than the open one', () => {
    const { w, first } = idle()
    w.append(start('k1'))
    expectExactly(w, summary('k2', first), [['L14', 'compaction/summary k2, but compaction k1 is open']])
    expectClean(w, summary('k1', first))
  })

  it('L14: a summary naming another bracket (applied anyway) does not count for the open one', () => {
    const { w, first } = idle()
    w.append(start('k1'))
    const events = forced(w.session.events, summary('k2', first), replacing(first))
    expectAfter(events, end('k1'), [['L14', 'compaction k1 ended without error and without a summary']])
  })

  it('L14: a second summary in one bracket', () => {
    const { w, first } = idle()
    w.append(start('k1'))
    w.append(summary('k1', first))
    const r = w.append(replacing(first)).seq
    expectExactly(w, summary('k1', r), [['L14', 'a second compaction/summary in compaction k1']])
  })

  it('L14: a summary with no bracket open (applied anyway) still expects its replacing message', () => {
    const { w, first } = idle()
    expectExactly(w, summary('k1', first), [['L14', 'compaction/summary k1 with no compaction open']])
    const events = forced(w.session.events, summary('k1', first))
    expectAfter(events, replacing(first), [])
    expectAfter(events, start('k1'), [['L14', 'compaction/summary of k1 is not followed directly by its replacing user/message (source compaction, surfaceOp replace), but by compaction/start']])
  })

  it('L14: an end naming another bracket (applied anyway) closes the open one', () => {
    const { w } = idle()
    w.append(start('k1'))
    expectExactly(w, end('k2'), [['L14', 'compaction/end k2, but compaction k1 is open']])
    const events = forced(w.session.events, end('k2'))
    expectAfter(events, start('k3'), [])
    expectAfter(events, end('k1', true), [['L14', 'compaction/end k1 with no compaction open']])
  })

  it('L14: the event after a summary, whatever its type, must be the replacing compaction message', () => {
    const { w, first } = idle()
    w.append(start('k1'))
    w.append(summary('k1', first))
    const msg = (type: string) => `compaction/summary of k1 is not followed directly by its replacing user/message (source compaction, surfaceOp replace), but by ${type}`
    expectExactly(w, end('k1'), [['L14', msg('compaction/end')]])
    expectExactly(w, end('k1', true), [['L14', msg('compaction/end')]])
    expectExactly(w, replacing(first, 'user'), [['L14', msg('user/message')]])
    const { surfaceOp: _op, ...bare } = replacing(first)
    expectExactly(w, bare as EventDraft, [['L8', 'user/message without surfaceOp'], ['L14', msg('user/message')]])
    expectExactly(w, { ...replacing(first), surfaceOp: 'append', sourceEventSeqs: undefined } as EventDraft, [['L4', 'appended user/message outside an open step'], ['L14', msg('user/message')]])
    const a1 = w.session.events.find((e) => e.type === 'assistant/message')!.seq
    expectExactly(w, {
      type: 'assistant/message',
      data: { turn: 1, step: 1, message: { role: 'assistant', content: [text('short')] }, finish: 'stop', usage: { inputTokens: 1, outputTokens: 1 } },
      surfaceOp: { op: 'replace', start: a1, end: a1 },
      sourceEventSeqs: [a1],
    }, [['L14', msg('assistant/message')]])
    expectClean(w, replacing(first))
  })

  it('L14: the expectation lasts one event only', () => {
    const { w, first } = idle()
    w.append(start('k1'))
    w.append(summary('k1', first))
    const events = forced(w.session.events, end('k1'), start('k2'))
    expectAfter(events, end('k2', true), [])
  })
})

describe('L15 prune, full verdicts', () => {
  function pruned(): { w: LogWriter; ra: number; rb: number } {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.stream([toolBlock('a'), toolBlock('b')], 'tool-calls')
    w.message([toolBlock('a'), toolBlock('b')], 'tool-calls')
    w.call('a')
    w.call('b')
    const ra = w.result('a', 'x'.repeat(40))
    const rb = w.result('b', 'y'.repeat(40))
    w.stepEnd({ kind: 'tools' })
    w.append({ type: 'compaction/prune', data: { callId: 'a', shadowedSeq: ra, originalChars: 40 } })
    return { w, ra, rb }
  }
  const turnEnd: EventDraft = { type: 'turn/end', data: { turn: 1, reason: { kind: 'blocked' } } }
  const result = (callId: string, s: number, e: number, cites = [s]): EventDraft => ({
    type: 'tool/result',
    data: { turn: 1, step: 1, callId, message: { role: 'tool', callId, content: [text('short')] } },
    surfaceOp: { op: 'replace', start: s, end: e },
    sourceEventSeqs: cites,
  })

  it('L15: not followed by a tool/result', () => {
    const { w } = pruned()
    expectExactly(w, turnEnd, [['L15', 'compaction/prune of a is not followed directly by a replacing tool/result, but by turn/end']])
  })

  it('L15: followed by an appended tool/result', () => {
    const { w, ra } = pruned()
    expectExactly(w, { ...result('a', ra, ra), surfaceOp: 'append' }, [
      ['L4', 'appended tool/result 1.1 outside an open step'],
      ['L15', 'compaction/prune of a is not followed directly by a replacing tool/result, but by tool/result'],
    ])
  })

  it('L15: followed by another replacing type, or a tool/result without surfaceOp', () => {
    const { w, ra } = pruned()
    expectExactly(w, { type: 'user/message', data: { message: um('sx', 's', { kind: 'compaction' }) }, surfaceOp: { op: 'replace', start: ra, end: ra }, sourceEventSeqs: [ra] },
      [['L15', 'compaction/prune of a is not followed directly by a replacing tool/result, but by user/message']])
    const { surfaceOp: _op, ...bare } = result('a', ra, ra)
    expectExactly(w, bare as EventDraft, [
      ['L8', 'tool/result without surfaceOp'],
      ['L15', 'compaction/prune of a is not followed directly by a replacing tool/result, but by tool/result'],
    ])
  })

  it('L15: followed by a replacement of another seq (start or end)', () => {
    const { w, ra, rb } = pruned()
    const u = w.session.events.find((e) => e.type === 'user/message')!.seq
    const all = w.session.events.filter((e) => e.surfaceOp !== undefined && e.seq <= ra).map((e) => e.seq)
    expectExactly(w, result('a', u, ra, all), [
      ['L8', `a tool/result replacement hides a range (${u}..${ra}), not exactly one tool/result`],
      ['L15', `the tool/result after compaction/prune replaces ${u}..${ra}, not exactly ${ra}`],
    ])
    expectExactly(w, result('b', rb, rb), [['L15', `the tool/result after compaction/prune replaces ${rb}..${rb}, not exactly ${ra}`]])
    expectExactly(w, result('a', ra, rb, [ra, rb]), [
      ['L8', `a tool/result replacement hides a range (${ra}..${rb}), not exactly one tool/result`],
      ['L15', `the tool/result after compaction/prune replaces ${ra}..${rb}, not exactly ${ra}`],
    ])
  })

  it('L15: followed by the replacement of the shadowed seq with another callId (L8 too)', () => {
    const { w, ra } = pruned()
    expectExactly(w, result('b', ra, ra), [
      ['L8', "a tool/result replacement (1.1 b) does not keep the hidden result's turn, step and callId (1.1 a)"],
      ['L15', 'the tool/result after compaction/prune of a has callId b'],
    ])
    expectClean(w, result('a', ra, ra))
  })

  it('L15: the expectation lasts one event only, and a second prune sets a new one', () => {
    const { w, ra, rb } = pruned()
    w.append(result('a', ra, ra))
    expectClean(w, turnEnd)
    w.append({ type: 'compaction/prune', data: { callId: 'b', shadowedSeq: rb, originalChars: 40 } })
    expectExactly(w, turnEnd, [['L15', 'compaction/prune of b is not followed directly by a replacing tool/result, but by turn/end']])
    expectClean(w, result('b', rb, rb))
  })
})

describe('L14, L15 the checker state', () => {
  it('L14: the surface after a compaction shows the summary in place of what it hides', () => {
    const { w, first } = idle()
    w.append(start('k1'))
    w.append(summary('k1', first))
    const r = w.append(replacing(first)).seq
    w.append(end('k1'))
    const c = checkerAfter(w.session.events)
    expect(c.surfaceSeqs()[0]).toBe(r)
    expect(c.generation).toBe(1)
  })
})
