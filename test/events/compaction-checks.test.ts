/**
 * The compaction checks of the LogChecker, one condition at a time and with their messages (the
 * messages name the ids and seqs a user needs to find the fault; issue 15 mutation survivors of
 * events/invariants/compaction.ts). L14 brackets, L15 prune then its replacement.
 */
import { describe, expect, it } from 'vitest'
import type { EventDraft, LogEvent } from '../../events/envelope.js'
import { LogChecker } from '../../events/invariants/checker.js'
import type { Violation } from '../../events/invariants/types.js'
import { LogWriter, text, toolBlock, um } from './log-writer.js'

function violations(w: LogWriter, draft: EventDraft): Violation[] {
  const c = new LogChecker()
  for (const e of w.session.events) c.apply(e)
  return c.check({ seq: w.next, time: 0, ...draft } as LogEvent)
}
const only = (v: Violation[], inv: string) => v.filter((x) => x.invariant === inv).map((x) => x.message)

function idle(): { w: LogWriter; first: number } {
  const w = new LogWriter()
  w.simpleTurn('m1')
  return { w, first: w.session.events.find((e) => e.type === 'user/message')!.seq }
}
const start = (id: string): EventDraft => ({ type: 'compaction/start', data: { compactionId: id, turn: 1 } })
const end = (id: string): EventDraft => ({ type: 'compaction/end', data: { compactionId: id } })
const summary = (id: string, seq: number): EventDraft => ({ type: 'compaction/summary', data: { compactionId: id, summary: 's', shadowedSeqs: [seq] } })
const replacing = (seq: number, kind: 'compaction' | 'user' = 'compaction'): EventDraft => ({ type: 'user/message', data: { message: um(`s${seq}`, 's', { kind }) }, surfaceOp: { op: 'replace', start: seq, end: seq }, sourceEventSeqs: [seq] })

describe('L14 brackets, with messages', () => {
  it('L14: nested start, summary or end with none open or another id, end without summary', () => {
    const { w, first } = idle()
    expect(only(violations(w, end('k1')), 'L14')).toEqual(['compaction/end k1 with no compaction open'])
    expect(only(violations(w, summary('k1', first)), 'L14')).toEqual(['compaction/summary k1 with no compaction open'])
    w.append(start('k1'))
    expect(only(violations(w, start('k2')), 'L14')).toEqual(['compaction/start k2 while compaction k1 is open'])
    expect(only(violations(w, end('k2')), 'L14')).toEqual(['compaction/end k2, but compaction k1 is open'])
    expect(only(violations(w, summary('k2', first)), 'L14')).toEqual(['compaction/summary k2, but compaction k1 is open'])
    expect(only(violations(w, end('k1')), 'L14')).toEqual(['compaction k1 ended without error and without a summary'])
    expect(only(violations(w, { type: 'turn/start', data: { turn: 2 } }), 'L14')).toEqual(['turn/start while compaction k1 is open'])
  })

  it('L14: a summary naming another bracket does not count as this bracket summary', () => {
    const { w, first } = idle()
    w.append(start('k1'))
    const c = new LogChecker()
    for (const e of w.session.events) c.apply(e)
    const wrong = { seq: w.next, time: 0, ...summary('k2', first) } as LogEvent
    c.apply(wrong)
    c.apply({ seq: w.next + 1, time: 0, ...replacing(first) } as LogEvent)
    const v = c.check({ seq: w.next + 2, time: 0, ...end('k1') } as LogEvent)
    expect(only(v, 'L14')).toEqual(['compaction k1 ended without error and without a summary'])
  })

  it('L14: after a summary, a user/message that is not a compaction replacement is named in the message', () => {
    const { w, first } = idle()
    w.append(start('k1'))
    w.append(summary('k1', first))
    const msg = 'compaction/summary of k1 is not followed directly by its replacing user/message (source compaction, surfaceOp replace), but by user/message'
    expect(only(violations(w, replacing(first, 'user')), 'L14')).toEqual([msg])
    const { surfaceOp: _s, ...noOp } = replacing(first)
    expect(only(violations(w, noOp as EventDraft), 'L14')).toContain(msg)
    expect(only(violations(w, end('k1')), 'L14')[0]).toContain('but by compaction/end')
    expect(only(violations(w, replacing(first)), 'L14')).toEqual([])
  })
})

describe('L15 prune, with messages', () => {
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
  const result = (callId: string, start: number, end: number, op: 'replace' | 'append' = 'replace'): EventDraft => ({
    type: 'tool/result',
    data: { turn: 1, step: 1, callId, message: { role: 'tool', callId, content: [text('short')] } },
    surfaceOp: op === 'append' ? 'append' : { op: 'replace', start, end },
    sourceEventSeqs: [start],
  })

  it('L15: what follows a prune must replace exactly the shadowed result, with its callId', () => {
    const { w, ra, rb } = pruned()
    expect(only(violations(w, { type: 'step/start', data: { turn: 1, step: 2 } }), 'L15')).toEqual(['compaction/prune of a is not followed directly by a replacing tool/result, but by step/start'])
    expect(only(violations(w, result('a', ra, ra, 'append')), 'L15')).toEqual(['compaction/prune of a is not followed directly by a replacing tool/result, but by tool/result'])
    expect(only(violations(w, result('a', ra, rb)), 'L15')).toEqual([`the tool/result after compaction/prune replaces ${ra}..${rb}, not exactly ${ra}`])
    expect(only(violations(w, result('b', ra, ra)), 'L15')).toEqual(['the tool/result after compaction/prune of a has callId b'])
    expect(only(violations(w, result('a', ra, ra)), 'L15')).toEqual([])
  })
})
