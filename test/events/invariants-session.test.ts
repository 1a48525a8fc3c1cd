/**
 * The L invariants as `Session.append` enforces them: a refused append throws INVARIANT naming the
 * invariant and the seq it would have had, and appends nothing. Each test builds a valid prefix with
 * the LogWriter, then tries one bad event.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { EventDraft, LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import { Session } from '../../events/session.js'
import { LogWriter, expectRefused, fail, text, toolBlock, um } from './log-writer.js'

const exampleEvents = readFileSync(new URL('../fixtures/valid/example.jsonl', import.meta.url), 'utf8')
  .split('\n').filter(Boolean).slice(1).map((l) => JSON.parse(l) as LogEvent)

describe('a valid log is accepted', () => {
  it('L1–L16: example.jsonl appends through a Session without a refusal', () => {
    const s = new Session({ id: 'example', clock: () => 0 })
    for (const e of exampleEvents) {
      const { seq: _seq, time: _time, ...draft } = e
      s.append(draft as EventDraft)
    }
    expect(s.length).toBe(exampleEvents.length)
  })

  it('L1–L16: a Session resumed with example.jsonl as its prefix accepts the next turn', () => {
    const s = new Session({ id: 'resumed', clock: () => 0, prefix: exampleEvents })
    s.append({ type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [um('m2')] } })
    s.append({ type: 'turn/start', data: { turn: 2 } })
    expect(s.length).toBe(exampleEvents.length + 2)
    expect(() => s.append({ type: 'turn/start', data: { turn: 3 } })).toThrow(/L2/)
  })
})

describe('L2 turns', () => {
  it('L2: turn/start while a turn is open is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    expectRefused(w, { type: 'turn/start', data: { turn: 2 } }, 'L2')
  })

  it('L2: turn/start must number the turn last + 1', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    expectRefused(w, { type: 'turn/start', data: { turn: 3 } }, 'L2')
    expect(w.append({ type: 'turn/start', data: { turn: 2 } }).seq).toBe(w.next - 1)
  })

  it('L2: turn/end while a step is open is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    expectRefused(w, { type: 'turn/end', data: { turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } } }, 'L2')
  })

  it('L2: turn/end naming another turn is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.claim()
    expectRefused(w, { type: 'turn/end', data: { turn: 2, reason: { kind: 'blocked' } } }, 'L2')
  })

  it('L2: session/end-seed inside an open turn is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    expectRefused(w, { type: 'session/end-seed', data: {} }, 'L2')
  })
})

describe('L3 steps', () => {
  it('L3: step/start outside a turn is refused', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    expectRefused(w, { type: 'step/start', data: { turn: 1, step: 2 } }, 'L3')
  })

  it('L3: steps count from 1 in each turn', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    w.send(um('m2'))
    w.turnStart()
    w.claim()
    expectRefused(w, { type: 'step/start', data: { turn: 2, step: 2 } }, 'L3')
    w.append({ type: 'step/start', data: { turn: 2, step: 1 } })
  })

  it('L3: step/end naming another step is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.stream([text('a')], 'stop')
    w.message([text('a')], 'stop')
    expectRefused(w, { type: 'step/end', data: { turn: 1, step: 2, outcome: { kind: 'stop' } } }, 'L3')
  })
})

describe('L4 where content stands', () => {
  it('L4: assistant/chunk naming another step is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    expectRefused(w, { type: 'assistant/chunk', data: { turn: 1, step: 2, chunk: { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } } } }, 'L4')
  })

  it('L4: request/header outside a step is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    expectRefused(w, { type: 'request/header', data: { reason: 'initial', config: { model: 'm' }, system: '', tools: [] } }, 'L4')
  })

  it('L4: an appended user/message outside a step is refused, a replacing one is not', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    expectRefused(w, { type: 'user/message', data: { message: um('x') }, surfaceOp: 'append' }, 'L4')
    const first = w.session.events.find((e) => e.type === 'user/message')!.seq
    w.append({ type: 'user/message', data: { message: um('x', 'summary', { kind: 'compaction' }) }, surfaceOp: { op: 'replace', start: first, end: first }, sourceEventSeqs: [first] })
  })

  it('L4: llm/retry while the failed step is still open is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.chunk({ type: 'finish', reason: 'error', failure: fail('SERVER') })
    expectRefused(w, { type: 'llm/retry', data: { turn: 1, step: 1, attempt: 1, delayMs: 0, failure: fail('SERVER') } }, 'L4')
  })

  it('L4: llm/retry after a step that did not fail is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.textStep('ok', w.claim())
    expectRefused(w, { type: 'llm/retry', data: { turn: 1, step: 1, attempt: 1, delayMs: 0, failure: fail('SERVER') } }, 'L4')
  })

  it('L4: a second llm/retry for one failed step is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.failedStep('SERVER', w.claim())
    w.append({ type: 'llm/retry', data: { turn: 1, step: 1, attempt: 1, delayMs: 0, failure: fail('SERVER') } })
    expectRefused(w, { type: 'llm/retry', data: { turn: 1, step: 1, attempt: 2, delayMs: 0, failure: fail('SERVER') } }, 'L4')
  })
})

/** A step with a tool-calls message of `ids`, no calls yet. */
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

