/**
 * Turn-level rules of events/invariants/structure.ts, one at a time, with their exact verdicts
 * (invariant, seq, message): L12 (turn end reasons against step outcomes), L13 (retry and resume
 * turns), L16 (retry attempts). The nearest valid event of each case gives no violation.
 */
import { describe, it } from 'vitest'
import type { EventDraft } from '../../events/envelope.js'
import { LogWriter, fail, um } from './log-writer.js'
import { expectAfter, expectClean, expectExactly, forced } from './exact.js'

type Reason = Extract<EventDraft, { type: 'turn/end' }>['data']['reason']
const end = (turn: number, reason: Reason): EventDraft => ({ type: 'turn/end', data: { turn, reason } })
const kind = (k: 'completed' | 'max-tokens' | 'step-limit' | 'blocked' | 'interrupted' | 'forked'): Reason => ({ kind: k })
const errorReason: Reason = { kind: 'error', failure: fail('SERVER') }
const abortedReason: Reason = { kind: 'aborted', cause: { kind: 'user' } }
const retryTurn = (turn: number, of: number): EventDraft => ({ type: 'turn/start', data: { turn, cause: { kind: 'retry', of } } })
const resumeTurn = (turn: number, of: number, maxResumeRuns?: number): EventDraft =>
  ({ type: 'turn/start', data: { turn, cause: { kind: 'resume', of, ...(maxResumeRuns !== undefined ? { maxResumeRuns } : {}) } } })
const retry = (turn: number, step: number, attempt: number): EventDraft => ({ type: 'llm/retry', data: { turn, step, attempt, delayMs: 0, failure: fail('SERVER') } })

function inTurn(): LogWriter {
  const w = new LogWriter()
  w.send(um('m1'))
  w.turnStart()
  w.claim()
  return w
}

/** A step that ends max-tokens (message max-tokens, no calls). */
function maxTokensStep(w: LogWriter): void {
  w.stepStart()
  w.stream([{ type: 'text', text: 'long' }], 'max-tokens')
  w.message([{ type: 'text', text: 'long' }], 'max-tokens')
  w.stepEnd({ kind: 'max-tokens' })
}

describe('L12 turn end reasons, exact verdicts', () => {
  it('L12: max-tokens needs a max-tokens step of the same turn', () => {
    const w = inTurn()
    w.textStep('a')
    expectExactly(w, end(1, kind('max-tokens')), [['L12', 'turn ended max-tokens, but no step of it ended max-tokens']])
    maxTokensStep(w)
    expectClean(w, end(1, kind('max-tokens')))
    w.turnEnd(kind('max-tokens'))
    // the next turn starts without a max-tokens step
    w.send(um('m2'))
    w.turnStart()
    w.claim()
    w.textStep('b')
    expectExactly(w, end(2, kind('max-tokens')), [['L12', 'turn ended max-tokens, but no step of it ended max-tokens']])
  })

  it('L12: completed needs no step, or a last step that ended stop or concluded', () => {
    const w = inTurn()
    expectClean(w, end(1, kind('completed')))
    w.toolStep(['a'])
    expectExactly(w, end(1, kind('completed')), [['L12', 'turn ended completed, but its last step ended tools, not stop or concluded']])
    w.stepStart()
    w.stepEnd({ kind: 'concluded' })
    expectClean(w, end(1, kind('completed')))
    w.textStep('b')
    expectClean(w, end(1, kind('completed')))
  })

  it('L12: completed while a step is open says so (with L2)', () => {
    const w = inTurn()
    w.stepStart()
    expectExactly(w, end(1, kind('completed')), [
      ['L2', 'turn/end while step 1 is open'],
      ['L12', 'turn ended completed, but its last step ended (still open), not stop or concluded'],
    ])
  })

  it('L12: step-limit needs exactly maxStepsPerTurn steps (default 64)', () => {
    const w = inTurn()
    w.toolStep(['a'])
    expectExactly(w, end(1, kind('step-limit')), [['L12', 'turn ended step-limit after 1 step(s); the budget is 64']])
    expectClean(w, end(1, kind('step-limit')), { maxStepsPerTurn: 1 })
    expectExactly(w, end(1, kind('step-limit')), [['L12', 'turn ended step-limit after 1 step(s); the budget is 2']], { maxStepsPerTurn: 2 })
    const none = inTurn()
    expectExactly(none, end(1, kind('step-limit')), [['L12', 'turn ended step-limit after 0 step(s); the budget is 64']])
  })

  it('L12: a turn whose last step failed ends error or aborted, or is closed by a synthetic closer', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    expectExactly(w, end(1, kind('blocked')), [['L12', 'turn ended blocked, but its last step failed (needs error or aborted)']])
    expectExactly(w, end(1, kind('completed')), [
      ['L12', 'turn ended completed, but its last step ended failed, not stop or concluded'],
      ['L12', 'turn ended completed, but its last step failed (needs error or aborted)'],
    ])
    for (const r of [errorReason, abortedReason, kind('interrupted'), kind('forked')]) expectClean(w, end(1, r))
  })

  it('L12: a failed step followed by a successful one does not constrain the end', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    w.append(retry(1, 1, 1))
    w.textStep('ok')
    expectClean(w, end(1, kind('completed')))
    expectClean(w, end(1, kind('blocked')))
  })
})

