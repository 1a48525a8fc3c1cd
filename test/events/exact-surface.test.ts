/**
 * L8, the surface rules (events/invariants/surface.ts), one rule at a time, with the exact verdicts
 * (invariant, seq, message), and the surface the checker keeps (seqs in order, the replacement
 * generation) after appends and replacements at the head, middle and tail.
 */
import { describe, expect, it } from 'vitest'
import type { EventDraft } from '../../events/envelope.js'
import { LogWriter, text, toolBlock, um } from './log-writer.js'
import { checkerAfter, expectAfter, expectClean, expectExactly, forced } from './exact.js'

/** Two simple turns: the surface is [u1, a1, u2, a2]. */
function twoTurns(): { w: LogWriter; s: number[] } {
  const w = new LogWriter()
  w.simpleTurn('m1')
  w.simpleTurn('m2')
  return { w, s: checkerAfter(w.session.events).surfaceSeqs() }
}
let n = 0
const summary = (start: number, end: number, cites: number[] | undefined): EventDraft => {
  const d: EventDraft = { type: 'user/message', data: { message: um(`sum${++n}`, 'summary', { kind: 'compaction' }) }, surfaceOp: { op: 'replace', start, end } }
  return cites === undefined ? d : { ...d, sourceEventSeqs: cites }
}
const range = (s: number[], from: number, to: number): number[] => s.slice(s.indexOf(from), s.indexOf(to) + 1)

/** Step 1 of turn 1 with calls a and b answered and ended; their results' seqs. */
function answered(): { w: LogWriter; ra: number; rb: number; u: number } {
  const w = new LogWriter()
  w.send(um('m1'))
  w.turnStart()
  w.stepStart(w.claim())
  w.stream([toolBlock('a'), toolBlock('b')], 'tool-calls')
  w.message([toolBlock('a'), toolBlock('b')], 'tool-calls')
  w.call('a')
  w.call('b')
  const ra = w.result('a')
  const rb = w.result('b')
  w.stepEnd({ kind: 'tools' })
  return { w, ra, rb, u: w.session.events.find((e) => e.type === 'user/message')!.seq }
}
const toolReplace = (callId: string, start: number, end: number, turn = 1, step = 1): EventDraft => ({
  type: 'tool/result',
  data: { turn, step, callId, message: { role: 'tool', callId, content: [text('short')] } },
  surfaceOp: { op: 'replace', start, end },
  sourceEventSeqs: start === end ? [start] : [start, end],
})

describe('L8 which events carry surface fields, exact verdicts', () => {
  it('L8: surfaceOp or sourceEventSeqs on a type that is not a surface type', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    expectExactly(w, { type: 'turn/start', data: { turn: 2 }, surfaceOp: 'append' }, [['L8', 'surfaceOp on turn/start, which is not a surface type']])
    expectExactly(w, { type: 'turn/start', data: { turn: 2 }, sourceEventSeqs: [1] }, [['L8', 'sourceEventSeqs on turn/start, which is not a surface type']])
    expectExactly(w, { type: 'turn/start', data: { turn: 2 }, surfaceOp: 'append', sourceEventSeqs: [1] }, [
      ['L8', 'surfaceOp on turn/start, which is not a surface type'],
      ['L8', 'sourceEventSeqs on turn/start, which is not a surface type'],
    ])
    expectClean(w, { type: 'turn/start', data: { turn: 2 } })
  })

  it('L8: a surface type without surfaceOp (and it does not enter the surface)', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    const bare: EventDraft = { type: 'user/message', data: { message: um('m9') } }
    expectExactly(w, bare, [['L8', 'user/message without surfaceOp']])
    expectExactly(w, { ...bare, sourceEventSeqs: [0, 0] }, [['L8', 'user/message without surfaceOp'], ['L8', 'sourceEventSeqs cites seq 0 twice']])
    const before = checkerAfter(w.session.events).surfaceSeqs()
    expect(checkerAfter(forced(w.session.events, bare)).surfaceSeqs()).toEqual(before)
  })
})

