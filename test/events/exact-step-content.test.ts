/**
 * What happens inside one step (events/invariants/step-content.ts), one rule at a time, with the
 * exact verdicts (invariant, seq, message): L5 every call answered once, L6 model order, L7 the
 * message cites its chunks, L9 the stream grammar, L10 max-tokens runs no tool. The nearest valid
 * event of each case gives no violation.
 */
import { describe, it } from 'vitest'
import type { EventDraft } from '../../events/envelope.js'
import type { Block } from '../../events/messages.js'
import { LogWriter, fail, text, toolBlock, um } from './log-writer.js'
import { expectAfter, expectClean, expectExactly, forced } from './exact.js'

type Chunk = Extract<EventDraft, { type: 'assistant/chunk' }>['data']['chunk']
const chunk = (c: Chunk, turn = 1, step = 1): EventDraft => ({ type: 'assistant/chunk', data: { turn, step, chunk: c } })
const call = (id: string, turn = 1, step = 1): EventDraft => ({ type: 'tool/call', data: { turn, step, callId: id, name: 'echo', arguments: '{}' } })
const stepEnd = (kind: 'tools' | 'stop' | 'max-tokens', step = 1): EventDraft => ({ type: 'step/end', data: { turn: 1, step, outcome: { kind } } })
function message(w: LogWriter, content: Block[], finish: 'stop' | 'tool-calls' | 'max-tokens', opts: { interrupted?: true; sources?: number[] } = {}): EventDraft {
  return {
    type: 'assistant/message',
    data: opts.interrupted
      ? { turn: w.turn, step: w.step, message: { role: 'assistant', content }, finish, interrupted: true }
      : { turn: w.turn, step: w.step, message: { role: 'assistant', content }, finish, usage: { inputTokens: 10, outputTokens: 5 } },
    surfaceOp: 'append',
    sourceEventSeqs: opts.sources ?? [...w.chunks],
  }
}

/** Turn 1, step 1 open, nothing streamed. */
function inStep(): LogWriter {
  const w = new LogWriter()
  w.send(um('m1'))
  w.turnStart()
  w.stepStart(w.claim())
  return w
}

/** Step 1 with a streamed and appended message of tool calls `ids` (finish `finish`), no calls yet. */
function withCalls(ids: string[], finish: 'tool-calls' | 'max-tokens' = 'tool-calls'): LogWriter {
  const w = inStep()
  const blocks = ids.map((id) => toolBlock(id))
  w.stream(blocks, finish)
  w.message(blocks, finish)
  return w
}