describe('L5 every call answered once', () => {
  it('L5: tool/result without its tool/call is refused', () => {
    const w = toolMessage(['a'])
    expectRefused(w, w.resultDraft('a'), 'L5')
  })

  it('L5: step/end with an unanswered tool/call is refused', () => {
    const w = toolMessage(['a', 'b'])
    w.call('a')
    w.call('b')
    w.result('a')
    expectRefused(w, { type: 'step/end', data: { turn: 1, step: 1, outcome: { kind: 'tools' } } }, 'L5')
    w.result('b')
    w.stepEnd({ kind: 'tools' })
  })

  it('L5: a second tool/result for one call is refused', () => {
    const w = toolMessage(['a'])
    w.call('a')
    w.result('a')
    expectRefused(w, w.resultDraft('a', 'again'), 'L5')
  })

  it('L5: a callId used twice in a step is refused', () => {
    const w = toolMessage(['a', 'a'])
    w.call('a')
    expectRefused(w, { type: 'tool/call', data: { turn: 1, step: 1, callId: 'a', name: 'echo', arguments: '{}' } }, 'L5')
  })
})

describe('L6 model order', () => {
  it('L6: tool/call out of the block order is refused', () => {
    const w = toolMessage(['a', 'b'])
    w.call('b')
    expectRefused(w, { type: 'tool/call', data: { turn: 1, step: 1, callId: 'a', name: 'echo', arguments: '{}' } }, 'L6')
  })

  it('L6: tool/result out of the call order is refused', () => {
    const w = toolMessage(['a', 'b'])
    w.call('a')
    w.call('b')
    expectRefused(w, w.resultDraft('b'), 'L6')
    w.result('a')
    w.result('b')
  })

  it('L6: tool/call before the assistant/message is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.stream([toolBlock('a')], 'tool-calls')
    expectRefused(w, { type: 'tool/call', data: { turn: 1, step: 1, callId: 'a', name: 'echo', arguments: '{}' } }, 'L6')
  })

  it('L6: tool/call naming no block of the message is refused', () => {
    const w = toolMessage(['a'])
    expectRefused(w, { type: 'tool/call', data: { turn: 1, step: 1, callId: 'zz', name: 'echo', arguments: '{}' } }, 'L6')
  })
})

describe('L7 the message cites its chunks', () => {
  function streamed(): LogWriter {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.stream([text('hi')], 'stop')
    return w
  }
  const msg = (w: LogWriter, sourceEventSeqs: number[]): EventDraft => ({
    type: 'assistant/message',
    data: { turn: 1, step: 1, message: { role: 'assistant', content: [text('hi')] }, finish: 'stop' },
    surfaceOp: 'append',
    sourceEventSeqs,
  })

  it('L7: assistant/message citing a chunk less is refused', () => {
    const w = streamed()
    expectRefused(w, msg(w, w.chunks.slice(1)), 'L7')
    w.message([text('hi')], 'stop')
  })

  it('L7: assistant/message citing its chunks out of order is refused', () => {
    const w = streamed()
    expectRefused(w, msg(w, [...w.chunks].reverse()), 'L7')
  })

  it('L7: a chunk after the step assistant/message is refused', () => {
    const w = streamed()
    w.message([text('hi')], 'stop')
    expectRefused(w, { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 5, blockType: 'text' } } }, 'L7')
  })

  it('L7: a second non-interrupted assistant/message in a step is refused', () => {
    const w = streamed()
    w.message([text('hi')], 'stop')
    expectRefused(w, msg(w, w.chunks), 'L7')
  })
})

