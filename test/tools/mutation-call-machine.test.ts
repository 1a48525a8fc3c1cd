/**
 * The per-call machine's exact decisions (issue 15 part 3): the error messages a call that does
 * not run gets (the result text the model reads, L5), and the final state of every error code.
 */
import { describe, expect, it } from 'vitest'
import { createActor } from 'xstate'
import { callMachine, callTransition, initialCallSnapshot, preVerdictError, type CallEvent, type CallSnapshot } from '../../tools/call-machine.js'

function through(events: CallEvent[]): CallSnapshot {
  let s = initialCallSnapshot()
  for (const e of events) s = callTransition(s, 'grep', e)
  return s
}

function actorThrough(events: CallEvent[]) {
  const a = createActor(callMachine, { input: { callId: 'c', name: 'grep' } }).start()
  for (const e of events) a.send(e)
  return a.getSnapshot()
}

const started: CallEvent[] = [{ type: 'CLASSIFY', mode: 'parallel' }, { type: 'START' }]

describe('the messages of calls that do not run (L5: every call gets a result the model can read)', () => {
  it('L5: preVerdictError names the tool and the reason, per verdict', () => {
    expect(preVerdictError('grep', { kind: 'cancelled' }, undefined)).toEqual({
      code: 'ABORTED', message: "Tool 'grep' was not run: the turn was cancelled before its body started.",
    })
    expect(preVerdictError('grep', { kind: 'hook-error', message: 'boom' }, undefined)).toEqual({
      code: 'HOOK_ERROR', message: "Tool 'grep' was not run: the tools/pre-execute hook failed: boom",
    })
    expect(preVerdictError('grep', { kind: 'deny', reason: 'no' }, undefined)).toEqual({ code: 'DENIED', message: "Tool 'grep' was denied: no" })
    expect(preVerdictError('grep', { kind: 'ask' }, undefined)).toEqual({
      code: 'DENIED', message: "Tool 'grep' was denied: it needs approval and nobody answered.",
    })
    expect(preVerdictError('grep', { kind: 'ask', question: 'sure?' }, undefined)).toEqual({
      code: 'DENIED', message: "Tool 'grep' was denied: it needs approval (sure?) and nobody answered.",
    })
    expect(preVerdictError('grep', { kind: 'allow' }, undefined)).toBeNull()
  })

  it('L5: a lost call is TOOL_OUTCOME_UNKNOWN, a never-started one ABORTED_BEFORE_DISPATCH, with their messages (machine and function agree)', () => {
    const lost = [...started, { type: 'LOST' } as const]
    const nd: CallEvent[] = [{ type: 'NOT_DISPATCHED' }]
    const wantLost = { code: 'TOOL_OUTCOME_UNKNOWN', message: "The outcome of tool 'grep' is unknown: the tool scheduler failed while it ran." }
    const wantNd = { code: 'ABORTED_BEFORE_DISPATCH', message: "Tool 'grep' was not started." }
    expect(through(lost)).toEqual({ state: 'failed', mode: 'parallel', error: wantLost })
    expect(actorThrough(lost).context.error).toEqual(wantLost)
    expect(through(nd)).toEqual({ state: 'abortedBeforeDispatch', mode: null, error: wantNd })
    expect(actorThrough(nd).context.error).toEqual(wantNd)
  })
})

describe('the end state of a committed call follows its error code (L5)', () => {
  it.each([
    ['ABORTED', 'aborted'],
    ['ABORTED_BEFORE_DISPATCH', 'aborted'],
    ['DENIED', 'denied'],
    ['TOOL_ERROR', 'failed'],
    ['BLOCKED', 'failed'],
  ])('L5: COMMIT with %s ends %s', (code, end) => {
    const error = { code, message: 'm' }
    const events: CallEvent[] = [...started, { type: 'PRE_DONE', verdict: { kind: 'allow' } }, { type: 'SETTLE', error }, { type: 'COMMIT', error }]
    expect(through(events).state).toBe(end)
    expect(actorThrough(events).value).toBe(end)
  })
})
