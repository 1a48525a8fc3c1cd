/**
 * The step's tool phase, as the step driver wires it (docs/spec/lifecycle.md §4.5, §5; agent/step-driver.ts
 * `toolEnv`): only the message's tool-call blocks run, `tools/post-execute` additional contexts are
 * queued into next-step in model order (and the next step enters them), tool timeouts run on the
 * agent's injectable timers (armed when a body starts, cleared when it settles), and a cancel while
 * tools run ends the step `aborted`.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Timers } from '../../agent/index.js'
import type { UserMessage } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { defineTool } from '../../tools/index.js'
import { data, makeAgent, valid } from './contain-helpers.js'
import { trace } from './helpers.js'

const echo = defineTool({
  name: 'echo',
  description: 'echo',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
})

/** Timers under the test's control: a timeout fires only when the test says so. */
function manualTimers() {
  const pending = new Map<number, { fn: () => void; ms: number }>()
  const set: number[] = []
  let n = 0
  const timers: Timers = {
    sleep: async () => {},
    random: () => 0.5,
    setTimeout: (fn, ms) => {
      set.push(ms)
      pending.set(++n, { fn, ms })
      return n
    },
    clearTimeout: (h) => {
      pending.delete(h as number)
    },
  }
  return {
    timers,
    /** Every `setTimeout` delay asked for, in order. */
    set,
    armed: (ms: number) => [...pending.values()].filter((t) => t.ms === ms).length,
    fire(ms: number) {
      for (const [id, t] of [...pending]) {
        if (t.ms !== ms) continue
        pending.delete(id)
        t.fn()
      }
    },
  }
}

const context = (id: string, text: string): UserMessage => ({
  id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'hook', name: 'post' },
})