describe('L8 surface rules', () => {
  function twoTurns(): { w: LogWriter; msgs: number[] } {
    const w = new LogWriter()
    w.simpleTurn('m1')
    w.simpleTurn('m2')
    const msgs = w.session.events.filter((e) => e.type === 'user/message' || e.type === 'assistant/message').map((e) => e.seq)
    return { w, msgs }
  }
  const summary = (start: number, end: number, cites: number[]): EventDraft => ({
    type: 'user/message',
    data: { message: um(`sum-${start}-${end}`, 'summary', { kind: 'compaction' }) },
    surfaceOp: { op: 'replace', start, end },
    sourceEventSeqs: cites,
  })

  it('L8: surfaceOp on a non-surface type is refused', () => {
    const w = new LogWriter()
    expectRefused(w, { type: 'turn/start', data: { turn: 1 }, surfaceOp: 'append' }, 'L8')
  })

  it('L8: a surface type without surfaceOp is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart()
    expectRefused(w, { type: 'user/message', data: { message: um('m9') } }, 'L8')
  })

  it('L8: sourceEventSeqs citing a later seq is refused', () => {
    const w = toolMessage(['a'])
    w.call('a')
    expectRefused(w, { ...w.resultDraft('a'), sourceEventSeqs: [w.next] }, 'L8')
  })

  it('L8: a replace whose start is not a current surface seq is refused', () => {
    const { w, msgs } = twoTurns()
    expectRefused(w, summary(0, msgs[1]!, [0, msgs[0]!, msgs[1]!]), 'L8')
  })

  it('L8: a replace whose start comes after its end on the surface is refused', () => {
    const { w, msgs } = twoTurns()
    expectRefused(w, summary(msgs[2]!, msgs[0]!, msgs.slice(0, 3)), 'L8')
  })

  it('L8: a replace must cite every seq it hides', () => {
    const { w, msgs } = twoTurns()
    expectRefused(w, summary(msgs[0]!, msgs[2]!, [msgs[0]!, msgs[2]!]), 'L8')
    w.append(summary(msgs[0]!, msgs[2]!, msgs.slice(0, 3)))
    // the hidden seqs are gone from the surface: replacing one again is refused
    expectRefused(w, summary(msgs[1]!, msgs[1]!, [msgs[1]!]), 'L8')
  })

  it('L8: a tool/result replacement must hide one tool/result of the same callId', () => {
    const w = toolMessage(['a', 'b'])
    w.call('a')
    w.call('b')
    const ra = w.result('a')
    const rb = w.result('b')
    w.stepEnd({ kind: 'tools' })
    const replace = (callId: string, start: number, end: number): EventDraft => ({
      type: 'tool/result',
      data: { turn: 1, step: 1, callId, message: { role: 'tool', callId, content: [text('…')] } },
      surfaceOp: { op: 'replace', start, end },
      sourceEventSeqs: start === end ? [start] : [start, end],
    })
    expectRefused(w, replace('b', ra, ra), 'L8')
    expectRefused(w, replace('a', ra, rb), 'L8')
    w.append(replace('a', ra, ra))
  })
})

