/**
 * The scheduler against a real `Session`: its checker refuses any append that breaks L4–L6, and
 * `step/end` refuses a step with a `tool/call` left without its `tool/result` (L5).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { Session, type EventOf, type LogEvent, type StreamChunk, type ToolCallBlock } from '../../events/index.js'
import { defineTool } from '../../tools/define.js'
import { runToolCalls } from '../../tools/scheduler.js'
import type { AnyTool, ToolEnv } from '../../tools/types.js'
import { ManualTimers, deferred, flush } from './helpers.js'

function openStepWithCalls(session: Session, calls: ToolCallBlock[]): void {
  session.append({ type: 'turn/start', data: { turn: 1 } })
  session.append({ type: 'step/start', data: { turn: 1, step: 1 } })
  const seqs: number[] = []
  const chunk = (c: StreamChunk) => seqs.push(session.append({ type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: c } }).seq)
  calls.forEach((c, index) => {
    chunk({ type: 'block-start', index, blockType: 'tool-call' })
    chunk({ type: 'tool-call-delta', index, id: c.id, name: c.name, argumentsDelta: c.arguments })
    chunk({ type: 'block-end', index })
  })
  chunk({ type: 'finish', reason: 'tool-calls' })
  session.append({
    type: 'assistant/message',
    data: { turn: 1, step: 1, message: { role: 'assistant', content: calls }, finish: 'tool-calls' },
    surfaceOp: 'append',
    sourceEventSeqs: seqs,
  })
}

function sessionEnv(session: Session, tools: AnyTool[], signal: AbortSignal, timers: ManualTimers): ToolEnv {
  return {
    turn: 1,
    step: 1,
    tools: new Map(tools.map((t) => [t.name, t])),
    maxParallelToolCalls: 2,
    signal,
    appendCall: (call) =>
      session.append({ type: 'tool/call', data: { turn: 1, step: 1, callId: call.id, name: call.name, arguments: call.arguments } }) as EventOf<'tool/call'>,
    appendResult: (call, callSeq, outcome) =>
      session.append({
        type: 'tool/result',
        data: {
          turn: 1, step: 1, callId: call.id,
          message: { role: 'tool', callId: call.id, content: outcome.content, ...(outcome.error ? { isError: true as const } : {}) },
          ...(outcome.error ? { error: outcome.error } : {}),
        },
        surfaceOp: 'append',
        sourceEventSeqs: [callSeq],
      }) as EventOf<'tool/result'>,
    queueContext: () => {},
    preExecute: async (p, innermost) => (p.call.id === 'denied' ? { kind: 'deny', reason: 'no' } : innermost()),
    execute: (p, innermost) => innermost(p),
    postExecute: async (_p, innermost) => innermost(),
    reportError: () => {},
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
  }
}

const c = (id: string, name: string, args = '{}'): ToolCallBlock => ({ type: 'tool-call', id, name, arguments: args })

describe('the scheduler against a checked Session (L5, L6)', () => {
  it('L5 L6: a mixed batch, settled out of order, with a cancel, leaves a log the checker accepts', async () => {
    const session = new Session({ id: 's', clock: () => 0 })
    const gates = new Map<string, ReturnType<typeof deferred<string>>>()
    const gated = defineTool({
      name: 'gated',
      description: '',
      parameters: z.object({}),
      isConcurrencySafe: () => true,
      execute: (_a, ctx) => {
        const d = deferred<string>()
        gates.set(ctx.callId, d)
        return d.promise
      },
    })
    const boom = defineTool({ name: 'boom', description: '', parameters: z.object({}), execute: () => { throw new Error('x') } })
    const calls = [
      c('a', 'gated'), c('b', 'gated'), c('u', 'unknown'), c('denied', 'gated'), c('bad', 'gated', '{oops'),
      c('t', 'boom'), c('d', 'gated'), c('e', 'gated'), c('f', 'gated'),
    ]
    openStepWithCalls(session, calls)
    const ac = new AbortController()
    const timers = new ManualTimers()
    const done = runToolCalls(calls, sessionEnv(session, [gated, boom] as unknown as AnyTool[], ac.signal, timers))
    await flush()
    gates.get('b')!.resolve('B')
    await flush()
    gates.get('a')!.resolve('A')
    await flush()
    // d and e run in the pool; cancel, then let e finish before d
    expect([...gates.keys()]).toEqual(['a', 'b', 'd', 'e'])
    ac.abort({ kind: 'user' })
    gates.get('e')!.resolve('E')
    await flush()
    gates.get('d')!.resolve('D')
    const res = await done
    expect(res.aborted).toBe(true)
    // L5 at step/end: every tool/call has its tool/result
    session.append({ type: 'step/end', data: { turn: 1, step: 1, outcome: { kind: 'aborted' } } })
    const results = session.events.filter((e): e is EventOf<'tool/result'> => e.type === 'tool/result')
    expect(results.map((r) => [r.data.callId, r.data.error?.code])).toEqual([
      ['a', undefined], ['b', undefined], ['u', 'UNKNOWN_TOOL'], ['denied', 'DENIED'], ['bad', 'INVALID_ARGS'],
      ['t', 'TOOL_ERROR'], ['d', undefined], ['e', undefined], ['f', 'ABORTED_BEFORE_DISPATCH'],
    ])
    const types = session.events.map((e: LogEvent) => e.type)
    expect(types.filter((t) => t === 'tool/call')).toHaveLength(9)
  })

  it('L5: step/end is refused while a tool/call has no tool/result (the checker this suite relies on can fail)', () => {
    const session = new Session({ id: 's', clock: () => 0 })
    const calls = [c('a', 'x')]
    openStepWithCalls(session, calls)
    session.append({ type: 'tool/call', data: { turn: 1, step: 1, callId: 'a', name: 'x', arguments: '{}' } })
    expect(() => session.append({ type: 'step/end', data: { turn: 1, step: 1, outcome: { kind: 'tools' } } })).toThrow(/L5/)
  })
})