describe('L9 the stream grammar, exact verdicts', () => {
  it("L9: a chunk that does not fit the grammar is reported with the grammar's reason", () => {
    const w = inStep()
    expectExactly(w, chunk({ type: 'text-delta', index: 0, text: 'x' }), [['L9', 'stream grammar: text-delta for block 0, which is not open']])
    w.chunk({ type: 'block-start', index: 0, blockType: 'text' })
    expectExactly(w, chunk({ type: 'finish', reason: 'stop' }), [['L9', 'stream grammar: finish with 1 block(s) still open']])
    expectClean(w, chunk({ type: 'text-delta', index: 0, text: 'x' }))
  })

  it('L9: a chunk after the finish', () => {
    const w = inStep()
    w.stream([text('a')], 'stop')
    expectExactly(w, chunk({ type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } }), [['L9', 'stream grammar: chunk usage after finish']])
  })

  it('L9: the grammar carries on after a chunk that broke it was applied anyway (best effort)', () => {
    const w = inStep()
    const events = forced(w.session.events,
      chunk({ type: 'block-start', index: 0, blockType: 'text' }),
      chunk({ type: 'block-start', index: 0, blockType: 'text' })) // started twice: not pushed
    expectAfter(events, chunk({ type: 'block-end', index: 0 }), [])
  })

  it('L9: a non-interrupted message needs a success finish chunk before it', () => {
    const w = inStep()
    w.chunk({ type: 'block-start', index: 0, blockType: 'text' })
    w.chunk({ type: 'text-delta', index: 0, text: 'a' })
    w.chunk({ type: 'block-end', index: 0 })
    expectExactly(w, message(w, [text('a')], 'stop'), [['L9', 'assistant/message without a success finish chunk before it']])
    expectClean(w, message(w, [text('a')], 'stop', { interrupted: true }))
  })

  it('L9: an error or aborted finish is not a success finish', () => {
    const w = inStep()
    w.chunk({ type: 'finish', reason: 'error', failure: fail('SERVER') })
    expectExactly(w, message(w, [text('')], 'stop'), [['L9', 'assistant/message without a success finish chunk before it']])
    const a = inStep()
    a.chunk({ type: 'finish', reason: 'aborted', failure: fail('ABORTED') })
    expectExactly(a, message(a, [text('')], 'stop'), [['L9', 'assistant/message without a success finish chunk before it']])
  })

  it('L9: a finish chunk that broke the grammar (applied anyway) is not a success finish', () => {
    const w = inStep()
    const events = forced(w.session.events,
      chunk({ type: 'block-start', index: 0, blockType: 'text' }),
      chunk({ type: 'finish', reason: 'stop' })) // a block still open
    const msg = { ...message(w, [text('')], 'stop'), sourceEventSeqs: [events.length - 2, events.length - 1] } as EventDraft
    expectAfter(events, msg, [['L9', 'assistant/message without a success finish chunk before it']])
  })

  it('L9: the message finish must be the stream finish', () => {
    const w = inStep()
    w.stream([text('a')], 'max-tokens')
    expectExactly(w, message(w, [text('a')], 'stop'), [['L9', 'assistant/message finish stop, but the stream finished max-tokens']])
    expectClean(w, message(w, [text('a')], 'max-tokens'))
  })

  it('L9: a new step starts a new stream', () => {
    const w = inStep()
    w.stream([text('a')], 'stop')
    w.message([text('a')], 'stop')
    w.stepEnd({ kind: 'stop' })
    w.stepStart()
    // the grammar, the finish and the chunk list are the new step's
    expectClean(w, chunk({ type: 'block-start', index: 0, blockType: 'text' }, 1, 2))
    expectExactly(w, message(w, [text('')], 'stop'), [['L9', 'assistant/message without a success finish chunk before it']])
  })
})

describe('L7 the message and its chunks, exact verdicts', () => {
  it('L7: the message must cite exactly its chunks, in order', () => {
    const w = inStep()
    w.stream([text('a')], 'stop')
    const all = [...w.chunks]
    expectExactly(w, message(w, [text('a')], 'stop', { sources: all.slice(1) }), [['L7', `assistant/message cites [${all.slice(1).join(',')}], but the step's chunks are [${all.join(',')}]`]])
    const swapped = [all[1]!, all[0]!, ...all.slice(2)]
    expectExactly(w, message(w, [text('a')], 'stop', { sources: swapped }), [['L7', `assistant/message cites [${swapped.join(',')}], but the step's chunks are [${all.join(',')}]`]])
    expectClean(w, message(w, [text('a')], 'stop'))
  })

  it('L7: an interrupted message must cite its chunks too', () => {
    const w = inStep()
    w.chunk({ type: 'block-start', index: 0, blockType: 'text' })
    const c = w.chunks[0]!
    expectExactly(w, message(w, [text('')], 'stop', { interrupted: true, sources: [] }), [['L7', `assistant/message cites [], but the step's chunks are [${c}]`]])
  })

  it('L7: a message without sourceEventSeqs cites no chunk', () => {
    const w = inStep()
    const { sourceEventSeqs: _drop, ...bare } = message(w, [text('')], 'stop', { interrupted: true })
    expectClean(w, bare as EventDraft)
    w.chunk({ type: 'block-start', index: 0, blockType: 'text' })
    expectExactly(w, bare as EventDraft, [['L7', `assistant/message cites [], but the step's chunks are [${w.chunks[0]}]`]])
  })

  it('L7: a chunk after the message (interrupted or not)', () => {
    const w = inStep()
    w.stream([text('a')], 'stop')
    w.message([text('a')], 'stop')
    expectExactly(w, chunk({ type: 'block-start', index: 1, blockType: 'text' }), [
      ['L7', "assistant/chunk after the step's assistant/message"],
      ['L9', 'stream grammar: chunk block-start after finish'],
    ])
    const i = inStep()
    i.chunk({ type: 'block-start', index: 0, blockType: 'text' })
    i.message([text('')], 'stop', true)
    expectExactly(i, chunk({ type: 'block-end', index: 0 }), [['L7', "assistant/chunk after the step's assistant/message"]])
  })

  it('L7: a second non-interrupted message in a step; an interrupted one before it is allowed', () => {
    const w = inStep()
    w.stream([text('a')], 'stop')
    w.message([text('a')], 'stop', true)
    expectClean(w, message(w, [text('a')], 'stop'))
    w.message([text('a')], 'stop')
    expectExactly(w, message(w, [text('a')], 'stop'), [['L7', 'a second non-interrupted assistant/message in the step']])
    expectClean(w, message(w, [text('a')], 'stop', { interrupted: true }))
  })

  it('L7: a replacing assistant/message is not judged against the step (the surface rules judge it)', () => {
    const w = withCalls(['x'])
    const m = w.session.lastEvent!.seq
    const replace: EventDraft = { ...message(w, [text('b')], 'stop'), surfaceOp: { op: 'replace', start: m, end: m }, sourceEventSeqs: [m] }
    expectClean(w, replace)
    w.append(replace)
    // it neither counts as the step's message nor ends the chunk stream: a call still matches the first message
    expectClean(w, call('x'))
  })
})