describe('L9 stream grammar', () => {
  it('L9: a delta for a block that is not open is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    expectRefused(w, { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } } }, 'L9')
  })

  it('L9: finish with a block still open is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.chunk({ type: 'block-start', index: 0, blockType: 'text' })
    expectRefused(w, { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'finish', reason: 'stop' } } }, 'L9')
    w.chunk({ type: 'block-end', index: 0 })
    w.chunk({ type: 'finish', reason: 'stop' })
  })

  it('L9: an assistant/message whose finish differs from the stream finish is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.stream([text('a')], 'stop')
    expectRefused(w, {
      type: 'assistant/message',
      data: { turn: 1, step: 1, message: { role: 'assistant', content: [text('a')] }, finish: 'max-tokens' },
      surfaceOp: 'append',
      sourceEventSeqs: [...w.chunks],
    }, 'L9')
  })

  it('L9: a non-interrupted assistant/message without a finish chunk is refused, an interrupted one is not', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.stream([text('a')], null)
    expectRefused(w, {
      type: 'assistant/message',
      data: { turn: 1, step: 1, message: { role: 'assistant', content: [text('a')] }, finish: 'stop' },
      surfaceOp: 'append',
      sourceEventSeqs: [...w.chunks],
    }, 'L9')
    w.message([text('a')], 'stop', true)
    w.stepEnd({ kind: 'aborted' })
    w.turnEnd({ kind: 'aborted', cause: { kind: 'user' } })
  })
})

describe('L10 max-tokens runs no tool', () => {
  it('L10: tool/call after a max-tokens assistant/message is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.stream([toolBlock('a')], 'max-tokens')
    w.message([toolBlock('a')], 'max-tokens')
    expectRefused(w, { type: 'tool/call', data: { turn: 1, step: 1, callId: 'a', name: 'echo', arguments: '{}' } }, 'L10')
    w.stepEnd({ kind: 'max-tokens' })
    w.turnEnd({ kind: 'max-tokens' })
  })

  it('L10: step/end max-tokens without a max-tokens assistant/message is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    w.stream([text('a')], 'stop')
    w.message([text('a')], 'stop')
    expectRefused(w, { type: 'step/end', data: { turn: 1, step: 1, outcome: { kind: 'max-tokens' } } }, 'L10')
  })
})

describe('L11 inbox conservation', () => {
  const splice = (data: Extract<EventDraft, { type: 'agent/inbox/spliced' }>['data']): EventDraft => ({ type: 'agent/inbox/spliced', data })

  it('L11: a claim with no turn open is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    expectRefused(w, splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [] }), 'L11')
  })

  it('L11: a claim not at start 0 is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.send(um('m2'))
    w.turnStart()
    expectRefused(w, splice({ target: 'next-turn', start: 1, removedCount: 1, inserted: [] }), 'L11')
  })

  it('L11: a splice beyond the list is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    expectRefused(w, splice({ target: 'next-turn', start: 0, removedCount: 2, inserted: [], outcome: 'canceled' }), 'L11')
    expectRefused(w, splice({ target: 'next-step', start: 1, inserted: [um('m2')] }), 'L11')
  })

  it('L11: inserting an id pending in either list is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    expectRefused(w, splice({ target: 'next-step', start: 0, inserted: [um('m1')] }), 'L11')
    // a replace that keeps the id removes it first, so it is not a duplicate
    w.append(splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [um('m1', 'edited')], outcome: 'canceled' }))
  })

  it('L11: a claimed id is never pending again', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    expectRefused(w, splice({ target: 'next-turn', start: 0, inserted: [um('m1')] }), 'L11')
  })

  it('L11: a canceled id may be sent again', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.append(splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' }))
    w.append(splice({ target: 'next-turn', start: 0, inserted: [um('m1')] }))
  })

  it('L11: a splice that removes and inserts nothing is refused', () => {
    const w = new LogWriter()
    expectRefused(w, splice({ target: 'next-step', start: 0, inserted: [] }), 'L11')
  })

  it('L11: a user/message id twice in a log is refused', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    w.send(um('m2'))
    w.turnStart()
    w.stepStart(w.claim())
    expectRefused(w, { type: 'user/message', data: { message: um('m1') }, surfaceOp: 'append' }, 'L11')
  })

  it('L11: a user/message whose id is still pending is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.send(um('s1'), 'next-step')
    w.turnStart()
    w.append(splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [] }))
    w.stepStart([um('m1')])
    expectRefused(w, { type: 'user/message', data: { message: um('s1') }, surfaceOp: 'append' }, 'L11')
  })
})

