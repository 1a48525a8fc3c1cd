import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createActor } from 'xstate'
import { callMachine, callTransition, initialCallSnapshot, type CallEvent } from '../../tools/call-machine.js'

function run(events: CallEvent[]) {
  const a = createActor(callMachine, { input: { callId: 'c1', name: 't' } }).start()
  for (const e of events) a.send(e)
  const s = a.getSnapshot()
  return { state: s.value, error: s.context.error?.code ?? null, done: s.status === 'done' }
}

describe('the tool-call machine', () => {
  it('queued → classifying → pre → executing → settled → committed for a success', () => {
    expect(run([{ type: 'CLASSIFY', mode: 'parallel' }, { type: 'START' }, { type: 'PRE_DONE', verdict: { kind: 'allow' } }])).toMatchObject({ state: 'executing' })
    expect(
      run([{ type: 'CLASSIFY', mode: 'parallel' }, { type: 'START' }, { type: 'PRE_DONE', verdict: { kind: 'allow' } }, { type: 'SETTLE' }, { type: 'COMMIT' }]),
    ).toEqual({ state: 'committed', error: null, done: true })
  })

  it('decides the error of a call that does not run from the pre-execute verdict', () => {
    const pre = (verdict: Extract<CallEvent, { type: 'PRE_DONE' }>['verdict'], problem?: { code: string; message: string }) =>
      run([{ type: 'CLASSIFY', mode: 'exclusive' }, { type: 'START' }, { type: 'PRE_DONE', verdict, problem }])
    expect(pre({ kind: 'deny', reason: 'no' })).toMatchObject({ state: 'settled', error: 'DENIED' })
    expect(pre({ kind: 'ask' })).toMatchObject({ state: 'settled', error: 'DENIED' })
    expect(pre({ kind: 'hook-error', message: 'x' })).toMatchObject({ state: 'settled', error: 'HOOK_ERROR' })
    expect(pre({ kind: 'cancelled' })).toMatchObject({ state: 'settled', error: 'ABORTED' })
    expect(pre({ kind: 'allow' }, { code: 'UNKNOWN_TOOL', message: '' })).toMatchObject({ state: 'settled', error: 'UNKNOWN_TOOL' })
    // a denial wins over a problem: the hook saw the call first
    expect(pre({ kind: 'deny', reason: 'no' }, { code: 'INVALID_ARGS', message: '' })).toMatchObject({ error: 'DENIED' })
  })

  it('ends denied, failed, aborted or abortedBeforeDispatch', () => {
    const to = (error: { code: string; message: string }) =>
      run([{ type: 'CLASSIFY', mode: 'parallel' }, { type: 'START' }, { type: 'PRE_DONE', verdict: { kind: 'allow' } }, { type: 'SETTLE', error }, { type: 'COMMIT', error }]).state
    expect(to({ code: 'DENIED', message: '' })).toBe('denied')
    expect(to({ code: 'TOOL_ERROR', message: '' })).toBe('failed')
    expect(to({ code: 'ABORTED', message: '' })).toBe('aborted')
    expect(run([{ type: 'NOT_DISPATCHED' }])).toEqual({ state: 'abortedBeforeDispatch', error: 'ABORTED_BEFORE_DISPATCH', done: true })
    expect(run([{ type: 'CLASSIFY', mode: 'parallel' }, { type: 'START' }, { type: 'LOST' }])).toEqual({ state: 'failed', error: 'TOOL_OUTCOME_UNKNOWN', done: true })
  })

  it('a deferred call goes back to the queue; a started call cannot be un-dispatched', () => {
    expect(run([{ type: 'CLASSIFY', mode: 'parallel' }, { type: 'DEFER' }]).state).toBe('queued')
    expect(run([{ type: 'CLASSIFY', mode: 'parallel' }, { type: 'START' }, { type: 'NOT_DISPATCHED' }]).state).toBe('pre')
  })
})

const err = fc.option(fc.record({ code: fc.constantFrom('DENIED', 'ABORTED', 'TOOL_ERROR', 'TOOL_TIMEOUT', 'BLOCKED'), message: fc.string() }), { nil: undefined })
const eventArb: fc.Arbitrary<CallEvent> = fc.oneof(
  fc.record({ type: fc.constant('CLASSIFY' as const), mode: fc.constantFrom('parallel' as const, 'exclusive' as const) }),
  fc.constant({ type: 'DEFER' as const }),
  fc.constant({ type: 'START' as const }),
  fc.record({
    type: fc.constant('PRE_DONE' as const),
    verdict: fc.oneof(
      fc.constant({ kind: 'allow' as const }),
      fc.record({ kind: fc.constant('deny' as const), reason: fc.string() }),
      fc.constant({ kind: 'ask' as const }),
      fc.record({ kind: fc.constant('hook-error' as const), message: fc.string() }),
      fc.constant({ kind: 'cancelled' as const }),
    ),
    problem: fc.option(fc.record({ code: fc.constantFrom('UNKNOWN_TOOL', 'INVALID_ARGS'), message: fc.string() }), { nil: undefined }),
  }),
  fc.record({ type: fc.constant('SETTLE' as const), error: err }),
  fc.record({ type: fc.constant('COMMIT' as const), error: err }),
  fc.constant({ type: 'NOT_DISPATCHED' as const }),
  fc.constant({ type: 'LOST' as const }),
)

describe('callTransition (what the scheduler runs) is callMachine', () => {
  it('agrees with the XState machine, state and error, on random event sequences', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 12 }), (events) => {
        const actor = createActor(callMachine, { input: { callId: 'c', name: 't' } }).start()
        let snap = initialCallSnapshot()
        for (const e of events) {
          // A done actor ignores events (and XState warns about each); callTransition must ignore them too.
          if (actor.getSnapshot().status !== 'done') actor.send(e)
          snap = callTransition(snap, 't', e)
          const m = actor.getSnapshot()
          expect(snap.state).toBe(m.value)
          expect(snap.error).toEqual(m.context.error)
        }
      }),
      { numRuns: 500 },
    )
  })
})

