/**
 * Example tests: the seed's sequences, event for event (docs/spec/lifecycle.md §1–4, §6). Each test names
 * the invariants its sequence exercises; every log is also run through `verify`.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, type AgentOptions } from '../../agent/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { defineTool } from '../../tools/index.js'
import { verify } from '../../replay/verify.js'
import { guardAgentErrors, type ExpectedAgentError } from './error-guard.js'
import { counterIds, fakeClock, instantTimers, trace } from './helpers.js'

function make(script: readonly ScriptedEntry[], { expectErrors = [], ...opts }: Partial<AgentOptions> & { expectErrors?: readonly ExpectedAgentError[] } = {}) {
  const model = scriptedModel(script, { info: { name: 'scripted' } })
  const errors: unknown[] = []
  const statuses: string[] = []
  const agent = createAgent({
    model,
    system: 'sys',
    clock: fakeClock(),
    ids: counterIds('m'),
    timers: instantTimers(),
    checkRequests: 'full',
    ...opts,
  })
  agent.on('agent/error', (e) => errors.push(e.error))
  guardAgentErrors(agent, expectErrors)
  agent.on('agent/status', (e) => statuses.push(e.status))
  return { agent, model, errors, statuses }
}

function valid(events: Parameters<typeof verify>[0]) {
  const v = verify(events)
  expect(v.violations).toEqual([])
}

const echo = defineTool({
  name: 'echo',
  description: 'echo',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
})

describe('turns', () => {
  it('L2, L3, R1: a simple turn', async () => {
    const { agent, statuses } = make([{ text: 'hello' }])
    agent.followup('hi')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]',
      'turn/start 1',
      'splice next-turn 0 -1 +[]',
      'step/start 1.1',
      'user/message m1',
      'request/header initial',
      'assistant/message stop',
      'step/end 1.1 stop',
      'turn/end 1 completed',
    ])
    expect(statuses).toEqual(['running', 'idle'])
    valid(agent.events)
  })

  it('R2: a burst of followups in one tick is one turn per prompt, in order', async () => {
    const { agent, statuses } = make([{ text: 'a' }, { text: 'b' }, { text: 'c' }])
    agent.followup('1')
    agent.followup('2')
    agent.followup('3')
    // Synchronous wake: the first turn opened and claimed inside the first call.
    expect(trace(agent.events).slice(0, 5)).toEqual([
      'splice next-turn 0 -0 +[m1]', 'turn/start 1', 'splice next-turn 0 -1 +[]',
      'splice next-turn 0 -0 +[m2]', 'splice next-turn 1 -0 +[m3]',
    ])
    await agent.whenIdle()
    const entered = trace(agent.events).filter((l) => l.startsWith('user/message') || l.startsWith('turn/start'))
    expect(entered).toEqual(['turn/start 1', 'user/message m1', 'turn/start 2', 'user/message m2', 'turn/start 3', 'user/message m3'])
    expect(statuses).toEqual(['running', 'idle'])
    valid(agent.events)
  })

  it('L11, L12: a rejected proposal ends the turn blocked; the claimed batch stays removed; the next prompt runs', async () => {
    const { agent } = make([{ text: 'second' }])
    let first = true
    agent.on('agent/pre-step', async (p, next) => {
      if (first) {
        first = false
        return { kind: 'reject' }
      }
      return next()
    })
    agent.followup('one')
    agent.followup('two')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]', 'turn/start 1', 'splice next-turn 0 -1 +[]',
      'splice next-turn 0 -0 +[m2]',
      'turn/end 1 blocked',
      'turn/start 2', 'splice next-turn 0 -1 +[]', 'step/start 2.1', 'user/message m2', 'request/header initial',
      'assistant/message stop', 'step/end 2.1 stop', 'turn/end 2 completed',
    ])
    expect(agent.inbox.nextTurn).toEqual([])
    valid(agent.events)
  })

  it('R7: a throwing pre-step ends the turn error HOOK_ERROR; the agent runs the next followup', async () => {
    const { agent, errors } = make([{ text: 'ok' }], { expectErrors: ['agent/pre-step'] })
    let first = true
    agent.on('agent/pre-step', async (_p, next) => {
      if (first) {
        first = false
        throw new Error('boom')
      }
      return next()
    })
    agent.followup('one')
    await agent.whenIdle()
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 error HOOK_ERROR')
    expect(errors).toHaveLength(1)
    agent.followup('two')
    await agent.whenIdle()
    expect(trace(agent.events).at(-1)).toBe('turn/end 2 completed')
    valid(agent.events)
  })

  it('L12: enter([]) on the first proposal completes the turn with no step', async () => {
    const { agent, model } = make([])
    agent.on('agent/pre-step', async () => ({ kind: 'enter', messages: [] }))
    agent.followup('x')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]', 'turn/start 1', 'splice next-turn 0 -1 +[]', 'turn/end 1 completed',
    ])
    expect(model.requests).toHaveLength(0)
    valid(agent.events)
  })

  it('L11: steering between steps joins the running turn at the next step boundary', async () => {
    const { agent } = make([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }, { text: 'done' }], {
      tools: [defineTool({
        name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }),
        execute: ({ text }) => {
          agent.steer('faster please')
          return text
        },
      })],
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]', 'turn/start 1', 'splice next-turn 0 -1 +[]',
      'step/start 1.1', 'user/message m1', 'request/header initial', 'assistant/message tool-calls',
      'tool/call call_1 echo', 'splice next-step 0 -0 +[m2]', 'tool/result call_1', 'step/end 1.1 tools',
      'splice next-step 0 -1 +[]', 'step/start 1.2', 'user/message m2', 'assistant/message stop', 'step/end 1.2 stop',
      'turn/end 1 completed',
    ])
    valid(agent.events)
  })

  it('R8: an idle inject stays pending, opens no turn, and is claimed by the next waking delivery', async () => {
    const { agent, statuses } = make([{ text: 'ok' }])
    agent.inject('context')
    expect(agent.status).toBe('idle')
    await agent.whenIdle()
    expect(agent.inbox.nextStep.map((m) => m.id)).toEqual(['m1'])
    expect(trace(agent.events)).toEqual(['splice next-step 0 -0 +[m1]'])
    agent.followup('question')
    await agent.whenIdle()
    expect(trace(agent.events).slice(0, 7)).toEqual([
      'splice next-step 0 -0 +[m1]', 'splice next-turn 0 -0 +[m2]', 'turn/start 1',
      'splice next-step 0 -1 +[]', 'splice next-turn 0 -1 +[]', 'step/start 1.1', 'user/message m1',
    ])
    expect(statuses).toEqual(['running', 'idle'])
    valid(agent.events)
  })

  it('L12: turn-stopping may steer, and the turn goes on', async () => {
    const { agent } = make([{ text: 'first' }, { text: 'second' }])
    let once = true
    agent.on('agent/turn-stopping', ({ agent: a }) => {
      if (once) {
        once = false
        a.steer('one more thing')
      }
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).slice(3)).toEqual([
      'step/start 1.1', 'user/message m1', 'request/header initial', 'assistant/message stop', 'step/end 1.1 stop',
      'splice next-step 0 -0 +[m2]', 'splice next-step 0 -1 +[]', 'step/start 1.2', 'user/message m2',
      'assistant/message stop', 'step/end 1.2 stop', 'turn/end 1 completed',
    ])
    valid(agent.events)
  })

  it('L12: max-tokens is sticky for the rest of the turn and not carried over', async () => {
    const { agent } = make([{ text: 'cut', maxTokens: true }, { text: 'rest' }, { text: 'new turn' }])
    let once = true
    agent.on('agent/turn-stopping', ({ agent: a }) => {
      if (once) {
        once = false
        a.steer('continue')
      }
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('step/end') || l.startsWith('turn/end'))).toEqual([
      'step/end 1.1 max-tokens', 'step/end 1.2 stop', 'turn/end 1 max-tokens',
    ])
    agent.followup('again')
    await agent.whenIdle()
    expect(trace(agent.events).at(-1)).toBe('turn/end 2 completed')
    valid(agent.events)
  })

  it('L10: max-tokens drops truncated tool calls and runs no tool', async () => {
    const { agent } = make([{ text: 'partial', toolCalls: [{ name: 'echo', args: { text: 'x' } }], maxTokens: true }], { tools: [echo] })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('tool/'))).toEqual([])
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 max-tokens')
    valid(agent.events)
  })

  it('L12: the step budget ends the turn step-limit instead of proposing one more step', async () => {
    const calls = Array.from({ length: 5 }, () => ({ toolCalls: [{ name: 'echo', args: { text: 'x' } }] }))
    const { agent, model } = make(calls, { tools: [echo], maxStepsPerTurn: 3 })
    agent.followup('loop')
    await agent.whenIdle()
    expect(model.requests).toHaveLength(3)
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 step-limit')
    expect(verify(agent.events, { maxStepsPerTurn: 3 }).violations).toEqual([])
  })
})

describe('failures and retries', () => {
  it('L13, L16: a transient failure closes the step, logs llm/retry, ends the turn error and opens a fresh retry turn', async () => {
    const timers = instantTimers()
    const { agent, model } = make([{ error: { code: 'RATE_LIMIT', retryAfterMs: 1200 } }, { text: 'ok' }], { timers })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]', 'turn/start 1', 'splice next-turn 0 -1 +[]',
      'step/start 1.1', 'user/message m1', 'request/header initial', 'step/end 1.1 failed RATE_LIMIT',
      'llm/retry 1 RATE_LIMIT', 'turn/end 1 error RATE_LIMIT',
      'turn/start 2 retry-of 1', 'step/start 2.1', 'assistant/message stop', 'step/end 2.1 stop', 'turn/end 2 completed',
    ])
    expect(timers.slept).toEqual([1200])
    // The retry re-requests from the surface as it stands: the same user message.
    expect(model.requests[1]!.messages).toEqual(model.requests[0]!.messages)
    valid(agent.events)
  })

  it('L16: the retry budget bounds one failure chain', async () => {
    const fail = { error: { code: 'SERVER' } }
    const { agent, model } = make([fail, fail, fail], { retry: { maxRetries: 2 } })
    agent.followup('go')
    await agent.whenIdle()
    expect(model.requests).toHaveLength(3)
    expect(trace(agent.events).filter((l) => l.startsWith('llm/retry') || l.startsWith('turn/'))).toEqual([
      'turn/start 1', 'llm/retry 1 SERVER', 'turn/end 1 error SERVER',
      'turn/start 2 retry-of 1', 'llm/retry 2 SERVER', 'turn/end 2 error SERVER',
      'turn/start 3 retry-of 2', 'turn/end 3 error SERVER',
    ])
    expect(verify(agent.events, { maxRetries: 2 }).violations).toEqual([])
  })

  it('L12: a refused retry leaves the failure terminal', async () => {
    const { agent, model } = make([{ error: { code: 'INVALID_CREDENTIAL' } }])
    agent.followup('go')
    await agent.whenIdle()
    expect(model.requests).toHaveLength(1)
    expect(trace(agent.events).slice(-2)).toEqual(['step/end 1.1 failed INVALID_CREDENTIAL', 'turn/end 1 error INVALID_CREDENTIAL'])
    valid(agent.events)
  })

  it('R7: a throwing system-prompt/assemble fails the step HOOK_ERROR without offering a retry', async () => {
    const { agent } = make([], { expectErrors: ['system-prompt/assemble'] })
    let offered = false
    agent.on('system-prompt/assemble', () => {
      throw new Error('nope')
    })
    agent.on('agent/request-error', async (_p, next) => {
      offered = true
      return next()
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(offered).toBe(false)
    expect(trace(agent.events).slice(-2)).toEqual(['step/end 1.1 failed HOOK_ERROR', 'turn/end 1 error HOOK_ERROR'])
    valid(agent.events)
  })

  it('L9: a stream that breaks the grammar fails the step STREAM_GRAMMAR', async () => {
    const { agent } = make([[{ type: 'text-delta', index: 0, text: 'no block' }]], { retry: false })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).slice(-2)).toEqual(['step/end 1.1 failed STREAM_GRAMMAR', 'turn/end 1 error STREAM_GRAMMAR'])
    valid(agent.events)
  })
})

describe('cancel and dispose', () => {
  function gatedModel() {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    return { gate, release }
  }

  it('R5, L7: cancel mid-stream after visible text writes an interrupted message citing the chunks seen', async () => {
    const g = gatedModel()
    const model = scriptedModel([{ text: 'hello world', chunkSize: 5 }], {
      beforeChunk: async ({ chunk }) => {
        if (chunk === 3) await g.gate
      },
    })
    const { agent } = make([], { model })
    agent.followup('go')
    await new Promise((r) => setTimeout(r, 5))
    agent.cancel({ kind: 'user' })
    g.release()
    await agent.whenIdle()
    expect(trace(agent.events).slice(-3)).toEqual(['assistant/message stop interrupted', 'step/end 1.1 aborted', 'turn/end 1 aborted user'])
    const msg = agent.events.find((e) => e.type === 'assistant/message')!
    expect((msg.data as any).message.content).toEqual([{ type: 'text', text: 'hello world'.slice(0, 10) }])
    valid(agent.events)
  })

  it('R5: cancel mid-stream before any visible text writes no assistant message', async () => {
    const g = gatedModel()
    const model = scriptedModel([{ text: 'hello' }], {
      beforeChunk: async ({ chunk }) => {
        if (chunk === 1) await g.gate
      },
    })
    const { agent } = make([], { model })
    agent.followup('go')
    await new Promise((r) => setTimeout(r, 5))
    agent.cancel({ kind: 'hook', reason: 'test' })
    g.release()
    await agent.whenIdle()
    expect(trace(agent.events).slice(-2)).toEqual(['step/end 1.1 aborted', 'turn/end 1 aborted hook'])
    expect(agent.events.some((e) => e.type === 'assistant/message')).toBe(false)
    valid(agent.events)
  })

  it('L11: cancel without keepInbox clears both lists as canceled splices', async () => {
    const g = gatedModel()
    const model = scriptedModel([{ text: 'a' }], { beforeChunk: () => g.gate })
    const { agent } = make([], { model })
    agent.followup('one')
    agent.followup('two')
    agent.inject('ctx')
    agent.cancel()
    g.release()
    await agent.whenIdle()
    expect(agent.inbox.nextTurn).toEqual([])
    expect(agent.inbox.nextStep).toEqual([])
    expect(trace(agent.events)).toContain('splice next-step 0 -1 +[] canceled')
    expect(trace(agent.events)).toContain('splice next-turn 0 -1 +[] canceled')
    expect(agent.events.filter((e) => e.type === 'turn/start')).toHaveLength(1)
    valid(agent.events)
  })

  it('R5: cancel with keepInbox parks queued work until the next waking delivery', async () => {
    const g = gatedModel()
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }, { text: 'c' }], {
      beforeChunk: ({ request }) => (request === 0 ? g.gate : undefined),
    })
    const { agent } = make([], { model })
    agent.followup('one')
    agent.followup('two')
    await new Promise((r) => setTimeout(r, 1))
    agent.cancel({ kind: 'user' }, { keepInbox: true })
    g.release()
    await agent.whenIdle()
    expect(agent.status).toBe('idle')
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['m2'])
    expect(agent.events.filter((e) => e.type === 'turn/start')).toHaveLength(1)
    agent.followup('three')
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('user/message'))).toEqual(['user/message m1', 'user/message m2', 'user/message m3'])
    valid(agent.events)
  })

  it('docs/spec/lifecycle.md §1: a waking send while a turn is aborting is re-targeted to next-turn and opens the next turn', async () => {
    const g = gatedModel()
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }], {
      beforeChunk: ({ request }) => (request === 0 ? g.gate : undefined),
    })
    const { agent } = make([], { model })
    agent.followup('one')
    await new Promise((r) => setTimeout(r, 1))
    agent.cancel()
    agent.steer('after cancel')
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['m2'])
    g.release()
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('turn/'))).toEqual([
      'turn/start 1', 'turn/end 1 aborted user', 'turn/start 2', 'turn/end 2 completed',
    ])
    valid(agent.events)
  })

  it('R5: dispose mid-turn aborts with disposed, never starts queued work, and refuses later input', async () => {
    const g = gatedModel()
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }], { beforeChunk: () => g.gate })
    const { agent } = make([], { model })
    agent.followup('one')
    agent.followup('two')
    const done = agent.dispose()
    g.release()
    await done
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 aborted disposed')
    expect(agent.events.filter((e) => e.type === 'turn/start')).toHaveLength(1)
    expect(() => agent.followup('three')).toThrowError(expect.objectContaining({ code: 'AGENT_DISPOSED' }))
    valid(agent.events)
  })

  it('L11: a cancel during pre-step loses the claimed batch (claimed, never entered) but keeps the rest with keepInbox', async () => {
    const { agent } = make([{ text: 'b' }])
    agent.followup('one')
    agent.followup('two')
    agent.cancel({ kind: 'user' }, { keepInbox: true })
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]', 'turn/start 1', 'splice next-turn 0 -1 +[]', 'splice next-turn 0 -0 +[m2]',
      'turn/end 1 aborted user',
    ])
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['m2'])
    valid(agent.events)
  })

  it('R5: an idle cancel is a no-op', async () => {
    const { agent } = make([])
    agent.inject('ctx')
    agent.cancel()
    expect(agent.inbox.nextStep).toHaveLength(1)
    expect(agent.events).toHaveLength(1)
  })
})

describe('inbox edits', () => {
  it('L11: duplicate pending ids are refused with a coded error and nothing is logged', () => {
    const { agent } = make([])
    agent.inject({ id: 'x', content: [{ type: 'text', text: 'a' }] })
    expect(() => agent.inject({ id: 'x', content: [{ type: 'text', text: 'b' }] })).toThrowError(
      expect.objectContaining({ code: 'DUPLICATE_PENDING_ID' }),
    )
    expect(agent.events).toHaveLength(1)
  })

  it('L11: replace, remove, splice and clear are durable canceled splices', () => {
    const { agent } = make([])
    agent.inbox.append('next-turn', 'a')
    agent.inbox.append('next-turn', 'b')
    agent.inbox.prepend('next-step', 'c')
    expect(agent.inbox.replace('m2', 'B')).toBe(true)
    expect(agent.inbox.remove('m1')).toBe(true)
    expect(agent.inbox.remove('nope')).toBe(false)
    agent.inbox.splice('next-turn', -1, 0, 'z')
    agent.inbox.clear()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]', 'splice next-turn 1 -0 +[m2]', 'splice next-step 0 -0 +[m3]',
      'splice next-turn 1 -1 +[m4] canceled', 'splice next-turn 0 -1 +[] canceled', 'splice next-turn 0 -0 +[m5]',
      'splice next-step 0 -1 +[] canceled', 'splice next-turn 0 -2 +[] canceled',
    ])
    expect(agent.status).toBe('idle')
    valid(agent.events)
  })

  it('API misuse: followup with a non-message is INVALID_MESSAGE; runMaintenance while running is AGENT_BUSY', async () => {
    const { agent } = make([{ text: 'x' }])
    expect(() => agent.followup(42 as never)).toThrowError(expect.objectContaining({ code: 'INVALID_MESSAGE' }))
    agent.followup('go')
    await expect(agent.runMaintenance(() => 1)).rejects.toMatchObject({ code: 'AGENT_BUSY' })
    await agent.whenIdle()
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 completed') // the misuse left the turn alone
    expect(await agent.runMaintenance(() => 7)).toBe(7)
  })

  it('docs/spec/lifecycle.md §2: a followup during maintenance is latched and runs once maintenance ends; status stays idle meanwhile', async () => {
    const { agent, statuses } = make([{ text: 'x' }])
    let release!: () => void
    const m = agent.runMaintenance(() => new Promise<void>((r) => (release = r)))
    agent.followup('during')
    expect(agent.status).toBe('idle')
    expect(agent.events.filter((e) => e.type === 'turn/start')).toHaveLength(0)
    release()
    await m
    await agent.whenIdle()
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 completed')
    expect(statuses).toEqual(['running', 'idle'])
  })
})

describe('snapshot', () => {
  it('P2: snapshot() shows the machines and the lifecycle position, pending tool calls included', async () => {
    let seen: ReturnType<typeof make>['agent'] | null = null
    let snap: any = null
    const slow = defineTool({
      name: 'slow', description: 'slow', parameters: z.object({}),
      execute: async () => {
        snap = seen!.snapshot()
        return 'ok'
      },
    })
    const { agent } = make([{ toolCalls: [{ name: 'slow', args: {} }] }, { text: 'done' }], { tools: [slow] })
    seen = agent
    agent.followup('go')
    await agent.whenIdle()
    expect(snap.status).toBe('running')
    expect(snap.turn.state).toEqual({ running: 'stepping' })
    expect(snap.step).toMatchObject({ state: 'runningTools', turn: 1, step: 1 })
    expect(snap.openTurn).toBe(1)
    expect(snap.openStep).toBe(1)
    expect(snap.pendingToolCalls.map((c: any) => c.callId)).toEqual(['call_1'])
    const idle = agent.snapshot()
    expect(idle).toMatchObject({ status: 'idle', step: null, openTurn: null, openStep: null, pendingToolCalls: [] })
    expect(idle.lastSeq).toBe(agent.events.length - 1)
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 completed')
  })
})

describe('wake', () => {
  it('docs/spec/lifecycle.md §3.8: wake() runs work parked by an aborted turn, and does nothing without a queued prompt', async () => {
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }], { beforeChunk: async ({ request }) => { if (request === 0) await new Promise((r) => setTimeout(r, 5)) } })
    const { agent } = make([], { model })
    agent.followup('one')
    agent.followup('two')
    await new Promise((r) => setTimeout(r, 1))
    agent.cancel({ kind: 'user' }, { keepInbox: true })
    await agent.whenIdle()
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['m2'])
    const before = agent.events.length
    expect(agent.wake()).toBe(true)
    expect(agent.status).toBe('running')
    expect(trace(agent.events.slice(before)).slice(0, 2)).toEqual(['turn/start 2', 'splice next-turn 0 -1 +[]'])
    await agent.whenIdle()
    expect(trace(agent.events).at(-1)).toBe('turn/end 2 completed')
    agent.inject('ctx')
    expect(agent.wake()).toBe(false)
    expect(agent.status).toBe('idle')
    valid(agent.events)
  })
})

describe('maintenance latch', () => {
  it('docs/spec/lifecycle.md §2: a wake latched during maintenance is replayed once; next-step input left at that turn\'s end opens no extra turn', async () => {
    const { agent } = make([{ text: 'x' }, { text: 'y' }])
    let first = true
    agent.on('agent/pre-step', async (p) => {
      if (first) {
        first = false
        p.agent.inject('context left pending')   // next-step is non-empty when the turn ends blocked
      }
      return { kind: 'reject' }
    })
    let release!: () => void
    const m = agent.runMaintenance(() => new Promise<void>((r) => (release = r)))
    agent.followup('during')
    release()
    await m
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('turn/'))).toEqual(['turn/start 1', 'turn/end 1 blocked'])
    expect(agent.inbox.nextStep).toHaveLength(1)
    expect(agent.snapshot().inbox.latched).toBe(false)
    valid(agent.events)
  })
})