describe('L13 retry turns, exact verdicts', () => {
  /** Turn 1 with a failed last step, ended `reason`. */
  function failedTurn(reason: Reason = errorReason): LogWriter {
    const w = inTurn()
    w.failedStep('SERVER')
    w.turnEnd(reason)
    return w
  }

  it('L13: a retry turn that follows no turn/end', () => {
    expectExactly(new LogWriter(), retryTurn(1, 1), [['L13', 'retry turn 1 (of 1) does not follow a turn/end directly']])
    const w = failedTurn()
    w.append({ type: 'session/end-seed', data: {} })
    expectExactly(w, retryTurn(2, 1), [['L13', 'retry turn 2 (of 1) does not follow a turn/end directly']])
  })

  it('L13: a retry turn after an inbox splice', () => {
    const w = failedTurn()
    expectClean(w, retryTurn(2, 1))
    w.send(um('m2'))
    expectExactly(w, retryTurn(2, 1), [['L13', 'retry turn 2 (of 1) does not directly follow a turn/end: an inbox splice stands between']])
  })

  it('L13: a retry turn naming another turn than the one it follows', () => {
    const w = failedTurn()
    expectExactly(w, retryTurn(2, 2), [['L13', 'retry turn 2 says it retries turn 2, but follows the end of turn 1']])
    expectExactly(w, retryTurn(3, 1), [
      ['L2', 'turn/start 3: the next turn is 2'],
      ['L13', 'retry turn 3 says it retries turn 1, but follows the end of turn 1'],
    ])
  })

  it('L13: a retry of the turn before, after a turn/end that named another turn (best effort)', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    const events = forced(w.session.events, end(5, errorReason))
    expectAfter(events, retryTurn(2, 1), [['L13', 'retry turn 2 says it retries turn 1, but follows the end of turn 5']])
  })

  it('L13: a retry of a turn that did not end error', () => {
    expectExactly(failedTurn(abortedReason), retryTurn(2, 1), [['L13', 'retry of turn 1, which ended aborted, not error']])
    expectExactly(failedTurn(kind('interrupted')), retryTurn(2, 1), [['L13', 'retry of turn 1, which ended interrupted, not error']])
  })

  it('L13: a retry of an error turn whose last step did not fail', () => {
    const w = inTurn()
    w.textStep('a')
    w.turnEnd(errorReason)
    expectExactly(w, retryTurn(2, 1), [['L13', 'retry of turn 1, whose last step did not end failed']])
    const noStep = inTurn()
    noStep.turnEnd(errorReason)
    expectExactly(noStep, retryTurn(2, 1), [['L13', 'retry of turn 1, whose last step did not end failed']])
  })

  it('L13: an error turn ended while its failed step was still open is not retryable (best effort)', () => {
    const w = inTurn()
    w.stepStart()
    w.chunk({ type: 'finish', reason: 'error', failure: fail('SERVER') })
    const events = forced(w.session.events, end(1, errorReason))
    expectAfter(events, retryTurn(2, 1), [['L13', 'retry of turn 1, whose last step did not end failed']])
  })
})

