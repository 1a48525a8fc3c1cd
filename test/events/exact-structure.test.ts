/**
 * Turn and step structure (events/invariants/structure.ts), one rule at a time: a log that breaks
 * exactly that rule gives exactly that violation (invariant, seq, message), and the nearest valid
 * event gives none. L2 turns, L3 steps, L4 where content stands. The messages are what
 * `turnlog verify` prints, so each is asserted whole (issue 15 part 3).
 */
import { describe, it } from 'vitest'
import type { EventDraft } from '../../events/envelope.js'
import { LogWriter, fail, text, toolBlock, um } from './log-writer.js'
import { expectAfter, expectClean, expectExactly, forced } from './exact.js'

const turnStart = (turn: number): EventDraft => ({ type: 'turn/start', data: { turn } })
const turnEnd = (turn: number, kind: 'completed' | 'blocked' = 'completed'): EventDraft => ({ type: 'turn/end', data: { turn, reason: { kind } } })
const stepStart = (turn: number, step: number): EventDraft => ({ type: 'step/start', data: { turn, step } })
const stepEnd = (turn: number, step: number): EventDraft => ({ type: 'step/end', data: { turn, step, outcome: { kind: 'stop' } } })
const chunk = (turn: number, step: number): EventDraft => ({ type: 'assistant/chunk', data: { turn, step, chunk: { type: 'block-start', index: 0, blockType: 'text' } } })
const call = (turn: number, step: number): EventDraft => ({ type: 'tool/call', data: { turn, step, callId: 'a', name: 'echo', arguments: '{}' } })
const message = (turn: number, step: number, sources: number[] = []): EventDraft => ({
  type: 'assistant/message',
  data: { turn, step, message: { role: 'assistant', content: [text('x')] }, finish: 'stop', interrupted: true },
  surfaceOp: 'append',
  sourceEventSeqs: sources,
})
const result = (turn: number, step: number, source: number): EventDraft => ({
  type: 'tool/result',
  data: { turn, step, callId: 'a', message: { role: 'tool', callId: 'a', content: [text('ok')] } },
  surfaceOp: 'append',
  sourceEventSeqs: [source],
})
const header: EventDraft = { type: 'request/header', data: { reason: 'initial', config: { model: 'm' }, system: '', tools: [] } }
const retry = (turn: number, step: number, attempt = 1): EventDraft => ({ type: 'llm/retry', data: { turn, step, attempt, delayMs: 0, failure: fail('SERVER') } })

/** Turn 1 open (m1 claimed), no step yet. */
function inTurn(): LogWriter {
  const w = new LogWriter()
  w.send(um('m1'))
  w.turnStart()
  w.claim()
  return w
}

/** Turn 1, step 1 open. */
function inStep(): LogWriter {
  const w = inTurn()
  w.stepStart()
  return w
}

describe('L2 turns, exact verdicts', () => {
  it('L2: turn/start while a turn is open names both turns; turn/start 1 on an empty log is clean', () => {
    const w = inTurn()
    expectExactly(w, turnStart(2), [['L2', 'turn/start 2 while turn 1 is open']])
    expectClean(new LogWriter(), turnStart(1))
  })

  it('L2: turn/start must be numbered last + 1 (not repeated, not skipped)', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    expectExactly(w, turnStart(1), [['L2', 'turn/start 1: the next turn is 2']])
    expectExactly(w, turnStart(3), [['L2', 'turn/start 3: the next turn is 2']])
    expectClean(w, turnStart(2))
    expectExactly(new LogWriter(), turnStart(2), [['L2', 'turn/start 2: the next turn is 1']])
  })

  it('L2: an open turn started twice gives both L2 messages', () => {
    const w = inTurn()
    expectExactly(w, turnStart(1), [['L2', 'turn/start 1 while turn 1 is open'], ['L2', 'turn/start 1: the next turn is 2']])
  })

  it('L2: turn/end with no turn open is reported (and nothing else is judged)', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    expectExactly(w, turnEnd(1), [['L2', 'turn/end 1 with no turn open']])
    expectExactly(new LogWriter(), { type: 'turn/end', data: { turn: 1, reason: { kind: 'step-limit' } } }, [['L2', 'turn/end 1 with no turn open']])
  })

  it('L2: turn/end naming another turn names both', () => {
    const w = inTurn()
    expectExactly(w, turnEnd(2), [['L2', 'turn/end names turn 2, but turn 1 is open']])
    expectClean(w, turnEnd(1))
  })

  it('L2: turn/end while a step is open names the step', () => {
    const w = inStep()
    expectExactly(w, turnEnd(1, 'blocked'), [['L2', 'turn/end while step 1 is open']])
  })

  it('L2: session/end-seed inside a turn names the turn; between turns it is clean', () => {
    const w = inTurn()
    expectExactly(w, { type: 'session/end-seed', data: {} }, [['L2', 'session/end-seed while turn 1 is open']])
    const idle = new LogWriter()
    idle.simpleTurn('m1')
    expectClean(idle, { type: 'session/end-seed', data: {} })
  })
})

