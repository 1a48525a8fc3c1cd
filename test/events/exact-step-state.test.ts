/**
 * The per-step state of events/invariants/step-content.ts as events are applied best effort (as
 * `verify` does after a violation) and as `check` probes without applying: which events change it
 * (appended content inside the step) and which do not (replacements, refused probes). L5, L6, L7, L9.
 */
import { describe, expect, it } from 'vitest'
import type { EventDraft } from '../../events/envelope.js'
import { LogWriter, text, toolBlock, um } from './log-writer.js'
import { at, checkerAfter, expectAfter, forced } from './exact.js'

const call = (id: string, step = 1): EventDraft => ({ type: 'tool/call', data: { turn: 1, step, callId: id, name: 'echo', arguments: '{}' } })
const stepEnd = (step = 1): EventDraft => ({ type: 'step/end', data: { turn: 1, step, outcome: { kind: 'tools' } } })
const result = (id: string, source: number, step = 1): EventDraft => ({
  type: 'tool/result',
  data: { turn: 1, step, callId: id, message: { role: 'tool', callId: id, content: [text('ok')] } },
  surfaceOp: 'append',
  sourceEventSeqs: [source],
})

/** Step 1 open with an appended tool-calls message of `ids` (blocks in that order), no calls yet. */
function withBlocks(ids: string[]): LogWriter {
  const w = new LogWriter()
  w.send(um('m1'))
  w.turnStart()
  w.stepStart(w.claim())
  const blocks = ids.map((id) => toolBlock(id))
  w.stream(blocks, 'tool-calls')
  w.message(blocks, 'tool-calls')
  return w
}

describe('L6 the block order as calls are applied', () => {
  it('L6: a call naming no block (applied anyway) leaves the order where it was', () => {
    const w = withBlocks(['a', 'b', 'c'])
    const events = forced(w.session.events, call('b'), call('z'))
    expectAfter(events, call('a'), [['L6', "tool/call a out of the model's block order"]])
    expectAfter(events, call('c'), [])
  })

  it('L6: with a repeated block id, the order moves on to the later block', () => {
    const w = withBlocks(['a', 'b', 'a'])
    const events = forced(w.session.events, call('a'), call('b'), call('a'))
    expectAfter(events, call('b'), [
      ['L5', "tool/call b is the step's second call with that callId"],
      ['L6', "tool/call b out of the model's block order"],
    ])
  })
})

describe('L5, L6 calls and results applied best effort', () => {
  it('L5: a second call with one callId keeps the first call place in the result order', () => {
    const w = withBlocks(['a', 'b'])
    const events = forced(w.session.events, call('a'), call('b'), call('a'))
    const ca = events.length - 3
    expectAfter(events, result('a', ca), [])
  })

  it('L5: a result without a call (applied anyway) answers nothing', () => {
    const w = withBlocks(['a'])
    const events = forced(w.session.events, result('z', w.next - 1), call('a'))
    expectAfter(events, stepEnd(), [['L5', 'step/end with tool/call(s) a unanswered']])
    const answered = forced(events, result('a', events.length - 1))
    expectAfter(answered, stepEnd(), [])
  })

  it('L5: a second result for a call (applied anyway) changes nothing', () => {
    const w = withBlocks(['a', 'b'])
    const ca = w.call('a')
    const cb = w.call('b')
    w.result('a')
    const events = forced(w.session.events, result('a', ca))
    expectAfter(events, result('b', cb), [])
    expectAfter(events, stepEnd(), [['L5', 'step/end with tool/call(s) b unanswered']])
  })

  it("L5: a replacing tool/result does not answer the open step's call of the same callId", () => {
    const w = withBlocks(['a'])
    w.call('a')
    const ra = w.result('a')
    w.stepEnd({ kind: 'tools' })
    w.stepStart()
    w.stream([toolBlock('a')], 'tool-calls')
    w.message([toolBlock('a')], 'tool-calls')
    w.call('a')
    // a prune-style replacement of step 1's result, while step 2's call a is open
    w.append({ ...result('a', ra), surfaceOp: { op: 'replace', start: ra, end: ra } })
    expectAfter(w.session.events, stepEnd(2), [['L5', 'step/end with tool/call(s) a unanswered']])
  })
})

describe('L7 replacing messages are not the step message', () => {
  it("L7: a replacing assistant/message inside a step before the step's own message changes nothing", () => {
    const w = withBlocks(['a'])
    w.call('a')
    w.result('a')
    w.stepEnd({ kind: 'tools' })
    const m1 = w.session.events.find((e) => e.type === 'assistant/message')!.seq
    w.stepStart()
    w.append({
      type: 'assistant/message',
      data: { turn: 1, step: 1, message: { role: 'assistant', content: [text('shorter')] }, finish: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } },
      surfaceOp: { op: 'replace', start: m1, end: m1 },
      sourceEventSeqs: [m1],
    })
    // not seen as this step's message: chunks may still come, and a call still needs the step's own message
    expectAfter(w.session.events, { type: 'assistant/chunk', data: { turn: 1, step: 2, chunk: { type: 'block-start', index: 0, blockType: 'text' } } }, [])
    expectAfter(w.session.events, call('a', 2), [['L6', "tool/call a before the step's (non-interrupted) assistant/message"]])
  })
})

describe('L7 the step message is the first non-interrupted one', () => {
  it('L7: a second non-interrupted message (applied anyway) does not replace the first one\'s blocks', () => {
    const w = withBlocks(['a'])
    const events = forced(w.session.events, {
      type: 'assistant/message',
      data: { turn: 1, step: 1, message: { role: 'assistant', content: [toolBlock('b')] }, finish: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } },
      surfaceOp: 'append',
      sourceEventSeqs: [...w.chunks],
    })
    expectAfter(events, call('a'), [])
    expectAfter(events, call('b'), [['L6', "tool/call b names no tool-call block of the step's assistant/message"]])
  })
})

describe('L9 check probes the grammar without changing it', () => {
  it('L9: the same chunk checked twice gives the same verdict', () => {
    const open = new LogWriter()
    open.send(um('m1'))
    open.turnStart()
    open.stepStart(open.claim())
    const k = checkerAfter(open.session.events)
    const start = at(open.next, { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'text' } } })
    expect(k.check(start)).toEqual([])
    expect(k.check(start)).toEqual([])
    k.apply(start)
    const again = at(open.next + 1, { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'text' } } })
    expect(k.check(again)).toEqual([{ invariant: 'L9', seq: open.next + 1, message: 'stream grammar: block 0 started twice' }])
  })

  it('L9: a chunk checked but applied in another form leaves the grammar as the applied chunks made it', () => {
    const open = new LogWriter()
    open.send(um('m1'))
    open.turnStart()
    open.stepStart(open.claim())
    const k = checkerAfter(open.session.events)
    const s = open.next
    // probe a block-start of block 0, then apply a block-start of block 1 instead
    expect(k.check(at(s, { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'text' } } }))).toEqual([])
    k.apply(at(s, { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 1, blockType: 'text' } } }))
    const end0 = at(s + 1, { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'block-end', index: 0 } } })
    expect(k.check(end0)).toEqual([{ invariant: 'L9', seq: s + 1, message: 'stream grammar: block-end for block 0, which never started' }])
  })
})
