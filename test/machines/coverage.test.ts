/**
 * Every state and every transition of the turn, step and inbox machines is reached by a real
 * agent run (issue: "every state and transition of each machine is reached by a test"). The list
 * of transitions comes from XState's graph utilities, so a transition added to a machine without
 * a scenario that takes it fails this test.
 */
import { toDirectedGraph, type DirectedGraphNode } from '@xstate/graph'
import type { AnyStateMachine, InspectionEvent } from 'xstate'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, type Agent, type AgentOptions } from '../../agent/index.js'
import { inboxMachine, stepMachine, turnMachine } from '../../machines/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { defineTool } from '../../tools/index.js'
import { verify } from '../../replay/verify.js'
import { guardAgentErrors, type ExpectedAgentError } from '../agent/error-guard.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'

/** The scenarios below make hooks throw `Error('x')` on purpose, reported where the hook runs; any
 * other `agent/error` (the driver's catch-all, the scheduler's) fails the test (issue 15 part 3). */
const PROVOKED: ExpectedAgentError[] = [(e) => e.where !== 'driver' && e.error instanceof Error && e.error.message === 'x']

interface Edge { machine: string; key: string; transition: unknown }

function edgesOf(machine: AnyStateMachine): Edge[] {
  const out: Edge[] = []
  const walk = (n: DirectedGraphNode) => {
    for (const e of n.edges) {
      const t = e.transition as { eventType: string; guard?: unknown; target?: unknown }
      const guard = typeof t.guard === 'string' ? t.guard : (t.guard as { type?: string } | undefined)?.type ?? ''
      out.push({ machine: machine.id, key: `${e.source.id} --${t.eventType || 'always'}${guard ? `[${guard}]` : ''}--> ${e.target.id}`, transition: e.transition })
    }
    n.children.forEach(walk)
  }
  walk(toDirectedGraph(machine))
  return out
}

function statesOf(machine: AnyStateMachine): string[] {
  const out: string[] = []
  const walk = (n: DirectedGraphNode) => {
    out.push(n.id)
    n.children.forEach(walk)
  }
  walk(toDirectedGraph(machine))
  return out
}

const taken = new Set<unknown>()
const visited = new Set<string>()
function inspect(ev: InspectionEvent) {
  if (ev.type === '@xstate.microstep') {
    for (const t of ev._transitions) taken.add(t)
    const snap = ev.snapshot as { machine?: { id: string }; _nodes?: Array<{ id: string }> }
    for (const n of snap._nodes ?? []) visited.add(n.id)
  }
  if (ev.type === '@xstate.snapshot') {
    const snap = ev.snapshot as { _nodes?: Array<{ id: string }> }
    for (const n of snap._nodes ?? []) visited.add(n.id)
  }
}

const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text })
const finisher = defineTool({
  name: 'finish', description: 'ends the turn', parameters: z.object({}),
  execute: (_a, ctx) => {
    ctx.concludeTurn()
    return 'done'
  },
})

async function run(script: readonly ScriptedEntry[], setup: (a: Agent) => void, act: (a: Agent) => Promise<void> | void, opts: Partial<AgentOptions> = {}) {
  const agent = createAgent({
    model: scriptedModel(script),
    tools: [echo, finisher],
    clock: fakeClock(),
    ids: counterIds('m'),
    timers: instantTimers(),
    inspect,
    ...opts,
  })
  guardAgentErrors(agent, PROVOKED)
  setup(agent)
  await act(agent)
  await agent.whenIdle()
  expect(verify(agent.events, { maxStepsPerTurn: opts.maxStepsPerTurn ?? 64 }).violations).toEqual([])
  return agent
}

const tick = () => new Promise((r) => setTimeout(r, 1))

