/**
 * The turn machine on its own (issue 15 part 3: survivors of the mutation runs). Each test drives
 * the machine as the agent does and asserts the decision it records: the state it goes to, the
 * proposal kind, the `turn/end` reason. L12 (end reasons agree with step outcomes), L13 (a retry
 * turn follows the turn it retries), R5 (cancellation wins), R7 (a hook failure ends the turn with
 * that hook's failure).
 */
import { describe, expect, it } from 'vitest'
import { createActor } from 'xstate'
import type { Failure, StepOutcome } from '../../events/index.js'
import { turnMachine, type TurnEvent } from '../../machines/index.js'

function start(input: { lastTurn?: number; maxStepsPerTurn?: number } = {}) {
  const a = createActor(turnMachine, { input }).start()
  const send = (...events: TurnEvent[]) => {
    for (const e of events) a.send(e)
    return a.getSnapshot()
  }
  return { actor: a, send, snap: () => a.getSnapshot() }
}

const step = (outcome: StepOutcome, nextStepPending = false): TurnEvent => ({ type: 'STEP_DONE', outcome, nextStepPending })
const hookFailure: Failure = { code: 'HOOK_ERROR', message: 'agent/pre-step threw: nope' }
const closed = (nextTurnPending = false, latched = false): TurnEvent => ({ type: 'CLOSED', nextTurnPending, latched })

/** Opened and proposed once: the turn is stepping its first step. */
function stepping(input?: { lastTurn?: number; maxStepsPerTurn?: number }) {
  const t = start(input)
  t.send({ type: 'WAKE' }, { type: 'OPENED' }, { type: 'PROPOSED', decision: 'enter' })
  expect(t.snap().value).toEqual({ running: 'stepping' })
  return t
}

describe('turn machine: proposals and end reasons (L12)', () => {
  it('opens turn lastTurn + 1 with a first proposal and counts steps', () => {
    const t = stepping({ lastTurn: 6 })
    expect(t.snap().context).toMatchObject({ turn: 7, lastTurn: 7, steps: 1, proposal: 'first', retryOf: null, maxTokens: false, abortCause: null, endReason: null })
  })

  it('after tools the next proposal is after-tools; after a stop with steering pending it is after-stop', () => {
    const t = stepping()
    expect(t.send(step({ kind: 'tools' })).context.proposal).toBe('after-tools')
    expect(t.snap().value).toEqual({ running: 'proposing' })
    t.send({ type: 'PROPOSED', decision: 'enter' })
    expect(t.send(step({ kind: 'stop' }, true)).context.proposal).toBe('after-stop')
    expect(t.snap().value).toEqual({ running: 'proposing' })
    expect(t.snap().context.steps).toBe(2)
  })

  it('a steer in turn-stopping proposes after-stop, and an empty after-stop batch ends the turn completed', () => {
    const t = stepping()
    t.send(step({ kind: 'stop' }))
    expect(t.snap().value).toEqual({ running: 'stopping' })
    expect(t.send({ type: 'STOPPED', nextStepPending: true }).context.proposal).toBe('after-stop')
    expect(t.snap().value).toEqual({ running: 'proposing' })
    t.send({ type: 'PROPOSED', decision: 'enter-empty' })
    expect(t.snap().value).toEqual({ running: 'closing' })
    expect(t.snap().context.endReason).toEqual({ kind: 'completed' })
  })

  it('an empty batch after tools still owes a request: the turn steps on', () => {
    const t = stepping()
    t.send(step({ kind: 'tools' }), { type: 'PROPOSED', decision: 'enter-empty' })
    expect(t.snap().value).toEqual({ running: 'stepping' })
    expect(t.snap().context.steps).toBe(2)
  })

  it('an empty first batch ends the turn completed, except on a retry turn, whose first proposal owes a request', () => {
    const plain = start()
    plain.send({ type: 'WAKE' }, { type: 'OPENED' }, { type: 'PROPOSED', decision: 'enter-empty' })
    expect(plain.snap().value).toEqual({ running: 'closing' })
    expect(plain.snap().context.endReason).toEqual({ kind: 'completed' })

    const t = stepping()
    t.send(step({ kind: 'failed', failure: { code: 'SERVER', message: '500' } }), { type: 'RECOVERED', retry: true }, closed())
    expect(t.snap().value).toEqual({ running: 'opening' })
    t.send({ type: 'OPENED' }, { type: 'PROPOSED', decision: 'enter-empty' })
    expect(t.snap().value).toEqual({ running: 'stepping' })
    // On the retry turn's later proposals an empty batch ends the turn again.
    t.send(step({ kind: 'stop' }), { type: 'STOPPED', nextStepPending: true }, { type: 'PROPOSED', decision: 'enter-empty' })
    expect(t.snap().context.endReason).toEqual({ kind: 'completed' })
  })

  it('a rejected batch ends the turn blocked', () => {
    const t = start()
    t.send({ type: 'WAKE' }, { type: 'OPENED' }, { type: 'PROPOSED', decision: 'reject' })
    expect(t.snap().value).toEqual({ running: 'closing' })
    expect(t.snap().context.endReason).toEqual({ kind: 'blocked' })
  })

  it('max-tokens is sticky: a later step that stops still ends the turn max-tokens, also through pending steering', () => {
    // Direct: the max-tokens step is the last one.
    const direct = stepping()
    direct.send(step({ kind: 'max-tokens' }), { type: 'STOPPED', nextStepPending: false })
    expect(direct.snap().context.endReason).toEqual({ kind: 'max-tokens' })
    // Through steering that was pending when the max-tokens step ended (turn.ts:188).
    const t = stepping()
    t.send(step({ kind: 'max-tokens' }, true))
    expect(t.snap().value).toEqual({ running: 'proposing' })
    expect(t.snap().context.maxTokens).toBe(true)
    t.send({ type: 'PROPOSED', decision: 'enter' }, step({ kind: 'stop' }), { type: 'STOPPED', nextStepPending: false })
    expect(t.snap().context.endReason).toEqual({ kind: 'max-tokens' })
    // And the reverse: no max-tokens step, the turn ends completed.
    const plain = stepping()
    plain.send(step({ kind: 'stop' }, true), { type: 'PROPOSED', decision: 'enter' }, step({ kind: 'stop' }), { type: 'STOPPED', nextStepPending: false })
    expect(plain.snap().context.endReason).toEqual({ kind: 'completed' })
  })

  it('a tools step does not count as max-tokens; a new turn forgets max-tokens', () => {
    const t = stepping()
    t.send(step({ kind: 'max-tokens' }), { type: 'STOPPED', nextStepPending: false }, closed(true))
    expect(t.snap().value).toEqual({ running: 'opening' })
    expect(t.snap().context.maxTokens).toBe(false)
    t.send({ type: 'OPENED' }, { type: 'PROPOSED', decision: 'enter' }, step({ kind: 'stop' }), { type: 'STOPPED', nextStepPending: false })
    expect(t.snap().context.endReason).toEqual({ kind: 'completed' })
  })

  it('the step budget ends the turn step-limit at the next proposal', () => {
    const t = stepping({ maxStepsPerTurn: 2 })
    t.send(step({ kind: 'tools' }))
    expect(t.snap().value).toEqual({ running: 'proposing' })
    t.send({ type: 'PROPOSED', decision: 'enter' }, step({ kind: 'tools' }))
    expect(t.snap().value).toEqual({ running: 'closing' })
    expect(t.snap().context.endReason).toEqual({ kind: 'step-limit' })
    expect(t.snap().context.steps).toBe(2)
  })
})

