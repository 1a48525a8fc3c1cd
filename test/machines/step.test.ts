/**
 * The step machine on its own (issue 15 part 3: survivors of the mutation runs). L10 / §4.5: a
 * response cut off by max-tokens never runs its tool calls, even complete ones. R5: a cancel routes
 * the step to `aborting` at the next decision, never interrupting an effect. The outcome each path
 * records is the `step/end` outcome.
 */
import { describe, expect, it } from 'vitest'
import { createActor } from 'xstate'
import type { Failure } from '../../events/index.js'
import { stepMachine, type StepEvent } from '../../machines/index.js'

function step() {
  const a = createActor(stepMachine, { input: { turn: 3, step: 9 } }).start()
  const send = (...events: StepEvent[]) => {
    for (const e of events) a.send(e)
    return a.getSnapshot()
  }
  return { send, snap: () => a.getSnapshot() }
}

const begin = (aborted = false): StepEvent => ({ type: 'BEGIN', turn: 1, step: 2, aborted })
const toStreaming: StepEvent[] = [begin(), { type: 'ENTERED' }, { type: 'ASSEMBLED' }, { type: 'REQUESTED' }]
const streamed = (finish: 'stop' | 'tool-calls' | 'max-tokens', toolCalls: number): StepEvent => ({ type: 'STREAMED', result: 'success', finish, toolCalls })
const failure: Failure = { code: 'SERVER', message: 'bad gateway' }

describe('step machine', () => {
  it('starts idle with its input and resets everything on BEGIN', () => {
    const s = step()
    expect(s.snap().value).toBe('idle')
    expect(s.snap().context).toEqual({ turn: 3, step: 9, aborted: false, outcome: null, visibleStreamed: false, finish: null, toolCalls: 0 })
    s.send(...toStreaming, { type: 'STREAMED', result: 'aborted', visibleStreamed: true }, { type: 'INTERRUPTED' })
    s.send({ type: 'ABORT' })
    expect(s.snap().context).toMatchObject({ aborted: true, visibleStreamed: true, outcome: { kind: 'aborted' } })
    s.send(begin())
    expect(s.snap().value).toBe('entering')
    expect(s.snap().context).toEqual({ turn: 1, step: 2, aborted: false, outcome: null, visibleStreamed: false, finish: null, toolCalls: 0 })
  })

  it('BEGIN with aborted set routes to aborting at the first report', () => {
    const s = step()
    expect(s.send(begin(true), { type: 'ENTERED' }).value).toBe('aborting')
  })

  it('a stop without tool calls ends stop; with tool calls it runs them and ends tools', () => {
    const a = step()
    a.send(...toStreaming, streamed('stop', 0))
    expect(a.snap().value).toBe('committing')
    expect(a.snap().context).toMatchObject({ finish: 'stop', toolCalls: 0 })
    expect(a.send({ type: 'COMMITTED' }).value).toBe('ended')
    expect(a.snap().context.outcome).toEqual({ kind: 'stop' })

    const b = step()
    b.send(...toStreaming, streamed('tool-calls', 2), { type: 'COMMITTED' })
    expect(b.snap().value).toBe('runningTools')
    b.send({ type: 'TOOLS_DONE', concluded: false, aborted: false })
    expect(b.snap().value).toBe('ended')
    expect(b.snap().context.outcome).toEqual({ kind: 'tools' })
  })

  it('max-tokens with a complete tool call never runs it: the step ends max-tokens (L10, §4.5)', () => {
    for (const calls of [0, 1, 3]) {
      const s = step()
      s.send(...toStreaming, streamed('max-tokens', calls), { type: 'COMMITTED' })
      expect(s.snap().value).toBe('ended')
      expect(s.snap().context.outcome).toEqual({ kind: 'max-tokens' })
    }
  })

  it('a tool that concludes the turn ends the step concluded; tools cut by a cancel end it aborted', () => {
    const c = step()
    c.send(...toStreaming, streamed('tool-calls', 1), { type: 'COMMITTED' }, { type: 'TOOLS_DONE', concluded: true, aborted: false })
    expect(c.snap().value).toBe('ended')
    expect(c.snap().context.outcome).toEqual({ kind: 'concluded' })

    const a = step()
    a.send(...toStreaming, streamed('tool-calls', 1), { type: 'COMMITTED' }, { type: 'TOOLS_DONE', concluded: true, aborted: true })
    expect(a.snap().value).toBe('aborting')
    expect(a.snap().context.outcome).toEqual({ kind: 'aborted' })
    expect(a.send({ type: 'INTERRUPTED' }).value).toBe('ended')
  })

  it('a failed stream ends the step failed with the stream failure', () => {
    const s = step()
    s.send(...toStreaming, { type: 'STREAMED', result: 'failure', failure })
    expect(s.snap().value).toBe('ended')
    expect(s.snap().context.outcome).toEqual({ kind: 'failed', failure })
  })

  it('an aborted stream notes whether visible text streamed (an interrupted message is owed)', () => {
    for (const visibleStreamed of [true, false]) {
      const s = step()
      s.send(...toStreaming, { type: 'STREAMED', result: 'aborted', visibleStreamed })
      expect(s.snap().value).toBe('aborting')
      expect(s.snap().context).toMatchObject({ visibleStreamed, outcome: { kind: 'aborted' } })
    }
  })

  it('a hook failure in each phase ends the step failed with that failure; after a cancel it ends aborted (R5)', () => {
    const hook: Failure = { code: 'HOOK_ERROR', message: 'the hook threw' }
    const prefixes: StepEvent[][] = [
      [begin(), { type: 'ENTERED' }],
      [begin(), { type: 'ENTERED' }, { type: 'ASSEMBLED' }],
      toStreaming,
    ]
    for (const prefix of prefixes) {
      const s = step()
      s.send(...prefix, { type: 'HOOK_FAILED', failure: hook })
      expect(s.snap().value).toBe('ended')
      expect(s.snap().context.outcome).toEqual({ kind: 'failed', failure: hook })
      const c = step()
      c.send(...prefix, { type: 'ABORT' }, { type: 'HOOK_FAILED', failure: hook })
      expect(c.snap().value).toBe('aborting')
      expect(c.snap().context.outcome).toEqual({ kind: 'aborted' })
    }
  })

  it('a cancel in each phase routes to aborting at the next report, never earlier', () => {
    const phases: StepEvent[][] = [[begin()], [begin(), { type: 'ENTERED' }], [begin(), { type: 'ENTERED' }, { type: 'ASSEMBLED' }]]
    const next: StepEvent[] = [{ type: 'ENTERED' }, { type: 'ASSEMBLED' }, { type: 'REQUESTED' }]
    phases.forEach((prefix, i) => {
      const s = step()
      const before = s.send(...prefix).value
      expect(s.send({ type: 'ABORT' }).value).toBe(before)
      expect(s.snap().context.aborted).toBe(true)
      expect(s.send(next[i]!).value).toBe('aborting')
    })
  })

  it('events a state does not expect are ignored', () => {
    const s = step()
    s.send({ type: 'COMMITTED' }, { type: 'INTERRUPTED' })
    expect(s.snap().value).toBe('idle')
    s.send(...toStreaming, { type: 'COMMITTED' })
    expect(s.snap().value).toBe('streaming')
  })
})