describe('machine coverage', () => {
  it('every state and transition of the turn, step and inbox machines is taken by some scenario', async () => {
    // plain turn with tools, then stop
    await run([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }, { text: 'ok' }], () => {}, (a) => { a.followup('go') })
    // concluded by a tool
    await run([{ toolCalls: [{ name: 'finish', args: {} }] }], () => {}, (a) => { a.followup('go') })
    // max-tokens (truncated)
    await run([{ text: 'cut', maxTokens: true }], () => {}, (a) => { a.followup('go') })
    // reject, empty enter, throwing pre-step
    await run([], (a) => a.on('agent/pre-step', async () => ({ kind: 'reject' })), (a) => { a.followup('go') })
    await run([], (a) => a.on('agent/pre-step', async () => ({ kind: 'enter', messages: [] })), (a) => { a.followup('go') })
    await run([], (a) => a.on('agent/pre-step', async () => { throw new Error('x') }), (a) => { a.followup('go') })
    // a budget spent before a request (docs/spec/lifecycle.md §10)
    await run([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }], () => {}, (a) => { a.followup('go') }, { budget: { toolCalls: 1, scope: 'turn' } })
    // ... and a cancel that arrives while that turn closes (its end decided, turn/end not yet
    // written): the cancel wins (R5), the turn ends aborted
    {
      let target: Agent | null = null
      let canceled = false
      const agent = await run([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }], (a) => { target = a }, (a) => { a.followup('go') }, {
        budget: { toolCalls: 1, scope: 'turn' },
        inspect: (ev: InspectionEvent) => {
          inspect(ev)
          if (canceled || target === null || ev.type !== '@xstate.snapshot') return
          const snap = ev.snapshot as { value?: unknown; machine?: { id: string } }
          if (snap.machine?.id !== 'turn') return
          if (JSON.stringify(snap.value) !== JSON.stringify({ running: 'closing' })) return
          canceled = true
          ;(target as Agent).cancel({ kind: 'user' })
        },
      })
      expect(canceled).toBe(true)
      expect(agent.events.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)).toEqual(['aborted'])
    }
    // step limit
    await run([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }], () => {}, (a) => { a.followup('go') }, { maxStepsPerTurn: 1 })
    // steer pending after a stop (from the stream observer) continues the turn without turn-stopping
    await run([{ text: 'a' }, { text: 'b' }], (a) => {
      let once = true
      a.on('agent/assistant-stream', ({ chunk }) => {
        if (once && chunk.type === 'finish') { once = false; a.steer('more') }
      })
    }, (a) => { a.followup('go') })
    // turn-stopping steers; turn-stopping throws
    await run([{ text: 'a' }, { text: 'b' }], (a) => {
      let once = true
      a.on('agent/turn-stopping', ({ agent }) => { if (once) { once = false; agent.steer('again') } })
    }, (a) => { a.followup('go') })
    await run([{ text: 'a' }], (a) => a.on('agent/turn-stopping', () => { throw new Error('x') }), (a) => { a.followup('go') })
    // cancel inside turn-stopping
    await run([{ text: 'a' }], (a) => a.on('agent/turn-stopping', ({ agent }) => agent.cancel()), (a) => { a.followup('go') })
    // retry authorised, retry refused, cancel during request-error
    await run([{ error: { code: 'SERVER' } }, { text: 'ok' }], () => {}, (a) => { a.followup('go') })
    await run([{ error: { code: 'QUOTA' } }], () => {}, (a) => { a.followup('go') })
    await run([{ error: { code: 'SERVER' } }], (a) => a.on('agent/request-error', async ({ agent }, next) => { agent.cancel(); return next() }), (a) => { a.followup('go') })
    // hook failures in each step phase
    await run([], (a) => a.on('system-prompt/assemble', () => { throw new Error('x') }), (a) => { a.followup('go') })
    await run([], (a) => a.on('agent/request', () => { throw new Error('x') }), (a) => { a.followup('go') })
    await run([], (a) => a.on('llm/stream', () => { throw new Error('x') }), (a) => { a.followup('go') })
    // cancels in each step phase
    await run([{ text: 'a' }], (a) => a.subscribe((e) => { if (e.type === 'step/start') a.cancel({ kind: 'user' }, { keepInbox: true }) }), (a) => { a.followup('go') })
    await run([{ text: 'a' }], (a) => a.on('system-prompt/assemble', (p, next) => { a.cancel(); return next() }), (a) => { a.followup('go') })
    await run([{ text: 'a' }], (a) => a.on('agent/request', (p, next) => { a.cancel(); return next() }), (a) => { a.followup('go') })
    await run([{ text: 'hello there', chunkSize: 2 }], (a) => a.on('agent/assistant-stream', ({ chunk }) => { if (chunk.type === 'text-delta') a.cancel({ kind: 'user' }, { keepInbox: true }) }), (a) => { a.followup('go') })
    await run([{ text: 'a' }], (a) => a.on('agent/assistant-stream', ({ chunk }) => { if (chunk.type === 'finish') a.cancel({ kind: 'user' }, { keepInbox: true }) }), (a) => { a.followup('go') })
    await run([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }, { name: 'echo', args: { text: 'b' } }] }],
      (a) => a.on('tools/execute', async (p, next) => { a.cancel(); return next() }), (a) => { a.followup('go') })
    // a hook that cancels and then throws: the cancel wins (R5)
    await run([{ text: 'a' }], (a) => a.on('agent/turn-stopping', ({ agent }) => { agent.cancel(); throw new Error('x') }), (a) => { a.followup('go') })
    await run([], (a) => a.on('system-prompt/assemble', () => { a.cancel(); throw new Error('x') }), (a) => { a.followup('go') })
    await run([], (a) => a.on('agent/request', () => { a.cancel(); throw new Error('x') }), (a) => { a.followup('go') })
    await run([], (a) => a.on('llm/stream', () => { a.cancel(); throw new Error('x') }), (a) => { a.followup('go') })
    // cancel during pre-step; keepInbox + latched wake during the abort; maintenance with a latched wake
    await run([{ text: 'a' }, { text: 'b' }], (a) => a.on('agent/pre-step', async (p, next) => { await tick(); return next() }), async (a) => {
      a.followup('one')
      a.cancel({ kind: 'user' }, { keepInbox: true })
      a.followup('two')
    })
    await run([{ text: 'x' }], () => {}, async (a) => {
      let release!: () => void
      const m = a.runMaintenance(() => new Promise<void>((r) => (release = r)))
      a.followup('during')
      release()
      await m
    })
    await run([{ text: 'a' }, { text: 'b' }], () => {}, (a) => { a.followup('1'); a.followup('2') })
    // parked while a call waits for a person, then approved (docs/spec/lifecycle.md §9)
    const gated = defineTool({ name: 'gated', description: 'needs a yes', parameters: z.object({}), needsApproval: true, execute: () => 'ok' })
    await run([{ toolCalls: [{ name: 'gated', args: {} }] }, { text: 'ok' }], () => {}, async (a) => {
      a.followup('go')
      expect(await a.whenSettled()).toBe('parked')
      await a.decide(a.approvals()[0]!.approvalId, { kind: 'approve' })
    }, { tools: [echo, finisher, gated] })
    // a parked log restored by a new agent (docs/spec/lifecycle.md §9): RESTORE into the turn's step and the step's tool phase
    const parked = createAgent({ model: scriptedModel([{ toolCalls: [{ name: 'gated', args: {} }] }]), tools: [gated], clock: fakeClock(), ids: counterIds('p'), timers: instantTimers() })
    parked.followup('go')
    await parked.whenSettled()
    await parked.dispose()
    await run([{ text: 'ok' }], () => {}, async (a) => {
      expect(a.wake()).toBe(true)
      expect(a.status).toBe('parked')
      await a.decide(a.approvals()[0]!.approvalId, { kind: 'approve' })
    }, { tools: [echo, finisher, gated], prefix: parked.events })

    const missing: string[] = []
    const unvisited: string[] = []
    for (const m of [turnMachine, stepMachine, inboxMachine]) {
      for (const e of edgesOf(m)) if (!taken.has(e.transition)) missing.push(`${e.machine}: ${e.key}`)
      for (const s of statesOf(m)) if (!visited.has(s)) unvisited.push(s)
    }
    expect(unvisited).toEqual([])
    expect(missing).toEqual([])
    expect(taken.size).toBeGreaterThan(40)
  })
})
