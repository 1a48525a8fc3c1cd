/**
 * Issue 9 item 2: cancel and dispose are always bounded (docs/spec/lifecycle.md §6, R5, R7, R8). A hook or tool
 * that never settles is abandoned `cancelGraceMs` after the cancel (measured with the injectable
 * timers; these tests fire the grace timer by hand): the turn ends `aborted`, an abandoned call
 * gets its `tool/result` `ABORTED`, `agent/error` reports `ABANDONED`, and a late settlement is
 * ignored and reported (`LATE_SETTLEMENT`).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { AgentOptions, HookMap, Timers } from '../../agent/index.js'
import { TurnlogError } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { defineTool } from '../../tools/index.js'
import { data, endKinds, makeAgent, valid, type MakeAgentOptions } from './contain-helpers.js'

const GRACE = 777

/** Timers under the test's control: nothing fires until `fire(ms)`. */
function manualTimers() {
  const pending = new Map<number, { fn: () => void; ms: number }>()
  let n = 0
  const timers: Timers = {
    sleep: async () => {},
    random: () => 0.5,
    setTimeout: (fn, ms) => {
      pending.set(++n, { fn, ms })
      return n
    },
    clearTimeout: (h) => {
      pending.delete(h as number)
    },
  }
  return {
    timers,
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

/** Lets every queued callback and microtask run (the agent is waiting on user code, or not). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
}

function never<T>(): Promise<T> {
  return new Promise<T>(() => {})
}

const slowTool = (hang: () => Promise<unknown>) => defineTool({
  name: 't', description: 't', parameters: z.object({}), isConcurrencySafe: () => true, execute: async () => hang(),
})

const TOOL_THEN_TEXT: ScriptedEntry[] = [{ toolCalls: [{ name: 't', args: {} }, { name: 't', args: {} }] }, { text: 'done' }]

/**
 * Runs one turn whose `where` never settles (the first time), cancels once it is reached, checks
 * the turn is not released before the grace period runs out and is after, then runs a second turn.
 */
async function hangThenCancel(where: string, hooks: AgentOptions['hooks'], reached: Promise<void>, opts: MakeAgentOptions = {}) {
  const mt = manualTimers()
  let modelCalls = 0
  const base = scriptedModel((req, i) => (opts.tools ? TOOL_THEN_TEXT[i % 2]! : { text: `answer ${i}` }))
  const { agent, errors } = makeAgent(null, {
    timers: mt.timers,
    cancelGraceMs: GRACE,
    hooks,
    model: { stream: (req, s) => (modelCalls++, base.stream(req, s)) },
    // the one error this cancel provokes: `where` abandoned (any other fails the test)
    expectErrors: [(e) => e.where === where && TurnlogError.is(e.error, 'ABANDONED')],
    ...opts,
  })
  agent.followup('first')
  await reached
  const callsAtCancel = modelCalls
  agent.cancel({ kind: 'user' })
  let idle = false
  void agent.whenIdle().then(() => (idle = true))
  await settle()
  expect(idle, 'released before the grace period ran out').toBe(false)
  expect(agent.status).toBe('running')
  expect(mt.armed(GRACE)).toBe(1)
  mt.fire(GRACE)
  await agent.whenIdle()
  expect(agent.status).toBe('idle')
  // R5: nothing new started after the cancel
  expect(modelCalls).toBe(callsAtCancel)
  expect(data(agent.events, 'turn/end').map((d) => d.reason)).toEqual([{ kind: 'aborted', cause: { kind: 'user' } }])
  const abandoned = errors.filter((e) => TurnlogError.is(e.error, 'ABANDONED'))
  expect(abandoned.map((e) => e.where)).toContain(where)
  expect(errors.filter((e) => e.where === 'driver')).toEqual([])
  valid(agent.events)
  // R7: the agent goes on
  agent.followup('second')
  await agent.whenIdle()
  expect(endKinds(agent.events)).toEqual(['aborted', 'completed'])
  valid(agent.events)
  return { agent, errors, mt }
}

/** A listener that hangs the first time it is called and resolves `reached`. */
function hangOnce() {
  let hit!: () => void
  const reached = new Promise<void>((r) => (hit = r))
  let first = true
  return {
    reached,
    take(): boolean {
      if (!first) return false
      first = false
      hit()
      return true
    },
  }
}

const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

describe('the cancel grace period (item 2)', () => {
  it('R5/R8: agent/pre-step that never settles is abandoned; the turn ends aborted', async () => {
    const h = hangOnce()
    await hangThenCancel('agent/pre-step', { 'agent/pre-step': (p, next) => (h.take() ? never() : next()) }, h.reached)
  })

  it('R5/R8: llm/stream that never returns a stream is abandoned; the step ends aborted, no model call', async () => {
    const h = hangOnce()
    const { agent } = await hangThenCancel('llm/stream', { 'llm/stream': (p, next) => (h.take() ? never() : next()) }, h.reached)
    expect(data(agent.events, 'step/end')[0]!.outcome).toEqual({ kind: 'aborted' })
  })

  it('R5/R8: system-prompt/assemble and agent/request that never settle are abandoned', async () => {
    const a = hangOnce()
    await hangThenCancel('system-prompt/assemble', { 'system-prompt/assemble': (p, next) => (a.take() ? never() : next()) }, a.reached)
    const r = hangOnce()
    await hangThenCancel('agent/request', { 'agent/request': (p, next) => (r.take() ? never() : next()) }, r.reached)
  })

  it('R5/R8: agent/turn-stopping that never settles is abandoned', async () => {
    const h = hangOnce()
    await hangThenCancel('agent/turn-stopping', { 'agent/turn-stopping': () => (h.take() ? never() : undefined) }, h.reached)
  })

  it('R5/R8: agent/request-error that never settles is abandoned', async () => {
    const h = hangOnce()
    const mt = manualTimers()
    const { agent, errors } = makeAgent([{ error: { code: 'UNKNOWN' } }, { text: 'ok' }], {
      timers: mt.timers, cancelGraceMs: GRACE, hooks: { 'agent/request-error': (p, next) => (h.take() ? never() : next()) },
      expectErrors: [(e) => e.where === 'agent/request-error' && TurnlogError.is(e.error, 'ABANDONED')],
    })
    agent.followup('x')
    await h.reached
    agent.cancel()
    mt.fire(GRACE)
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['aborted'])
    expect(errors.map((e) => e.where)).toContain('agent/request-error')
    valid(agent.events)
  })

  for (const hook of ['tools/pre-execute', 'tools/execute', 'tools/post-execute'] as const) {
    it(`R5/R8/L5: ${hook} that never settles is abandoned; the call gets its result (ABORTED), none runs after the cancel`, async () => {
      const h = hangOnce()
      let bodies = 0
      const listener = ((p: unknown, next: () => Promise<unknown>) => (h.take() ? never() : next())) as HookMap[typeof hook]
      const { agent } = await hangThenCancel(hook, { [hook]: listener }, h.reached, {
        tools: [defineTool({ name: 't', description: 't', parameters: z.object({}), execute: () => (bodies++, 'ran') })],
      })
      const results = data(agent.events, 'tool/result')
      expect(results.length).toBe(data(agent.events, 'tool/call').length)
      const firstTurn = results.filter((r) => r.turn === 1)
      // the first (exclusive) call was abandoned; the second never started
      expect(firstTurn.map((r) => r.error?.code)).toEqual(['ABORTED', 'ABORTED_BEFORE_DISPATCH'])
      // R5: no body ran but the first call's when tools/post-execute hangs (after it ran); the
      // second turn's request answers with text
      expect(bodies).toBe(hook === 'tools/post-execute' ? 1 : 0)
    })
  }

  it('R5/R8: a tool body that ignores its signal is abandoned (ABORTED); its late answer is ignored and reported', async () => {
    const mt = manualTimers()
    let release!: (v: string) => void
    let started!: () => void
    const reached = new Promise<void>((r) => (started = r))
    let first = true
    const tool = slowTool(() => {
      if (!first) return Promise.resolve('quick')
      first = false
      started()
      return new Promise<string>((r) => (release = r)) // never looks at its signal
    })
    const { agent, errors } = makeAgent([{ toolCalls: [{ name: 't', args: {} }] }, { text: 'a' }, { text: 'b' }], {
      timers: mt.timers, cancelGraceMs: GRACE, tools: [tool],
      expectErrors: [(e) => e.where === 'tools/execute' && (TurnlogError.is(e.error, 'ABANDONED') || TurnlogError.is(e.error, 'LATE_SETTLEMENT'))],
    })
    agent.followup('go')
    await reached
    agent.cancel()
    await settle()
    expect(agent.status).toBe('running')
    mt.fire(GRACE)
    await agent.whenIdle()
    expect(data(agent.events, 'tool/result').map((r) => r.error?.code)).toEqual(['ABORTED'])
    expect(data(agent.events, 'tool/result')[0]!.error.message).toMatch(/abandoned/)
    expect(endKinds(agent.events)).toEqual(['aborted'])
    const before = agent.events.length
    release('too late')
    await settle()
    expect(agent.events.length).toBe(before)
    expect(errors.filter((e) => TurnlogError.is(e.error, 'LATE_SETTLEMENT')).map((e) => e.where)).toEqual(['tools/execute'])
    valid(agent.events)
  })

  it('R8: dispose() with a never-settling hook returns after the grace period and releases the store lock', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-grace-'))
    dirs.push(dir)
    const store = jsonlStore(dir)
    const mt = manualTimers()
    const h = hangOnce()
    const { agent } = makeAgent([{ text: 'x' }], {
      timers: mt.timers, cancelGraceMs: GRACE, store, sessionId: 's', hooks: { 'agent/pre-step': () => (h.take(), never()) },
      expectErrors: [(e) => e.where === 'agent/pre-step' && TurnlogError.is(e.error, 'ABANDONED')],
    })
    agent.followup('go')
    await h.reached
    let disposed = false
    const d = agent.dispose().then(() => (disposed = true))
    await settle()
    expect(disposed).toBe(false)
    mt.fire(GRACE)
    await d
    expect(endKinds(agent.events)).toEqual(['aborted'])
    // the lock is released: another writer may open the session
    const w = await store.open('s', 'write')
    expect(w.length).toBe(agent.events.length)
    await w.close()
  })

  it('cancelGraceMs must be a finite number >= 0 (INVALID_OPTION)', () => {
    for (const bad of [-1, Number.NaN, Infinity, '5' as never]) {
      expect(() => makeAgent([], { cancelGraceMs: bad })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', field: 'cancelGraceMs' }))
    }
  })
})