describe('turn machine: failures (R7, L13)', () => {
  it('a failing pre-step hook ends the turn error with that hook failure, not a generic one', () => {
    const t = start()
    t.send({ type: 'WAKE' }, { type: 'OPENED' }, { type: 'PROPOSE_FAILED', failure: hookFailure })
    expect(t.snap().value).toEqual({ running: 'closing' })
    expect(t.snap().context.endReason).toEqual({ kind: 'error', failure: hookFailure })
  })

  it('a failing turn-stopping hook ends the turn error with its failure', () => {
    const failure: Failure = { code: 'HOOK_ERROR', message: 'agent/turn-stopping threw: x' }
    const t = stepping()
    t.send(step({ kind: 'stop' }), { type: 'STOP_FAILED', failure })
    expect(t.snap().value).toEqual({ running: 'closing' })
    expect(t.snap().context.endReason).toEqual({ kind: 'error', failure })
  })

  it('a step failed by a hook ends the turn at once with the step failure (no request-error)', () => {
    const failure: Failure = { code: 'HOOK_ERROR', message: 'system-prompt/assemble threw' }
    const t = stepping()
    t.send(step({ kind: 'failed', failure }))
    expect(t.snap().value).toEqual({ running: 'closing' })
    expect(t.snap().context.endReason).toEqual({ kind: 'error', failure })
  })

  it('a failed request goes to recovering with its failure; a refused retry ends error with it and goes idle', () => {
    const failure: Failure = { code: 'QUOTA', message: 'over quota' }
    const t = stepping({ lastTurn: 2 })
    t.send(step({ kind: 'failed', failure }))
    expect(t.snap().value).toEqual({ running: 'recovering' })
    expect(t.snap().context.failure).toEqual(failure)
    t.send({ type: 'RECOVERED', retry: false })
    expect(t.snap().context).toMatchObject({ endReason: { kind: 'error', failure }, retryRequested: false })
    expect(t.send(closed()).value).toBe('idle')
  })

  it('an authorised retry ends the turn error, then opens the retry turn at once, naming the failed turn (L13)', () => {
    const failure: Failure = { code: 'SERVER', message: '502' }
    const t = stepping({ lastTurn: 2 })
    t.send(step({ kind: 'failed', failure }), { type: 'RECOVERED', retry: true })
    expect(t.snap().context).toMatchObject({ endReason: { kind: 'error', failure }, retryRequested: true })
    t.send(closed())
    expect(t.snap().value).toEqual({ running: 'opening' })
    expect(t.snap().context).toMatchObject({ turn: 4, retryOf: 3, retryRequested: false, failure: null, endReason: null })
  })
})

