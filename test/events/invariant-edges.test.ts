/**
 * Edges of the invariant checks that mutation testing showed unguarded (issue 15 part 3): each test
 * breaks exactly one half of a compound condition and expects the refusal, so weakening `||` to
 * `&&` or dropping a comparison fails. L3, L4, L8, L11, L13, L14, L15.
 */
import { describe, expect, it } from 'vitest'
import type { EventDraft, LogEvent } from '../../events/envelope.js'
import { LogChecker } from '../../events/invariants/checker.js'
import { LogWriter, expectRefused, fail, text, toolBlock, um } from './log-writer.js'

function toolMessage(ids: string[]): LogWriter {
  const w = new LogWriter()
  w.send(um('m1'))
  w.turnStart()
  w.stepStart(w.claim())
  const blocks = ids.map((id) => toolBlock(id))
  w.stream(blocks, 'tool-calls')
  w.message(blocks, 'tool-calls')
  return w
}

/** A step with calls a and b answered, ended, and a's result's seq. */
function answered(): { w: LogWriter; ra: number; rb: number } {
  const w = toolMessage(['a', 'b'])
  w.call('a')
  w.call('b')
  const ra = w.result('a', 'x'.repeat(50))
  const rb = w.result('b', 'y'.repeat(50))
  w.stepEnd({ kind: 'tools' })
  return { w, ra, rb }
}

/** Every invariant the draft would break after the writer's log (the session reports only the first). */
function broken(w: LogWriter, draft: EventDraft): string[] {
  const c = new LogChecker()
  for (const e of w.session.events) c.apply(e)
  return c.check({ seq: w.next, time: 0, ...draft } as LogEvent).map((v) => v.invariant)
}

const replacement = (callId: string, seq: number, turn = 1, step = 1): EventDraft => ({
  type: 'tool/result',
  data: { turn, step, callId, message: { role: 'tool', callId, content: [text('short')] } },
  surfaceOp: { op: 'replace', start: seq, end: seq },
  sourceEventSeqs: [seq],
})

describe('L3 step boundaries', () => {
  it('L3: step/start naming another turn is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    expectRefused(w, { type: 'step/start', data: { turn: 2, step: 1 } }, 'L3')
  })

  it('L3: step/end naming the open turn but another step, or the open step of another turn, is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.stream([text('t')], 'stop')
    w.message([text('t')], 'stop')
    expectRefused(w, { type: 'step/end', data: { turn: 1, step: 2, outcome: { kind: 'stop' } } }, 'L3')
    expectRefused(w, { type: 'step/end', data: { turn: 2, step: 1, outcome: { kind: 'stop' } } }, 'L3')
    w.append({ type: 'step/end', data: { turn: 1, step: 1, outcome: { kind: 'stop' } } })
  })
})

describe('L4 content inside an open step', () => {
  it('L4: an appended tool/result after its step ended is refused; a replacing one is accepted', () => {
    const { w, ra } = answered()
    expectRefused(w, { ...replacement('a', ra), surfaceOp: 'append' }, 'L4')
    w.append(replacement('a', ra))
  })

  it('L4: an appended assistant/message outside a step is refused', () => {
    const { w } = answered()
    expectRefused(w, { type: 'assistant/message', data: { turn: 1, step: 1, message: { role: 'assistant', content: [text('late')] }, finish: 'stop' }, surfaceOp: 'append', sourceEventSeqs: [] }, 'L4')
  })

  it('L4: llm/retry must name the failed step: another step, or another turn, is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.failedStep('SERVER', w.claim())
    const retry = (turn: number, step: number): EventDraft => ({ type: 'llm/retry', data: { turn, step, attempt: 1, delayMs: 0, failure: fail('SERVER') } })
    expectRefused(w, retry(1, 2), 'L4')
    expectRefused(w, retry(2, 1), 'L4')
    w.append(retry(1, 1))
  })
})

describe('L8 tool/result replacements keep the hidden result identity', () => {
  it('L8: a tool/result replacement with another callId, turn or step is refused; the same one is accepted', () => {
    const { w, ra } = answered()
    expectRefused(w, replacement('b', ra), 'L8')
    expectRefused(w, replacement('a', ra, 2, 1), 'L8')
    expectRefused(w, replacement('a', ra, 1, 2), 'L8')
    w.append(replacement('a', ra))
  })
})