describe('L3 steps, exact verdicts', () => {
  it('L3: step/start with no turn open', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    expectExactly(w, stepStart(1, 2), [['L3', 'step/start 1.2 with no turn open']])
  })

  it('L3: step/start naming another turn', () => {
    const w = inTurn()
    expectExactly(w, stepStart(2, 1), [['L3', 'step/start names turn 2, but turn 1 is open']])
    expectClean(w, stepStart(1, 1))
  })

  it('L3: step/start while a step is open (and numbered past it)', () => {
    const w = inStep()
    expectExactly(w, stepStart(1, 2), [['L3', 'step/start 2 while step 1 is open']])
  })

  it('L3: steps count from 1 in each turn, last + 1', () => {
    const w = inTurn()
    expectExactly(w, stepStart(1, 2), [['L3', 'step/start 2: the next step of the turn is 1']])
    w.textStep('a')
    expectExactly(w, stepStart(1, 1), [['L3', 'step/start 1: the next step of the turn is 2']])
    expectExactly(w, stepStart(1, 3), [['L3', 'step/start 3: the next step of the turn is 2']])
    expectClean(w, stepStart(1, 2))
    w.turnEnd()
    w.send(um('m2'))
    w.turnStart()
    w.claim()
    // a new turn counts its steps from 1 again
    expectExactly(w, stepStart(2, 2), [['L3', 'step/start 2: the next step of the turn is 1']])
    expectClean(w, stepStart(2, 1))
  })

  it('L3: step/end with no step open', () => {
    const w = inTurn()
    expectExactly(w, stepEnd(1, 1), [['L3', 'step/end 1.1 with no step open']])
  })

  it('L3: step/end naming another step, or the same step of another turn', () => {
    const w = inStep()
    w.stream([text('t')], 'stop')
    w.message([text('t')], 'stop')
    expectExactly(w, stepEnd(1, 2), [['L3', 'step/end names 1.2, but step 1.1 is open']])
    expectExactly(w, stepEnd(2, 1), [['L3', 'step/end names 2.1, but step 1.1 is open']])
    expectClean(w, stepEnd(1, 1))
  })
})