describe('L5, L6, L10 calls and results, exact verdicts', () => {
  it('L6: a call before the non-interrupted message (none yet, or only an interrupted one)', () => {
    const w = inStep()
    expectExactly(w, call('a'), [['L6', "tool/call a before the step's (non-interrupted) assistant/message"]])
    w.stream([toolBlock('a')], 'tool-calls')
    w.message([toolBlock('a')], 'tool-calls', true)
    expectExactly(w, call('a'), [['L6', "tool/call a before the step's (non-interrupted) assistant/message"]])
  })

  it('L6: a call naming no tool-call block, or out of the block order', () => {
    const w = withCalls(['a', 'b'])
    expectExactly(w, call('z'), [['L6', "tool/call z names no tool-call block of the step's assistant/message"]])
    expectClean(w, call('a'))
    w.call('a')
    expectExactly(w, call('a'), [
      ['L5', "tool/call a is the step's second call with that callId"],
      ['L6', "tool/call a out of the model's block order"],
    ])
    expectClean(w, call('b'))
    // a call may skip a block (its call was never made), but not go back to one
    const skip = withCalls(['a', 'b'])
    expectClean(skip, call('b'))
    skip.call('b')
    expectExactly(skip, call('a'), [['L6', "tool/call a out of the model's block order"]])
  })

  it('L6: the block order skips blocks that are not tool calls', () => {
    const w = inStep()
    const blocks = [text('t'), toolBlock('a'), text('u'), toolBlock('b')]
    w.stream(blocks, 'tool-calls')
    w.message(blocks, 'tool-calls')
    w.call('a')
    expectClean(w, call('b'))
  })

  it('L6: a call out of order does not move the block order on (best effort)', () => {
    const w = withCalls(['a', 'b', 'c'])
    const events = forced(w.session.events, call('z'), call('b')) // z: no block; b: out of order but a later block
    // b moved the order past a: a is now out of order, c is still in order
    expectAfter(events, call('a'), [['L6', "tool/call a out of the model's block order"]])
    expectAfter(events, call('c'), [])
  })

  it('L10: a call after a max-tokens message', () => {
    const w = withCalls(['a'], 'max-tokens')
    expectExactly(w, call('a'), [['L10', "tool/call a after the step's max-tokens assistant/message"]])
  })

  it('L10: a step that ends max-tokens needs a max-tokens message', () => {
    const w = inStep()
    w.stream([text('a')], 'stop')
    expectExactly(w, stepEnd('max-tokens'), [['L10', 'step ended max-tokens without a max-tokens assistant/message']])
    w.message([text('a')], 'stop')
    expectExactly(w, stepEnd('max-tokens'), [['L10', 'step ended max-tokens without a max-tokens assistant/message']])
    expectClean(w, stepEnd('stop'))
    const m = withCalls(['a'], 'max-tokens')
    expectClean(m, stepEnd('max-tokens'))
  })

  it('L5: a result without a call in the step', () => {
    const w = withCalls(['a'])
    expectExactly(w, w.resultDraft('a'), [['L5', 'tool/result a without a tool/call a in the step']])
  })

  it('L5: a call of an earlier step does not count', () => {
    const w = withCalls(['a'])
    w.call('a')
    w.result('a')
    w.stepEnd({ kind: 'tools' })
    w.stepStart()
    w.stream([text('x')], 'stop')
    w.message([text('x')], 'stop')
    expectExactly(w, { ...w.resultDraft('a'), sourceEventSeqs: [w.next - 1] }, [['L5', 'tool/result a without a tool/call a in the step']])
    // the earlier call's id is no call of this step: no L5 second call, only no block for it
    expectExactly(w, call('a', 1, 2), [['L6', "tool/call a names no tool-call block of the step's assistant/message"]])
  })

  it('L5: a second result for one call', () => {
    const w = withCalls(['a'])
    w.call('a')
    w.result('a')
    expectExactly(w, w.resultDraft('a'), [['L5', 'a second tool/result for call a']])
  })

  it('L6: results in call order; a result out of order names the call answered first', () => {
    const w = withCalls(['a', 'b', 'c'])
    w.call('a')
    w.call('b')
    w.call('c')
    expectExactly(w, w.resultDraft('b'), [['L6', 'tool/result b out of call order: call a is answered first']])
    w.result('a')
    expectExactly(w, w.resultDraft('c'), [['L6', 'tool/result c out of call order: call b is answered first']])
    expectClean(w, w.resultDraft('b'))
    w.result('b')
    expectClean(w, w.resultDraft('c'))
  })

  it('L6: a result applied out of order (best effort) is answered; the order skips it later', () => {
    const w = withCalls(['a', 'b', 'c'])
    w.call('a')
    w.call('b')
    w.call('c')
    const events = forced(w.session.events, w.resultDraft('b'), w.resultDraft('a'))
    // a then b are answered: c is next, and a second b is a second result
    expectAfter(events, w.resultDraft('c'), [])
    expectAfter(events, w.resultDraft('b'), [['L5', 'a second tool/result for call b']])
  })

  it('L5: step/end with unanswered calls names them all, in call order', () => {
    const w = withCalls(['a', 'b', 'c'])
    w.call('a')
    w.call('b')
    w.call('c')
    expectExactly(w, stepEnd('tools'), [['L5', 'step/end with tool/call(s) a, b, c unanswered']])
    w.result('a')
    expectExactly(w, stepEnd('tools'), [['L5', 'step/end with tool/call(s) b, c unanswered']])
    w.result('b')
    w.result('c')
    expectClean(w, stepEnd('tools'))
  })

  it('L5: a replacing tool/result neither answers a call nor is judged as one', () => {
    const w = withCalls(['a', 'b'])
    w.call('a')
    w.call('b')
    const ra = w.result('a')
    const replace: EventDraft = { ...w.resultDraft('a', 'short'), surfaceOp: { op: 'replace', start: ra, end: ra }, sourceEventSeqs: [ra] }
    expectClean(w, replace)
    w.append(replace)
    expectExactly(w, stepEnd('tools'), [['L5', 'step/end with tool/call(s) b unanswered']])
    expectClean(w, w.resultDraft('b'))
  })

  it('L5: a duplicate call (applied anyway) keeps its first place in the call order', () => {
    const w = withCalls(['a', 'b'])
    const events = forced(w.session.events, call('a'), call('b'), call('a'))
    expectAfter(events, w.resultDraft('b'), [['L6', 'tool/result b out of call order: call a is answered first']])
    const answered = forced(events, w.resultDraft('a'), w.resultDraft('b'))
    expectAfter(answered, stepEnd('tools'), [])
  })
})

describe('L4 content outside a step is not judged again', () => {
  it('L4: a chunk, call, message or result outside a step gives L4 only', () => {
    const w = withCalls(['a'])
    w.call('a')
    w.result('a')
    w.stepEnd({ kind: 'tools' })
    expectExactly(w, chunk({ type: 'text-delta', index: 5, text: 'x' }), [['L4', 'assistant/chunk 1.1 outside an open step']])
    expectExactly(w, call('a'), [['L4', 'tool/call 1.1 outside an open step']])
    expectExactly(w, w.resultDraft('zz'), [['L4', 'appended tool/result 1.1 outside an open step']])
    expectExactly(w, message(w, [text('x')], 'stop', { sources: [] }), [['L4', 'appended assistant/message 1.1 outside an open step']])
  })
})