describe('L8 sourceEventSeqs, exact verdicts', () => {
  it('L8: empty sourceEventSeqs on a user/message or tool/result; an assistant/message may cite no chunk', () => {
    const { w, s } = twoTurns()
    expectExactly(w, summary(s[0]!, s[0]!, []), [['L8', 'empty sourceEventSeqs on user/message'], ['L8', `replace hides seq(s) ${s[0]} that sourceEventSeqs does not list`]])
    const a = answered()
    expectExactly(a.w, { ...toolReplace('a', a.ra, a.ra), sourceEventSeqs: [] }, [['L8', 'empty sourceEventSeqs on tool/result'], ['L8', `replace hides seq(s) ${a.ra} that sourceEventSeqs does not list`]])
    const m = new LogWriter()
    m.send(um('m1'))
    m.turnStart()
    m.stepStart(m.claim())
    expectClean(m, { type: 'assistant/message', data: { turn: 1, step: 1, message: { role: 'assistant', content: [] }, finish: 'stop', interrupted: true }, surfaceOp: 'append', sourceEventSeqs: [] })
  })

  it('L8: a citation of the event itself or of a later seq (reported once)', () => {
    const { w, s } = twoTurns()
    const at = w.next
    expectExactly(w, summary(s[0]!, s[0]!, [s[0]!, at]), [['L8', `sourceEventSeqs cites seq ${at}, which is not earlier than ${at}`]])
    expectExactly(w, summary(s[0]!, s[0]!, [at + 3, s[0]!, at + 1]), [['L8', `sourceEventSeqs cites seq ${at + 3}, which is not earlier than ${at}`]])
    expectClean(w, summary(s[0]!, s[0]!, [s[0]!, at - 1]))
  })

  it('L8: a seq cited twice (reported once)', () => {
    const { w, s } = twoTurns()
    expectExactly(w, summary(s[0]!, s[0]!, [s[0]!, 2, s[0]!, 2]), [['L8', `sourceEventSeqs cites seq ${s[0]} twice`]])
  })
})

describe('L8 replace ranges, exact verdicts', () => {
  it('L8: a replace start or end that is not a current surface seq', () => {
    const { w, s } = twoTurns()
    expectExactly(w, summary(0, s[1]!, [0, s[0]!, s[1]!]), [['L8', 'replace start 0 is not a current surface seq']])
    expectExactly(w, summary(s[1]!, 1, [s[1]!, 1]), [['L8', 'replace end 1 is not a current surface seq']])
    expectExactly(w, summary(0, 1, [0, 1]), [['L8', 'replace start 0 is not a current surface seq'], ['L8', 'replace end 1 is not a current surface seq']])
  })

  it('L8: a replace whose start comes after its end (nothing else judged)', () => {
    const { w, s } = twoTurns()
    expectExactly(w, summary(s[2]!, s[0]!, []), [['L8', 'empty sourceEventSeqs on user/message'], ['L8', `replace start ${s[2]} comes after end ${s[0]} on the surface`]])
    expectClean(w, summary(s[2]!, s[2]!, [s[2]!]))
  })

  it('L8: a replace must cite every seq it hides; the message lists the missing ones in surface order', () => {
    const { w, s } = twoTurns()
    expectExactly(w, summary(s[0]!, s[3]!, [s[3]!, s[1]!]), [['L8', `replace hides seq(s) ${s[0]}, ${s[2]} that sourceEventSeqs does not list`]])
    expectExactly(w, summary(s[0]!, s[2]!, undefined), [['L8', `replace hides seq(s) ${s[0]}, ${s[1]}, ${s[2]} that sourceEventSeqs does not list`]])
    // citing more than the range (an earlier, already hidden seq) is fine
    expectClean(w, summary(s[1]!, s[2]!, [0, s[1]!, s[2]!]))
  })
})

describe('L8 tool/result replacements, exact verdicts', () => {
  it('L8: a tool/result replacement must hide exactly one node', () => {
    const { w, ra, rb } = answered()
    expectExactly(w, toolReplace('a', ra, rb), [['L8', `a tool/result replacement hides a range (${ra}..${rb}), not exactly one tool/result`]])
  })

  it('L8: the hidden node must be a tool/result', () => {
    const { w, u } = answered()
    expectExactly(w, toolReplace('a', u, u), [['L8', `a tool/result replacement hides seq ${u}, which is not a tool/result but user/message`]])
  })

  it('L8: the replacement keeps the hidden result turn, step and callId', () => {
    const { w, ra } = answered()
    const keep = (turn: number, step: number, callId: string) =>
      `a tool/result replacement (${turn}.${step} ${callId}) does not keep the hidden result's turn, step and callId (1.1 a)`
    expectExactly(w, toolReplace('b', ra, ra), [['L8', keep(1, 1, 'b')]])
    expectExactly(w, toolReplace('a', ra, ra, 2, 1), [['L8', keep(2, 1, 'a')]])
    expectExactly(w, toolReplace('a', ra, ra, 1, 2), [['L8', keep(1, 2, 'a')]])
    expectClean(w, toolReplace('a', ra, ra))
  })

  it('L8: a replacement of a replacement keeps the identity it carries', () => {
    const { w, ra } = answered()
    const first = w.append(toolReplace('a', ra, ra)).seq
    expectExactly(w, toolReplace('b', first, first), [['L8', "a tool/result replacement (1.1 b) does not keep the hidden result's turn, step and callId (1.1 a)"]])
    expectClean(w, toolReplace('a', first, first))
  })
})