describe('L13 retry turns', () => {
  it('L13: a retry naming the turn it follows, but numbered past the next turn, is refused as L2 and L13', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.failedStep('SERVER', w.claim())
    w.turnEnd({ kind: 'error', failure: fail('SERVER') })
    expect(broken(w, { type: 'turn/start', data: { turn: 3, cause: { kind: 'retry', of: 1 } } })).toEqual(['L2', 'L13'])
    expect(broken(w, { type: 'turn/start', data: { turn: 2, cause: { kind: 'retry', of: 1 } } })).toEqual([])
  })
})

describe('L14 compaction summaries', () => {
  function open(): { w: LogWriter; first: number } {
    const w = new LogWriter()
    w.simpleTurn('m1')
    const first = w.session.events.find((e) => e.type === 'user/message')!.seq
    w.append({ type: 'compaction/start', data: { compactionId: 'k1', turn: 1 } })
    return { w, first }
  }

  it('L14: a summary naming another compaction, or a second summary, is refused', () => {
    const { w, first } = open()
    expectRefused(w, { type: 'compaction/summary', data: { compactionId: 'k2', summary: 's', shadowedSeqs: [first] } }, 'L14')
    w.append({ type: 'compaction/summary', data: { compactionId: 'k1', summary: 's', shadowedSeqs: [first] } })
    w.append({ type: 'user/message', data: { message: um('s', 's', { kind: 'compaction' }) }, surfaceOp: { op: 'replace', start: first, end: first }, sourceEventSeqs: [first] })
    expectRefused(w, { type: 'compaction/summary', data: { compactionId: 'k1', summary: 's2', shadowedSeqs: [first] } }, 'L14')
  })

  it('L14: a summary with no compaction open is refused', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    expectRefused(w, { type: 'compaction/summary', data: { compactionId: 'k1', summary: 's', shadowedSeqs: [1] } }, 'L14')
  })

  it('L14: after the summary, an appended compaction message (not a replacement) is refused', () => {
    const { w, first } = open()
    w.append({ type: 'compaction/summary', data: { compactionId: 'k1', summary: 's', shadowedSeqs: [first] } })
    expect(broken(w, { type: 'user/message', data: { message: um('s', 's', { kind: 'compaction' }) }, surfaceOp: 'append' })).toContain('L14')
    expect(broken(w, { type: 'user/message', data: { message: um('s', 's', { kind: 'compaction' }) } })).toContain('L14')
  })
})

describe('L15 prune then its replacement', () => {
  function pruned(): { w: LogWriter; ra: number; rb: number } {
    const r = answered()
    r.w.append({ type: 'compaction/prune', data: { callId: 'a', shadowedSeq: r.ra, originalChars: 50 } })
    return r
  }

  it('L15: the replacement must replace exactly the shadowed seq: another start, or another end, is refused', () => {
    const { w, ra, rb } = pruned()
    const range = (start: number, end: number): EventDraft => ({ ...replacement('a', ra), surfaceOp: { op: 'replace', start, end }, sourceEventSeqs: [start, end] })
    expect(broken(w, range(ra, rb))).toContain('L15')
    expect(broken(w, range(rb, rb))).toContain('L15')
    expect(broken(w, replacement('a', ra))).toEqual([])
    w.append(replacement('a', ra))
  })

  it('L15: an appended tool/result after a prune is refused', () => {
    const { w, ra } = pruned()
    expect(broken(w, { ...replacement('a', ra), surfaceOp: 'append' })).toContain('L15')
    const { surfaceOp: _drop, ...noOp } = replacement('a', ra)
    expect(broken(w, noOp as EventDraft)).toContain('L15')
  })
})

describe('L11 splices', () => {
  it('L11: a splice that removes and inserts nothing is refused; one that only inserts is accepted', () => {
    const w = new LogWriter()
    expectRefused(w, { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [] } }, 'L11')
    w.send(um('a'))
  })

  it('L11: a cancel (outcome canceled) removing then re-inserting the same id is accepted; a claim doing so is refused', () => {
    const w = new LogWriter()
    w.send(um('a'))
    w.append({ type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, outcome: 'canceled', inserted: [um('a', 'edited')] } })
    w.turnStart()
    expectRefused(w, { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [um('a')] } }, 'L11')
  })
})