describe('L12 turn end reasons', () => {
  it('L12: a max-tokens turn without a max-tokens step is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.textStep('a', w.claim())
    expectRefused(w, { type: 'turn/end', data: { turn: 1, reason: { kind: 'max-tokens' } } }, 'L12')
    w.turnEnd()
  })

  it('L12: a completed turn whose last step ended tools is refused', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.toolStep(['a'], w.claim())
    expectRefused(w, { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } }, 'L12')
  })

  it('L12: a step-limit turn needs exactly maxStepsPerTurn steps', () => {
    const w = new LogWriter({ maxStepsPerTurn: 3 })
    w.send(um('m1'))
    w.turnStart()
    w.toolStep(['a'], w.claim())
    w.toolStep(['b'])
    expectRefused(w, { type: 'turn/end', data: { turn: 1, reason: { kind: 'step-limit' } } }, 'L12')
    w.toolStep(['c'])
    w.turnEnd({ kind: 'step-limit' })
  })

  it('L12: a turn whose last step failed ends error or aborted, not blocked', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.failedStep('SERVER', w.claim())
    expectRefused(w, { type: 'turn/end', data: { turn: 1, reason: { kind: 'blocked' } } }, 'L12')
    expectRefused(w, { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } }, 'L12')
    w.turnEnd({ kind: 'error', failure: fail('SERVER') })
  })

  it('L12: the synthetic closers (interrupted, forked) may close a turn whose last step failed', () => {
    for (const kind of ['interrupted', 'forked'] as const) {
      const w = new LogWriter()
      w.send(um('m1'))
      w.turnStart()
      w.failedStep('SERVER', w.claim())
      w.turnEnd({ kind })
    }
  })
})

describe('L13 retry turns', () => {
  function failedTurn(): LogWriter {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.failedStep('SERVER', w.claim())
    return w
  }

  it('L13: a retry turn directly after the failed turn is accepted; one after another event is refused', () => {
    const w = failedTurn()
    w.turnEnd({ kind: 'error', failure: fail('SERVER') })
    w.send(um('m2'))
    expectRefused(w, { type: 'turn/start', data: { turn: 2, cause: { kind: 'retry', of: 1 } } }, 'L13')
    const v = failedTurn()
    v.turnEnd({ kind: 'error', failure: fail('SERVER') })
    v.turnStart(1)
  })

  it('L13: a retry of a turn that ended aborted is refused (cancellation beats retry)', () => {
    const w = failedTurn()
    w.turnEnd({ kind: 'aborted', cause: { kind: 'user' } })
    expectRefused(w, { type: 'turn/start', data: { turn: 2, cause: { kind: 'retry', of: 1 } } }, 'L13')
  })

  it('L13: a retry turn naming another turn than the one it follows is refused', () => {
    const w = new LogWriter()
    w.simpleTurn('m0')
    w.send(um('m1'))
    w.turnStart()
    w.failedStep('SERVER', w.claim())
    w.turnEnd({ kind: 'error', failure: fail('SERVER') })
    expectRefused(w, { type: 'turn/start', data: { turn: 3, cause: { kind: 'retry', of: 1 } } }, 'L13')
  })
})