describe('L13 retry after a turn/end with a step open', () => {
  it('L13: a turn ended while a later step was open (applied anyway) did not end on a failed step', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    w.append(retry(1, 1, 1))
    w.stepStart()
    const events = forced(w.session.events, end(1, errorReason))
    expectAfter(events, retryTurn(2, 1), [['L13', 'retry of turn 1, whose last step did not end failed']])
  })
})

describe('L13 resume turns, exact verdicts', () => {
  /** `n` turns ended interrupted, each after the first a resume of the one before. */
  /** Turns 1..n, each a resume of the one before (recording `limit` on its cause when given), each
   * closed `interrupted`; with `reached`, each turn reached its model request (a streamed step). */
  function interruptedChain(n: number, reached = false, limit?: number): LogWriter {
    const w = new LogWriter()
    for (let t = 1; t <= n; t++) {
      w.turn++
      w.step = 0
      w.append(t === 1 ? { type: 'turn/start', data: { turn: 1 } } : resumeTurn(t, t - 1, limit))
      if (reached) w.textStep('partial')
      w.turnEnd(kind('interrupted'))
    }
    return w
  }

  it('L13: a resume turn that follows no turn/end', () => {
    expectExactly(new LogWriter(), resumeTurn(1, 1), [['L13', 'resume turn 1 (of 1) does not follow a turn/end with only inbox splices between']])
  })

  it('L13: a resume turn may follow inbox splices (the re-inserted messages)', () => {
    const w = interruptedChain(1)
    w.send(um('m1'))
    w.send(um('m2'))
    expectClean(w, resumeTurn(2, 1))
  })

  it('L13: a resume turn naming another turn', () => {
    const w = interruptedChain(1)
    expectExactly(w, resumeTurn(2, 2), [['L13', 'resume turn 2 says it re-runs turn 2, but follows the end of turn 1']])
  })

  it('L13: a resume of a turn that did not end interrupted', () => {
    const w = inTurn()
    w.textStep('a')
    w.turnEnd()
    expectExactly(w, resumeTurn(2, 1), [['L13', 'resume of turn 1, which ended completed, not interrupted']])
  })

  it('L13: a chain of resume turns holds at most maxResumeRuns runs that reached their request (default 3)', () => {
    const w = interruptedChain(4, true)
    expectExactly(w, resumeTurn(5, 4), [['L13', 'resume turn 5 is resume run 4 of one chain after 3 that reached their request; at most 3 (maxResumeRuns)']])
    expectClean(w, resumeTurn(5, 4), { maxResumeRuns: 4 })
    expectExactly(interruptedChain(3, true), resumeTurn(4, 3), [['L13', 'resume turn 4 is resume run 3 of one chain after 2 that reached their request; at most 2 (maxResumeRuns)']], { maxResumeRuns: 2 })
    expectClean(interruptedChain(3, true), resumeTurn(4, 3))
  })

  it('L13: resume runs that did not reach their request are bounded at three times maxResumeRuns', () => {
    expectClean(interruptedChain(9), resumeTurn(10, 9, 3), { maxResumeRuns: 1 })
    expectExactly(interruptedChain(10), resumeTurn(11, 10),
      [['L13', 'resume turn 11 follows 9 resume runs of one chain that did not reach its request; at most 9 (3 × 3, maxResumeRuns)']])
    expectExactly(interruptedChain(4), resumeTurn(5, 4), [['L13', 'resume turn 5 follows 3 resume runs of one chain that did not reach its request; at most 3 (3 × 1, maxResumeRuns)']], { maxResumeRuns: 1 })
  })

  it('L13: the limit recorded on the resume turn\'s cause wins over the checker option', () => {
    expectClean(interruptedChain(4, true, 5), resumeTurn(5, 4, 5))
    expectExactly(interruptedChain(4, true, 5), resumeTurn(5, 4, 3),
      [['L13', 'resume turn 5 is resume run 4 of one chain after 3 that reached their request; at most 3 (recorded on its cause)']], { maxResumeRuns: 10 })
  })

  it('L13: resume/given-up follows the turn/end {interrupted} of the turn it names, with only splices between; a resume turn may follow it', () => {
    const g = (turn: number): EventDraft => ({ type: 'resume/given-up', data: { turn, reason: 'resume-runs', runs: 3, unreachedRuns: 0, maxResumeRuns: 3, messages: ['m1'] } })
    const w = interruptedChain(2)
    w.send(um('m2'))
    expectClean(w, g(2))
    expectExactly(interruptedChain(2), g(1), [['L13', "resume/given-up names turn 1, but does not follow that turn's turn/end {interrupted} with only inbox splices between"]])
    const v = inTurn()
    v.textStep('a')
    v.turnEnd()
    expectExactly(v, g(1), [['L13', "resume/given-up names turn 1, but does not follow that turn's turn/end {interrupted} with only inbox splices between"]])
    const x = interruptedChain(1)
    x.append(g(1))
    expectClean(x, resumeTurn(2, 1))
  })

  it('L13: a turn that is not a resume turn starts a new chain', () => {
    const w = interruptedChain(3, true)
    w.turn++
    w.append({ type: 'turn/start', data: { turn: 4 } })
    w.turnEnd(kind('interrupted'))
    expectClean(w, resumeTurn(5, 4), { maxResumeRuns: 1 })
  })
})