describe('L8 the surface the checker keeps', () => {
  it('L8: a replace in the middle takes the place of its range; the generation counts replacements', () => {
    const { w, s } = twoTurns()
    expect(checkerAfter(w.session.events).generation).toBe(0)
    const at = w.append(summary(s[1]!, s[2]!, range(s, s[1]!, s[2]!))).seq
    const c = checkerAfter(w.session.events)
    expect(c.surfaceSeqs()).toEqual([s[0], at, s[3]])
    expect(c.generation).toBe(1)
    // the replacement stands where its range stood: it may start or end a range, in order
    expectClean(w, summary(s[0]!, at, [s[0]!, at]))
    expectClean(w, summary(at, s[3]!, [at, s[3]!]))
    expectExactly(w, summary(s[3]!, at, [s[3]!, at]), [['L8', `replace start ${s[3]} comes after end ${at} on the surface`]])
    expectExactly(w, summary(at, s[0]!, [at, s[0]!]), [['L8', `replace start ${at} comes after end ${s[0]} on the surface`]])
    // the hidden seqs are gone
    expectExactly(w, summary(s[1]!, s[1]!, [s[1]!]), [['L8', `replace start ${s[1]} is not a current surface seq`], ['L8', `replace end ${s[1]} is not a current surface seq`]])
  })

  it('L8: replacing the head, then the tail, then everything', () => {
    const { w, s } = twoTurns()
    const head = w.append(summary(s[0]!, s[1]!, range(s, s[0]!, s[1]!))).seq
    expect(checkerAfter(w.session.events).surfaceSeqs()).toEqual([head, s[2], s[3]])
    const tail = w.append(summary(s[2]!, s[3]!, range(s, s[2]!, s[3]!))).seq
    expect(checkerAfter(w.session.events).surfaceSeqs()).toEqual([head, tail])
    const all = w.append(summary(head, tail, [head, tail])).seq
    const c = checkerAfter(w.session.events)
    expect(c.surfaceSeqs()).toEqual([all])
    expect(c.generation).toBe(3)
    // an append after a replacement of the whole surface goes after it
    w.send(um('m3'))
    w.turnStart()
    w.stepStart(w.claim())
    const u3 = w.session.events.at(-1)!.seq
    expect(checkerAfter(w.session.events).surfaceSeqs()).toEqual([all, u3])
    expectClean(w, summary(all, u3, [all, u3]))
    expectExactly(w, summary(u3, all, [u3, all]), [['L8', `replace start ${u3} comes after end ${all} on the surface`]])
  })

  it('L8: a single-node replace at the tail, then appends after it', () => {
    const { w, s } = twoTurns()
    const r = w.append(summary(s[3]!, s[3]!, [s[3]!])).seq
    w.send(um('m3'))
    w.turnStart()
    w.stepStart(w.claim())
    const u3 = w.session.events.at(-1)!.seq
    expect(checkerAfter(w.session.events).surfaceSeqs()).toEqual([s[0], s[1], s[2], r, u3])
    expectClean(w, summary(r, u3, [r, u3]))
  })

  it('L8: a replace that cannot be applied (best effort) is appended, and the generation does not move', () => {
    const { w, s } = twoTurns()
    const bad = forced(w.session.events, summary(0, s[1]!, [0, s[0]!, s[1]!]))
    const c = checkerAfter(bad)
    expect(c.surfaceSeqs()).toEqual([...s, bad.length - 1])
    expect(c.generation).toBe(0)
    const backwards = forced(w.session.events, summary(s[2]!, s[0]!, range(s, s[0]!, s[2]!)))
    expect(checkerAfter(backwards).surfaceSeqs()).toEqual([...s, backwards.length - 1])
    expectAfter(backwards, summary(s[0]!, backwards.length - 1, [...s, backwards.length - 1]), [])
  })

  it('L8: a replace whose end is not on the surface (applied anyway) is appended', () => {
    const { w, s } = twoTurns()
    const bad = forced(w.session.events, summary(s[1]!, 1, [s[1]!, 1]))
    const c = checkerAfter(bad)
    expect(c.surfaceSeqs()).toEqual([...s, bad.length - 1])
    expect(c.generation).toBe(0)
  })

  it('L8: a non-surface event with a surfaceOp (applied anyway) never enters the surface', () => {
    const { w, s } = twoTurns()
    const bad = forced(w.session.events,
      { type: 'turn/start', data: { turn: 3 }, surfaceOp: 'append' },
      { type: 'turn/end', data: { turn: 3, reason: { kind: 'completed' } }, surfaceOp: { op: 'replace', start: s[0]!, end: s[3]! }, sourceEventSeqs: s })
    const c = checkerAfter(bad)
    expect(c.surfaceSeqs()).toEqual(s)
    expect(c.generation).toBe(0)
  })

  it('L8: a replace with citations missing is still applied (the surface follows the log)', () => {
    const { w, s } = twoTurns()
    const events = forced(w.session.events, summary(s[0]!, s[1]!, [s[0]!]))
    expect(checkerAfter(events).surfaceSeqs()).toEqual([events.length - 1, s[2], s[3]])
  })
})