describe('turn machine: cancellation (R5)', () => {
  it('a cancel while proposing closes at once with the first cause; a second cause does not replace it', () => {
    const t = start()
    t.send({ type: 'WAKE' }, { type: 'OPENED' })
    t.send({ type: 'ABORT', cause: { kind: 'user' } }, { type: 'ABORT', cause: { kind: 'hook', reason: 'later' } })
    expect(t.snap().value).toEqual({ running: 'closing' })
    expect(t.snap().context.endReason).toEqual({ kind: 'aborted', cause: { kind: 'user' } })
    // The pre-step hook's late answer is ignored.
    t.send({ type: 'PROPOSED', decision: 'enter' })
    expect(t.snap().value).toEqual({ running: 'closing' })
  })

  it('a cancel during a step wins over the step outcome, also over a failure', () => {
    for (const outcome of [{ kind: 'stop' }, { kind: 'failed', failure: hookFailure }, { kind: 'failed', failure: { code: 'SERVER', message: '' } }] as StepOutcome[]) {
      const t = stepping()
      t.send({ type: 'ABORT', cause: { kind: "hook", reason: "deadline" } }, step(outcome, true))
      expect(t.snap().value).toEqual({ running: 'closing' })
      expect(t.snap().context.endReason).toEqual({ kind: "aborted", cause: { kind: "hook", reason: "deadline" } })
    }
  })

  it('a cancel during turn-stopping wins over steering and over the hook failing', () => {
    const a = stepping()
    a.send(step({ kind: 'stop' }), { type: 'ABORT', cause: { kind: 'user' } }, { type: 'STOPPED', nextStepPending: true })
    expect(a.snap().value).toEqual({ running: 'closing' })
    expect(a.snap().context.endReason).toEqual({ kind: 'aborted', cause: { kind: 'user' } })
    const b = stepping()
    b.send(step({ kind: 'stop' }), { type: 'ABORT', cause: { kind: 'user' } }, { type: 'STOP_FAILED', failure: hookFailure })
    expect(b.snap().value).toEqual({ running: 'closing' })
    expect(b.snap().context.endReason).toEqual({ kind: 'aborted', cause: { kind: 'user' } })
  })

  it('a cancel during request-error wins over a retry', () => {
    const t = stepping()
    t.send(step({ kind: 'failed', failure: { code: 'SERVER', message: '' } }), { type: 'ABORT', cause: { kind: 'user' } }, { type: 'RECOVERED', retry: true })
    expect(t.snap().context).toMatchObject({ endReason: { kind: 'aborted', cause: { kind: 'user' } }, retryRequested: false })
    expect(t.send(closed()).value).toBe('idle')
  })

  it('after an aborted turn queued work is parked; only a wake latched during the abort opens a turn', () => {
    const parked = stepping()
    parked.send({ type: 'ABORT', cause: { kind: 'user' } }, step({ kind: 'aborted' }), closed(true, false))
    expect(parked.snap().value).toBe('idle')
    const latched = stepping()
    latched.send({ type: 'ABORT', cause: { kind: 'user' } }, step({ kind: 'aborted' }), closed(true, true))
    expect(latched.snap().value).toEqual({ running: 'opening' })
    expect(latched.snap().context).toMatchObject({ abortCause: null, endReason: null, turn: 2 })
  })

  it('a healthy turn goes on with queued or latched work and goes idle without', () => {
    for (const [pending, latchedWake, value] of [[true, false, { running: 'opening' }], [false, true, { running: 'opening' }], [false, false, 'idle']] as const) {
      const t = stepping()
      t.send(step({ kind: 'stop' }), { type: 'STOPPED', nextStepPending: false }, closed(pending, latchedWake))
      expect(t.snap().value).toEqual(value)
    }
  })
})

describe('turn machine: idle and maintenance', () => {
  it('starts idle with the last turn of the log as its turn, and nothing open', () => {
    expect(start({ lastTurn: 4 }).snap().context).toEqual({
      lastTurn: 4, turn: 4, steps: 0, maxStepsPerTurn: 64, proposal: 'first', retryOf: null, resumeOf: null, maxTokens: false,
      abortCause: null, failure: null, retryRequested: false, endReason: null,
    })
    expect(start().snap().context).toMatchObject({ lastTurn: 0, turn: 0 })
    expect(start().snap().value).toBe('idle')
  })

  it('maintenance runs from idle only and returns to idle; a wake during maintenance is not a turn', () => {
    const t = start()
    expect(t.send({ type: 'MAINTAIN' }).value).toBe('maintaining')
    expect(t.send({ type: 'WAKE' }).value).toBe('maintaining')
    expect(t.send({ type: 'MAINTAINED' }).value).toBe('idle')
    expect(t.send({ type: 'WAKE' }).value).toEqual({ running: 'opening' })
    expect(t.send({ type: 'MAINTAIN' }).value).toEqual({ running: 'opening' })
  })
})
