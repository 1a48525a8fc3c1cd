/**
 * Issue 9 items 1, 5, 6: every value from user code (tool outputs, hook decisions, adapter errors,
 * stream chunks) is read inside a guard; a throwing getter is the user's error, contained in the
 * call or step it belongs to, never a crash or a driver defect (R7: at most the current turn).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import { TurnlogError } from '../../events/index.js'
import { ModelError, scriptedModel } from '../../models/index.js'
import { defineTool } from '../../tools/index.js'
import { data, endKinds, makeAgent, thrower, valid } from './contain-helpers.js'

function toolReturning(output: () => unknown) {
  return defineTool({ name: 'bad', description: 'bad', parameters: z.object({}), execute: async () => output() })
}

const CALL_THEN_TEXT = [{ toolCalls: [{ name: 'bad', args: {} }] }, { text: 'done' }, { text: 'again' }]

describe('throwing getters in user values (R7)', () => {
  it('R7: a tool output whose `content` getter throws ends the call INVALID_TOOL_OUTPUT with the message; the turn goes on', async () => {
    const { agent, errors } = makeAgent(CALL_THEN_TEXT, { tools: [toolReturning(() => ({ get content() { return thrower('content getter broke') } }))] })
    agent.followup('go')
    await agent.whenIdle()
    const [r] = data(agent.events, 'tool/result')
    expect(r!.error.code).toBe('INVALID_TOOL_OUTPUT')
    expect(r!.error.message).toContain('content getter broke')
    expect(endKinds(agent.events)).toEqual(['completed'])
    expect(errors.filter((e) => e.where === 'driver' || e.where === 'tools/scheduler')).toEqual([])
    agent.followup('next')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['completed', 'completed'])
    valid(agent.events)
  })

  it('R7: a result block whose `text` getter throws is INVALID_TOOL_OUTPUT', async () => {
    const { agent } = makeAgent(CALL_THEN_TEXT, {
      tools: [toolReturning(() => ({ content: [{ type: 'text', get text() { return thrower('text getter broke') } }] }))],
    })
    agent.followup('go')
    await agent.whenIdle()
    const [r] = data(agent.events, 'tool/result')
    expect(r!.error).toEqual({ code: 'INVALID_TOOL_OUTPUT', message: expect.stringContaining('text getter broke') })
    expect(endKinds(agent.events)).toEqual(['completed'])
    valid(agent.events)
  })

  it('R7: a tools/pre-execute decision whose `kind` getter throws is that call\'s HOOK_ERROR, not TOOL_OUTCOME_UNKNOWN', async () => {
    let ran = 0
    const ok = defineTool({ name: 'bad', description: 'x', parameters: z.object({}), execute: () => { ran++; return 'ran' } })
    const { agent, errors } = makeAgent(CALL_THEN_TEXT, {
      tools: [ok],
      hooks: { 'tools/pre-execute': () => ({ get kind(): 'allow' { return thrower('kind getter broke') } }) },
      expectErrors: ['tools/pre-execute'],
    })
    agent.followup('go')
    await agent.whenIdle()
    const [r] = data(agent.events, 'tool/result')
    expect(r!.error.code).toBe('HOOK_ERROR')
    expect(r!.error.message).toContain('kind getter broke')
    expect(ran).toBe(0)
    expect(errors.map((e) => e.where)).not.toContain('tools/scheduler')
    expect(endKinds(agent.events)).toEqual(['completed'])
    valid(agent.events)
  })

  it('R7: tools/post-execute additionalContexts with a throwing element keeps the outcome and reports the hook', async () => {
    const contexts: unknown[] = []
    Object.defineProperty(contexts, 0, { get: () => thrower('context getter broke'), enumerable: true })
    const { agent, errors } = makeAgent(CALL_THEN_TEXT, {
      tools: [toolReturning(() => 'fine')],
      hooks: { 'tools/post-execute': () => ({ kind: 'accept', additionalContexts: contexts as never }) },
      expectErrors: ['tools/post-execute'],
    })
    agent.followup('go')
    await agent.whenIdle()
    const [r] = data(agent.events, 'tool/result')
    expect(r!.error).toBeUndefined()
    expect(r!.message.content).toEqual([{ type: 'text', text: 'fine' }])
    expect(errors.map((e) => e.where)).toContain('tools/post-execute')
    expect(errors.map((e) => e.where)).not.toContain('tools/scheduler')
    expect(endKinds(agent.events)).toEqual(['completed'])
    valid(agent.events)
  })

  it('R7: an agent/request-error decision whose `kind` getter throws leaves the failure terminal (not a driver defect)', async () => {
    const { agent, errors } = makeAgent([{ error: { code: 'UNKNOWN' } }, { text: 'next' }], {
      retry: false,
      hooks: { 'agent/request-error': () => ({ get kind(): 'retry' { return thrower('decision getter broke') } }) },
      expectErrors: ['agent/request-error'],
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(data(agent.events, 'turn/end').map((d) => [d.reason.kind, d.reason.failure?.code])).toEqual([['error', 'UNKNOWN']])
    expect(errors.map((e) => e.where)).toEqual(['agent/request-error'])
    agent.followup('again')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['error', 'completed'])
    valid(agent.events)
  })

  it('R7: an adapter error whose members all throw when read is a stream failure (UNKNOWN), not a driver defect', async () => {
    const hostile = new Proxy({}, {
      get: () => thrower('getter broke'),
      getPrototypeOf: () => thrower('proto broke'),
      has: () => thrower('has broke'),
    })
    let n = 0
    const { agent, errors } = makeAgent(null, {
      retry: false,
      model: {
        stream: (req, signal) => (n++ === 0
          ? { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(hostile) }) }
          : scriptedModel([{ text: 'ok' }]).stream(req, signal)),
      },
    })
    agent.followup('go')
    await agent.whenIdle()
    const [end] = data(agent.events, 'step/end')
    expect(end!.outcome).toEqual({ kind: 'failed', failure: { code: 'UNKNOWN', message: 'unprintable error' } })
    expect(errors.map((e) => e.where)).not.toContain('driver')
    agent.followup('again')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['error', 'completed'])
    valid(agent.events)
  })

  it('R7/L9: a stream chunk or iterator result with a throwing getter is a STREAM_GRAMMAR failure', async () => {
    // the turn/end code: an unreadable chunk is STREAM_GRAMMAR; an unreadable iterator result is read
    // inside the iterator's guard (models/checked-stream.ts `read`), so it is the adapter failing,
    // like a throwing next(): UNKNOWN
    for (const [next, code] of [
      [() => Promise.resolve({ done: false, value: { get type() { return thrower('chunk getter broke') } } }), 'STREAM_GRAMMAR'],
      [() => Promise.resolve({ get done() { return thrower('done getter broke') }, value: undefined }), 'UNKNOWN'],
    ] as const) {
      const { agent, errors } = makeAgent(null, { retry: false, model: { stream: () => ({ [Symbol.asyncIterator]: () => ({ next: next as never }) }) } })
      agent.followup('go')
      await agent.whenIdle()
      const [end] = data(agent.events, 'step/end')
      expect(end!.outcome.kind).toBe('failed')
      expect(end!.outcome.failure.message).toMatch(/getter broke/)
      expect(data(agent.events, 'turn/end').map((d) => [d.reason.kind, d.reason.failure?.code])).toEqual([['error', code]])
      expect(errors.map((e) => e.where)).not.toContain('driver')
      valid(agent.events)
    }
  })

  it('R7: a hook that throws a value whose message and toString throw ends the turn HOOK_ERROR', async () => {
    const unprintable = { get message() { return thrower('m') }, toString: () => thrower('s') }
    const { agent, errors } = makeAgent([{ text: 'x' }], { hooks: { 'agent/pre-step': () => { throw unprintable } }, expectErrors: ['agent/pre-step'] })
    agent.followup('go')
    await agent.whenIdle()
    expect(data(agent.events, 'turn/end').map((d) => d.reason)).toEqual([
      { kind: 'error', failure: { code: 'HOOK_ERROR', message: 'agent/pre-step: unprintable error' } },
    ])
    expect(errors.map((e) => e.where)).toEqual(['agent/pre-step'])
    valid(agent.events)
  })
})

describe('options (item 5)', () => {
  it('createAgent({}) throws INVALID_OPTION naming model', () => {
    for (const bad of [{}, { model: {} }, { model: null }, undefined]) {
      let err: unknown
      try {
        createAgent(bad as never)
      } catch (e) {
        err = e
      }
      expect(TurnlogError.is(err, 'INVALID_OPTION'), String(err)).toBe(true)
      expect((err as TurnlogError).field).toBe('model')
    }
  })
})

describe('a ModelError thrown synchronously by stream() (item 6)', () => {
  it('R6/§4: is retried exactly like the same error thrown by the iterator', async () => {
    let n = 0
    const ok = scriptedModel([{ text: 'ok' }])
    const { agent } = makeAgent(null, {
      model: {
        stream: (req, signal) => {
          if (n++ === 0) throw new ModelError({ code: 'RATE_LIMIT', message: 'slow down' })
          return ok.stream(req, signal)
        },
      },
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(data(agent.events, 'step/end').map((d) => d.outcome)).toEqual([
      { kind: 'failed', failure: { code: 'RATE_LIMIT', message: 'slow down' } },
      { kind: 'stop' },
    ])
    expect(data(agent.events, 'llm/retry').map((d) => d.failure.code)).toEqual(['RATE_LIMIT'])
    expect(endKinds(agent.events)).toEqual(['error', 'completed'])
    valid(agent.events)
  })
})