describe('L4 content inside an open step, exact verdicts', () => {
  it('L4: assistant/chunk outside an open step, or naming another step', () => {
    const w = inTurn()
    expectExactly(w, chunk(1, 1), [['L4', 'assistant/chunk 1.1 outside an open step']])
    w.stepStart()
    expectExactly(w, chunk(1, 2), [['L4', 'assistant/chunk names 1.2, but step 1.1 is open']])
    expectExactly(w, chunk(2, 1), [['L4', 'assistant/chunk names 2.1, but step 1.1 is open']])
    expectClean(w, chunk(1, 1))
  })

  it('L4: tool/call outside an open step, or naming another step', () => {
    const w = inTurn()
    expectExactly(w, call(1, 1), [['L4', 'tool/call 1.1 outside an open step']])
    w.stepStart()
    w.stream([toolBlock('a')], 'tool-calls')
    w.message([toolBlock('a')], 'tool-calls')
    expectExactly(w, call(1, 2), [['L4', 'tool/call names 1.2, but step 1.1 is open']])
    expectClean(w, call(1, 1))
  })

  it('L4: an appended assistant/message outside an open step, or naming another step', () => {
    const w = inTurn()
    expectExactly(w, message(1, 1), [['L4', 'appended assistant/message 1.1 outside an open step']])
    w.stepStart()
    expectExactly(w, message(1, 3), [['L4', 'appended assistant/message names 1.3, but step 1.1 is open']])
    expectClean(w, message(1, 1))
  })

  it('L4: an appended tool/result outside an open step, or naming another step', () => {
    const w = inStep()
    w.stream([toolBlock('a')], 'tool-calls')
    w.message([toolBlock('a')], 'tool-calls')
    const c = w.call('a')
    expectExactly(w, result(1, 2, c), [['L4', 'appended tool/result names 1.2, but step 1.1 is open']])
    expectClean(w, result(1, 1, c))
    w.result('a')
    w.stepEnd({ kind: 'tools' })
    expectExactly(w, result(1, 1, c), [['L4', 'appended tool/result 1.1 outside an open step']])
  })

  it('L4: request/header outside an open step; inside one it is clean', () => {
    const w = inTurn()
    expectExactly(w, header, [['L4', 'request/header outside an open step']])
    w.stepStart()
    expectClean(w, header)
  })

  it('L4: an appended user/message outside an open step; inside one it is clean', () => {
    const w = inTurn()
    const draft: EventDraft = { type: 'user/message', data: { message: um('x') }, surfaceOp: 'append' }
    expectExactly(w, draft, [['L4', 'appended user/message outside an open step']])
    w.stepStart()
    expectClean(w, draft)
  })
})

describe('L4 llm/retry placement, exact verdicts', () => {
  it('L4: llm/retry with no turn open', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    expectExactly(w, retry(1, 1), [['L4', 'llm/retry with no turn open']])
  })

  it('L4: llm/retry while a step is open names the step', () => {
    const w = inStep()
    expectExactly(w, retry(1, 1), [['L4', 'llm/retry while step 1 is open']])
  })

  it('L4: llm/retry before any step of the turn: the last step does not exist', () => {
    const w = inTurn()
    expectExactly(w, retry(1, 1), [['L4', "llm/retry, but the turn's last step does not exist"]])
  })

  it('L4: llm/retry after a step that ended stop names the outcome', () => {
    const w = inTurn()
    w.textStep('a')
    expectExactly(w, retry(1, 1), [['L4', "llm/retry, but the turn's last step ended stop"]])
  })

  it("L4: a new turn forgets the previous turn's failed step", () => {
    const w = inTurn()
    w.failedStep('SERVER')
    w.turnEnd({ kind: 'error', failure: fail('SERVER') })
    w.send(um('m2'))
    w.turnStart()
    w.claim()
    expectExactly(w, retry(2, 1), [['L4', "llm/retry, but the turn's last step does not exist"]])
  })

  it('L4: llm/retry naming another step or turn than the failed one names both', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    expectExactly(w, retry(1, 2), [['L4', 'llm/retry names 1.2, but the failed step is 1.1']])
    expectExactly(w, retry(2, 1), [['L4', 'llm/retry names 2.1, but the failed step is 1.1']])
    expectClean(w, retry(1, 1))
  })

  it('L4: a second llm/retry for one failed step (attempt 2 is the right count, so L16 holds)', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    w.append(retry(1, 1, 1))
    expectExactly(w, retry(1, 1, 2), [['L4', 'a second llm/retry for the failed step 1.1']])
    // the next failed step may be retried again
    w.failedStep('SERVER')
    expectClean(w, retry(1, 2, 2))
  })
})

describe('L2, L3 best effort after a violation', () => {
  it('L2: a turn/end naming the wrong turn still closes the open turn', () => {
    const w = inTurn()
    const events = forced(w.session.events, turnEnd(7))
    expectAfter(events, turnStart(2), [])
    expectAfter(events, stepStart(1, 1), [['L3', 'step/start 1.1 with no turn open']])
  })
})
