/**
 * The step's hooks, as the step driver dispatches them (docs/spec/lifecycle.md §4.2–4.4, §4.6; agent/step-driver.ts):
 * what `system-prompt/assemble`, `agent/request` and `llm/stream` receive, what a throwing or
 * misbehaving listener makes of the step (`failed {HOOK_ERROR, '<hook>: <message>'}`, reported as
 * `agent/error` where = the hook, never offered to `agent/request-error`: R7), what a cancel during
 * `agent/request` prevents (no `request/header`, no model call: R5), and the live
 * `agent/assistant-stream` emits (one per logged chunk).
 */
import { describe, expect, it } from 'vitest'
import { TurnlogError, type StreamChunk } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { data, makeAgent, valid } from './contain-helpers.js'
import { trace } from './helpers.js'

/** The one step's `step/end` outcome. */
function stepOutcome(events: Parameters<typeof data>[0]): unknown {
  const ends = data(events, 'step/end')
  expect(ends).toHaveLength(1)
  return ends[0]!.outcome
}

function deferred() {
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  return { gate, release }
}

describe('system-prompt/assemble (§4.2)', () => {
  it('R3: without options.system the hook is offered "" and the header logs "" (the model gets "")', async () => {
    const model = scriptedModel([{ text: 'hi' }], { info: { name: 'scripted' } })
    const { agent } = makeAgent(null, { model, system: undefined })
    const seen: unknown[] = []
    agent.on('system-prompt/assemble', (p, next) => {
      seen.push(p.system)
      return next()
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(seen).toEqual([''])
    expect(data(agent.events, 'request/header').map((d) => d.system)).toEqual([''])
    expect(model.requests.map((r) => r.system)).toEqual([''])
    valid(agent.events)
  })

  it('R7: a result whose system is not a string fails the step HOOK_ERROR (shape message), reported at the hook', async () => {
    const { agent, errors } = makeAgent([], { expectErrors: ['system-prompt/assemble'] })
    agent.on('system-prompt/assemble', async (p) => ({ system: 42 as unknown as string, tools: p.tools }))
    agent.followup('go')
    await agent.whenIdle()
    expect(stepOutcome(agent.events)).toEqual({
      kind: 'failed',
      failure: { code: 'HOOK_ERROR', message: 'system-prompt/assemble: system-prompt/assemble must return { system: string, tools: ToolSpec[] }' },
    })
    expect(errors.map((e) => [e.where, (e.error as Error).name])).toEqual([['system-prompt/assemble', 'TypeError']])
    expect(data(agent.events, 'request/header')).toEqual([])
    expect(trace(agent.events).slice(-2)).toEqual(['step/end 1.1 failed HOOK_ERROR', 'turn/end 1 error HOOK_ERROR'])
    valid(agent.events)
  })

  it('R7: a result whose tools is not an array fails the step HOOK_ERROR too (either half of the shape)', async () => {
    const { agent, errors } = makeAgent([], { expectErrors: ['system-prompt/assemble'] })
    agent.on('system-prompt/assemble', async () => ({ system: 'fine', tools: 'none' as unknown as [] }))
    agent.followup('go')
    await agent.whenIdle()
    expect(stepOutcome(agent.events)).toEqual({
      kind: 'failed',
      failure: { code: 'HOOK_ERROR', message: 'system-prompt/assemble: system-prompt/assemble must return { system: string, tools: ToolSpec[] }' },
    })
    expect(errors.map((e) => e.where)).toEqual(['system-prompt/assemble'])
    valid(agent.events)
  })

  it('R7: a throwing listener: the failure names the hook and its message; agent/error where = the hook', async () => {
    const { agent, errors } = makeAgent([], { expectErrors: ['system-prompt/assemble'] })
    agent.on('system-prompt/assemble', () => {
      throw new Error('assemble broke')
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(stepOutcome(agent.events)).toEqual({ kind: 'failed', failure: { code: 'HOOK_ERROR', message: 'system-prompt/assemble: assemble broke' } })
    expect(errors.map((e) => [e.where, (e.error as Error).message])).toEqual([['system-prompt/assemble', 'assemble broke']])
    valid(agent.events)
  })
})

describe('agent/request (§4.3)', () => {
  it('R7: a throwing listener fails the step HOOK_ERROR "agent/request: …", reported where = agent/request; no header, no model call', async () => {
    const { agent, errors } = makeAgent([{ text: 'never' }], { expectErrors: ['agent/request'] })
    let offered = false
    agent.on('agent/request', () => {
      throw new Error('request broke')
    })
    agent.on('agent/request-error', (_p, next) => {
      offered = true
      return next()
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(stepOutcome(agent.events)).toEqual({ kind: 'failed', failure: { code: 'HOOK_ERROR', message: 'agent/request: request broke' } })
    expect(errors.map((e) => [e.where, (e.error as Error).message])).toEqual([['agent/request', 'request broke']])
    expect(offered).toBe(false)
    expect(data(agent.events, 'request/header')).toEqual([])
    expect(trace(agent.events).slice(-2)).toEqual(['step/end 1.1 failed HOOK_ERROR', 'turn/end 1 error HOOK_ERROR'])
    valid(agent.events)
  })

  it('R3/R7: a config the log refuses (the header would not validate) fails the step HOOK_ERROR at agent/request; nothing is sent', async () => {
    const model = scriptedModel([{ text: 'never' }], { info: { name: 'scripted' } })
    const { agent, errors } = makeAgent(null, { model, expectErrors: ['agent/request'] })
    let calls = 0
    agent.on('agent/request', async (p) => {
      // a step that failed to freeze its request must not dispatch agent/request again
      if (++calls > 1) throw new Error('agent/request dispatched twice in one step')
      return { ...p.config, temperature: 'hot' as unknown as number }
    })
    agent.followup('go')
    await agent.whenIdle()
    const outcome = stepOutcome(agent.events) as { kind: string; failure: { code: string; message: string } }
    expect(outcome.kind).toBe('failed')
    expect(outcome.failure.code).toBe('HOOK_ERROR')
    expect(outcome.failure.message.startsWith('agent/request: ')).toBe(true)
    expect(calls).toBe(1)
    expect(errors).toHaveLength(1)
    expect(errors[0]!.where).toBe('agent/request')
    expect(TurnlogError.is(errors[0]!.error)).toBe(true)
    expect(outcome.failure.message).toBe(`agent/request: ${(errors[0]!.error as Error).message}`)
    expect(data(agent.events, 'request/header')).toEqual([])
    expect(model.requests).toHaveLength(0)
    expect(trace(agent.events).slice(-2)).toEqual(['step/end 1.1 failed HOOK_ERROR', 'turn/end 1 error HOOK_ERROR'])
    valid(agent.events)
  })

  it('R5: a cancel while agent/request runs: no header is logged, the model is never called, the step ends aborted', async () => {
    const model = scriptedModel([{ text: 'never' }], { info: { name: 'scripted' } })
    const { agent } = makeAgent(null, { model })
    const d = deferred()
    let reached!: () => void
    const atHook = new Promise<void>((r) => (reached = r))
    let calls = 0
    agent.on('agent/request', async (_p, next) => {
      if (++calls > 1) throw new Error('agent/request dispatched again after the cancel')
      reached()
      await d.gate
      return next()
    })
    agent.followup('go')
    await atHook
    agent.cancel({ kind: 'user' })
    d.release()
    await agent.whenIdle()
    expect(calls).toBe(1)
    expect(model.requests).toHaveLength(0)
    expect(data(agent.events, 'request/header')).toEqual([])
    expect(stepOutcome(agent.events)).toEqual({ kind: 'aborted' })
    expect(trace(agent.events).slice(-2)).toEqual(['step/end 1.1 aborted', 'turn/end 1 aborted user'])
    valid(agent.events)
  })
})

describe('llm/stream (§4.4)', () => {
  it('R7: a throwing listener fails the step HOOK_ERROR "llm/stream: …", reported where = llm/stream, not retried', async () => {
    const model = scriptedModel([{ text: 'never' }], { info: { name: 'scripted' } })
    const { agent, errors } = makeAgent(null, { model, expectErrors: ['llm/stream'] })
    agent.on('llm/stream', () => {
      throw new Error('stream hook broke')
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(stepOutcome(agent.events)).toEqual({ kind: 'failed', failure: { code: 'HOOK_ERROR', message: 'llm/stream: stream hook broke' } })
    expect(errors.map((e) => [e.where, (e.error as Error).message])).toEqual([['llm/stream', 'stream hook broke']])
    expect(model.requests).toHaveLength(0)
    expect(data(agent.events, 'llm/retry')).toEqual([])
    expect(trace(agent.events).slice(-2)).toEqual(['step/end 1.1 failed HOOK_ERROR', 'turn/end 1 error HOOK_ERROR'])
    valid(agent.events)
  })

  it('L7: agent/assistant-stream emits {turn, step, chunk} once per logged assistant/chunk, in order', async () => {
    const { agent } = makeAgent([{ text: 'hello world', chunkSize: 4 }, { text: 'again' }])
    const emitted: Array<{ turn: number; step: number; chunk: StreamChunk }> = []
    agent.on('agent/assistant-stream', (e) => emitted.push(e))
    agent.followup('one')
    agent.followup('two')
    await agent.whenIdle()
    const logged = data(agent.events, 'assistant/chunk')
    expect(logged.length).toBeGreaterThan(4)
    expect(emitted).toEqual(logged)
    expect(new Set(emitted.map((e) => e.turn))).toEqual(new Set([1, 2]))
    valid(agent.events)
  })
})