describe('tool calls of a step (§4.5, §5)', () => {
  it('L5: a message with text and a tool call runs exactly the tool-call block (text and reasoning are not calls)', async () => {
    const model = scriptedModel([
      { reasoning: 'think', text: 'let me echo', toolCalls: [{ name: 'echo', args: { text: 'x' }, id: 'c1' }] },
      { text: 'done' },
    ], { info: { name: 'scripted' } })
    const { agent } = makeAgent(null, { model, tools: [echo] })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]', 'turn/start 1', 'splice next-turn 0 -1 +[]',
      'step/start 1.1', 'user/message m1', 'request/header initial', 'assistant/message tool-calls',
      'tool/call c1 echo', 'tool/result c1', 'step/end 1.1 tools',
      'step/start 1.2', 'assistant/message stop', 'step/end 1.2 stop', 'turn/end 1 completed',
    ])
    expect(data(agent.events, 'tool/result').map((d) => d.message.content)).toEqual([[{ type: 'text', text: 'x' }]])
    valid(agent.events)
  })

  it('L11, R3: tools/post-execute additionalContexts are queued into next-step in order, and the next step enters them', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'echo', args: { text: 'x' }, id: 'c1' }] }, { text: 'done' }], { info: { name: 'scripted' } })
    const { agent } = makeAgent(null, { model, tools: [echo] })
    agent.on('tools/post-execute', async (_p, next) => {
      const d = await next()
      return { ...d, additionalContexts: [context('ctx1', 'first'), context('ctx2', 'second')] }
    })
    agent.followup('go')
    await agent.whenIdle()
    const t = trace(agent.events)
    expect(t.slice(t.indexOf('tool/result c1'))).toEqual([
      'tool/result c1',
      'splice next-step 0 -0 +[ctx1]',
      'splice next-step 1 -0 +[ctx2]',
      'step/end 1.1 tools',
      'splice next-step 0 -2 +[]',
      'step/start 1.2', 'user/message ctx1', 'user/message ctx2',
      'assistant/message stop', 'step/end 1.2 stop', 'turn/end 1 completed',
    ])
    // the second request carries them after the tool result (model-visible means logged)
    const second = model.requests[1]!.messages
    expect(second.slice(-2)).toEqual([
      { id: 'ctx1', role: 'user', content: [{ type: 'text', text: 'first' }], source: { kind: 'hook', name: 'post' } },
      { id: 'ctx2', role: 'user', content: [{ type: 'text', text: 'second' }], source: { kind: 'hook', name: 'post' } },
    ])
    valid(agent.events)
  })

  it('L5: a tool timeout runs on the agent timers: armed when the body starts; firing it commits TOOL_TIMEOUT', async () => {
    const mt = manualTimers()
    let started!: () => void
    const bodyStarted = new Promise<void>((r) => (started = r))
    const hang = defineTool({
      name: 'hang', description: 'hangs until aborted', parameters: z.object({}), timeoutMs: 4321,
      execute: (_a, ctx) => new Promise((_r, reject) => {
        started()
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))
      }),
    })
    const model = scriptedModel([{ toolCalls: [{ name: 'hang', args: {}, id: 'c1' }] }, { text: 'done' }], { info: { name: 'scripted' } })
    const { agent } = makeAgent(null, { model, tools: [hang], timers: mt.timers })
    agent.followup('go')
    await bodyStarted
    expect(mt.armed(4321)).toBe(1)
    mt.fire(4321)
    await agent.whenIdle()
    const results = data(agent.events, 'tool/result')
    expect(results.map((d) => [d.callId, d.error?.code])).toEqual([['c1', 'TOOL_TIMEOUT']])
    expect(results[0]!.message.content).toEqual([{ type: 'text', text: "Tool 'hang' did not finish within 4321 ms." }])
    expect(trace(agent.events).slice(-5)).toEqual(['step/end 1.1 tools', 'step/start 1.2', 'assistant/message stop', 'step/end 1.2 stop', 'turn/end 1 completed'])
    valid(agent.events)
  })

  it('L5: a tool that settles before its timeout leaves no timer pending (the timeout is cleared on the agent timers)', async () => {
    const mt = manualTimers()
    const quick = defineTool({ name: 'quick', description: 'q', parameters: z.object({}), timeoutMs: 6543, execute: async () => 'ok' })
    const model = scriptedModel([{ toolCalls: [{ name: 'quick', args: {}, id: 'c1' }, { name: 'quick', args: {}, id: 'c2' }] }, { text: 'done' }], { info: { name: 'scripted' } })
    const { agent } = makeAgent(null, { model, tools: [quick], timers: mt.timers })
    agent.followup('go')
    await agent.whenIdle()
    expect(mt.set.filter((ms) => ms === 6543)).toHaveLength(2)
    expect(mt.armed(6543)).toBe(0)
    expect(data(agent.events, 'tool/result').map((d) => [d.callId, d.error?.code])).toEqual([['c1', undefined], ['c2', undefined]])
    valid(agent.events)
  })

  it('R5: a cancel while a tool runs: the started call is drained and committed, the step ends aborted (not tools), no further step', async () => {
    let started!: () => void
    const bodyStarted = new Promise<void>((r) => (started = r))
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const slow = defineTool({
      name: 'slow', description: 's', parameters: z.object({}),
      execute: async () => {
        started()
        await gate
        return 'late'
      },
    })
    const model = scriptedModel([{ toolCalls: [{ name: 'slow', args: {}, id: 'c1' }] }, { text: 'never' }], { info: { name: 'scripted' } })
    const { agent } = makeAgent(null, { model, tools: [slow] })
    agent.followup('go')
    await bodyStarted
    agent.cancel({ kind: 'user' })
    release()
    await agent.whenIdle()
    expect(model.requests).toHaveLength(1)
    const t = trace(agent.events)
    expect(t.slice(t.indexOf('tool/call c1 slow'))).toEqual([
      'tool/call c1 slow', 'tool/result c1', 'step/end 1.1 aborted', 'turn/end 1 aborted user',
    ])
    valid(agent.events)
  })
})