describe('L16 retry attempts, exact verdicts', () => {
  it('L16: the first attempt of a chain is 1', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    expectExactly(w, retry(1, 1, 2), [['L16', "llm/retry attempt 2: the failure chain's next attempt is 1"]])
  })

  it('L16: attempts count on through retry turns', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    w.append(retry(1, 1, 1))
    w.failedStep('SERVER')
    w.turnEnd(errorReason)
    w.turnStart(1)
    w.failedStep('SERVER')
    expectExactly(w, retry(2, 1, 1), [['L16', "llm/retry attempt 1: the failure chain's next attempt is 2"]])
    expectClean(w, retry(2, 1, 2))
  })

  it('L16: a successful step inside a retry turn does not reset the chain', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    w.append(retry(1, 1, 1))
    w.failedStep('SERVER')
    w.turnEnd(errorReason)
    w.turnStart(1)
    w.toolStep(['a'])
    w.failedStep('SERVER')
    expectExactly(w, retry(2, 2, 1), [['L16', "llm/retry attempt 1: the failure chain's next attempt is 2"]])
  })

  it('L16: a turn that is not a retry turn (a new prompt, or a resume) starts a new chain', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    w.append(retry(1, 1, 1))
    w.failedStep('SERVER')
    w.turnEnd(kind('interrupted'))
    w.turn++
    w.step = 0
    w.append(resumeTurn(2, 1))
    w.failedStep('SERVER')
    expectExactly(w, retry(2, 1, 2), [['L16', "llm/retry attempt 2: the failure chain's next attempt is 1"]])
    expectClean(w, retry(2, 1, 1))
  })

  it('L16: an attempt past the maximum names it (and the count may be right)', () => {
    const w = inTurn()
    w.failedStep('SERVER')
    w.append(retry(1, 1, 1))
    w.failedStep('SERVER')
    expectExactly(w, retry(1, 2, 2), [['L16', 'llm/retry attempt 2 exceeds the maximum 1']], { maxRetries: 1 })
    expectClean(w, retry(1, 2, 2), { maxRetries: 2 })
    expectExactly(w, retry(1, 2, 3), [
      ['L16', "llm/retry attempt 3: the failure chain's next attempt is 2"],
      ['L16', 'llm/retry attempt 3 exceeds the maximum 2'],
    ], { maxRetries: 2 })
  })

  it('L16: with the default maximum (5), attempt 6 exceeds it', () => {
    const w = inTurn()
    for (let attempt = 1; attempt <= 5; attempt++) {
      w.failedStep('SERVER')
      w.append(retry(1, attempt, attempt))
    }
    w.failedStep('SERVER')
    expectExactly(w, retry(1, 6, 6), [['L16', 'llm/retry attempt 6 exceeds the maximum 5']])
  })
})