describe('L14 compaction brackets', () => {
  function idle(): { w: LogWriter; first: number } {
    const w = new LogWriter()
    w.simpleTurn('m1')
    return { w, first: w.session.events.find((e) => e.type === 'user/message')!.seq }
  }

  it('L14: a nested compaction/start is refused', () => {
    const { w } = idle()
    w.append({ type: 'compaction/start', data: { compactionId: 'k1', turn: 1 } })
    expectRefused(w, { type: 'compaction/start', data: { compactionId: 'k2', turn: 1 } }, 'L14')
  })

  it('L14: a successful compaction/end without a summary is refused; with an error it is accepted', () => {
    const { w } = idle()
    w.append({ type: 'compaction/start', data: { compactionId: 'k1', turn: 1 } })
    expectRefused(w, { type: 'compaction/end', data: { compactionId: 'k1' } }, 'L14')
    w.append({ type: 'compaction/end', data: { compactionId: 'k1', error: { code: 'X', message: 'x' } } })
  })

  it('L14: the event after compaction/summary must be its replacing user/message', () => {
    const { w, first } = idle()
    w.append({ type: 'compaction/start', data: { compactionId: 'k1', turn: 1 } })
    w.append({ type: 'compaction/summary', data: { compactionId: 'k1', summary: 's', shadowedSeqs: [first] } })
    expectRefused(w, { type: 'compaction/end', data: { compactionId: 'k1' } }, 'L14')
    expectRefused(w, { type: 'user/message', data: { message: um('s', 's', { kind: 'user' }) }, surfaceOp: { op: 'replace', start: first, end: first }, sourceEventSeqs: [first] }, 'L14')
    w.append({ type: 'user/message', data: { message: um('s', 's', { kind: 'compaction' }) }, surfaceOp: { op: 'replace', start: first, end: first }, sourceEventSeqs: [first] })
    w.append({ type: 'compaction/end', data: { compactionId: 'k1' } })
  })

  it('L14: turn/start while a bracket is open is refused', () => {
    const { w } = idle()
    w.send(um('m2'))
    w.append({ type: 'compaction/start', data: { compactionId: 'k1', turn: 1 } })
    expectRefused(w, { type: 'turn/start', data: { turn: 2 } }, 'L14')
  })
})

describe('L15 prune then replace', () => {
  function pruned(): { w: LogWriter; r: number } {
    const w = toolMessage(['a'])
    w.call('a')
    const r = w.result('a', 'x'.repeat(100))
    w.stepEnd({ kind: 'tools' })
    w.append({ type: 'compaction/prune', data: { callId: 'a', shadowedSeq: r, originalChars: 100 } })
    return { w, r }
  }

  it('L15: compaction/prune followed by anything but its replacing tool/result is refused', () => {
    const { w, r } = pruned()
    expectRefused(w, { type: 'step/start', data: { turn: 1, step: 2 } }, 'L15')
    w.append({
      type: 'tool/result',
      data: { turn: 1, step: 1, callId: 'a', message: { role: 'tool', callId: 'a', content: [text('x…x')] } },
      surfaceOp: { op: 'replace', start: r, end: r },
      sourceEventSeqs: [r],
    })
    w.append({ type: 'step/start', data: { turn: 1, step: 2 } })
  })
})

describe('L16 retry attempts', () => {
  const retry = (turn: number, attempt: number): EventDraft => ({ type: 'llm/retry', data: { turn, step: 1, attempt, delayMs: 500, failure: fail('RATE_LIMIT') } })

  it('L16: the first attempt of a chain is 1', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.failedStep('RATE_LIMIT', w.claim())
    expectRefused(w, retry(1, 2), 'L16')
    w.append(retry(1, 1))
  })

  it('L16: attempts count through retry turns and never exceed maxRetries', () => {
    const w = new LogWriter({ maxRetries: 2 })
    w.send(um('m1'))
    w.turnStart()
    w.failedStep('RATE_LIMIT', w.claim())
    w.append(retry(1, 1))
    w.turnEnd({ kind: 'error', failure: fail('RATE_LIMIT') })
    w.turnStart(1)
    w.failedStep('RATE_LIMIT')
    expectRefused(w, retry(2, 1), 'L16')
    w.append(retry(2, 2))
    w.turnEnd({ kind: 'error', failure: fail('RATE_LIMIT') })
    w.turnStart(2)
    w.failedStep('RATE_LIMIT')
    expectRefused(w, retry(3, 3), 'L16')
  })
})

describe('the refusal itself', () => {
  it('L5: the INVARIANT error carries every violation and the event type', () => {
    const w = toolMessage(['a'])
    const err = expectRefused(w, w.resultDraft('a'), 'L5')
    expect(err.eventType).toBe('tool/result')
    expect((err.info?.violations as unknown[]).length).toBeGreaterThan(0)
    expect(TurnlogError.is(err, 'INVARIANT')).toBe(true)
  })
})
