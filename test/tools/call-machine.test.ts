import { describe, expect, it } from 'vitest'
import { createActor } from 'xstate'
import { callMachine, type CallEvent } from '../../tools/call-machine.js'

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
