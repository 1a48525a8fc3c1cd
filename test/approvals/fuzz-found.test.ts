/**
 * Defects the re-weighted lifecycle fuzzer found (docs/decisions/fuzzer.md), each as the exact event sequence of its shrunk scenario:
 * an asked call denied by a cancel keeps `ABORTED_BEFORE_DISPATCH` when `tools/post-execute`
 * runs out of the grace period (L17); an `ask` verdict that arrives after the cancel is decided
 * `by: canceled` and its call gets its result (L5, L17: no call left without one, the turn ends);
 * the fuzzer's R9 oracle tells a run that parks many times (seed 1623662664: 100 parks, each one
 * decided and left) from an agent that stays parked after a decision.
 */
import type fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { LogEvent } from '../../events/index.js'
import { settleParked } from '../../testing/fuzz/approvals.js'
import { FuzzViolation } from '../../testing/fuzz/failure.js'
import type { Run } from '../../testing/fuzz/run.js'
import { defineTool } from '../../tools/index.js'
import { data, endKinds, makeAgent, valid } from '../agent/contain-helpers.js'
import { trace } from '../agent/helpers.js'
import { countingTool, manualTimers, settle } from './helpers.js'

const never = <T>(): Promise<T> => new Promise<T>(() => {})

/** A parallel-safe `rm` (the fuzzer's `fuzz_approval {n: 9}`: asked, and parallel-safe). */
function parallelRm() {
  const runs: string[] = []
  const tool = defineTool({
    name: 'rm', description: 'rm a file', parameters: z.object({ path: z.string() }),
    isConcurrencySafe: () => true,
    execute: ({ path }) => {
      runs.push(path)
      return `rm ${path}`
    },
  })
  return { tool, runs }
}

/** A parallel-safe tool whose body ignores its signal and settles only when the test says (the fuzzer's `late` plan). */
function lateTool() {
  let release!: () => void
  const released = new Promise<void>((r) => (release = r))
  const starts: string[] = []
  const tool = defineTool({
    name: 'slow', description: 'slow read', parameters: z.object({ path: z.string() }),
    isConcurrencySafe: () => true,
    execute: async ({ path }) => {
      starts.push(path)
      await released
      return `slow ${path}`
    },
  })
  return { tool, starts, release }
}

describe('approval defects found by the lifecycle fuzzer (round 14)', () => {
  it('L17: an asked call denied by a cancel ends ABORTED_BEFORE_DISPATCH even when tools/post-execute is abandoned in the grace period', async () => {
    // shrunk: [fuzz_parallel {n:1} (late body), fuzz_approval {n:9} (asked)], then a cancel
    const timers = manualTimers()
    const slow = lateTool()
    const rm = parallelRm()
    const { agent } = makeAgent(
      [{ toolCalls: [{ name: 'slow', args: { path: 'a' }, id: 'c1' }, { name: 'rm', args: { path: 'x' }, id: 'c2' }] }, { text: 'done' }],
      {
        tools: [slow.tool, rm.tool], timers: timers.timers, cancelGraceMs: 100,
        hooks: {
          'tools/pre-execute': (p, next) => (p.call.name === 'rm' ? { kind: 'ask' } : next()),
          // an auditing post-execute hook that never answers (abandoned once the grace period ends)
          'tools/post-execute': () => never(),
        },
        expectErrors: ['ABANDONED', 'LATE_SETTLEMENT'],
      },
    )
    agent.followup('go')
    await settle()
    // c1's body runs, c2 asked right after its tool/call (not parked: c1 is in flight)
    expect(agent.approvals()).toMatchObject([{ callId: 'c2' }])
    expect(agent.status).toBe('running')
    agent.cancel()
    await settle()
    timers.fire() // the grace period runs out: c1's body and every post-execute are abandoned
    await agent.whenIdle()
    slow.release()
    await settle()
    expect(rm.runs).toEqual([])
    expect(data(agent.events, 'tool/approval-decided').map((d) => d.by)).toEqual([{ kind: 'canceled' }])
    const results = data(agent.events, 'tool/result').map((r) => `${r.callId} ${r.error?.code ?? 'ok'}`)
    expect(results).toEqual(['c1 ABORTED', 'c2 ABORTED_BEFORE_DISPATCH'])
    expect(endKinds(agent.events)).toEqual(['aborted'])
    valid(agent.events)
  })

  it('L17: a tools/post-execute block cannot turn a denied asked call into BLOCKED (its result is the decision\'s)', async () => {
    const rm = countingTool('rm')
    const { agent } = makeAgent([{ toolCalls: [{ name: 'rm', args: { path: 'x' }, id: 'c1' }] }, { text: 'done' }], {
      tools: [rm.tool],
      hooks: {
        'tools/pre-execute': (p, next) => (p.call.name === 'rm' ? { kind: 'ask' } : next()),
        'tools/post-execute': () => ({ kind: 'block', feedback: 'redacted' }),
      },
    })
    agent.followup('go')
    expect(await agent.whenSettled()).toBe('parked')
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'deny', reason: 'no' })
    await agent.whenIdle()
    expect(rm.runs).toEqual([])
    expect(data(agent.events, 'tool/result').map((r) => r.error?.code)).toEqual(['DENIED'])
    expect(endKinds(agent.events)).toEqual(['completed'])
    valid(agent.events)
  })

  it('L5, L17 (fuzzer STUCK): an ask verdict that arrives after the cancel is decided by canceled and its call gets its result; the turn ends', async () => {
    // shrunk: the fuzzer's pre-execute answered `ask` for fuzz_approval {n:3} after the cancel's
    // inbox clear; the request was logged and decided `by: canceled` at once, then nothing woke
    // the call waiting for its decision ("tool calls without a result: 'fuzz_approval' call_2")
    const rm = countingTool('rm')
    let answer!: () => void
    const asked = new Promise<void>((r) => (answer = r))
    const { agent } = makeAgent([{ toolCalls: [{ name: 'rm', args: { path: 'x' }, id: 'c1' }] }, { text: 'done' }], {
      tools: [rm.tool],
      hooks: { 'tools/pre-execute': async (p, next) => (p.call.name === 'rm' ? (await asked, { kind: 'ask' as const }) : next()) },
    })
    agent.followup('go')
    await settle()
    expect(trace(agent.events).at(-1)).toBe('tool/call c1 rm')
    agent.cancel()
    answer() // the hook answers within the grace period, after the cancel
    await settle()
    expect(agent.status).toBe('idle')
    const t = trace(agent.events)
    expect(t.slice(t.indexOf('tool/call c1 rm'))).toEqual([
      'tool/call c1 rm', 'tool/approval-requested', 'tool/approval-decided', 'tool/result c1 ABORTED_BEFORE_DISPATCH', 'step/end 1.1 aborted', 'turn/end 1 aborted user',
    ])
    expect(rm.runs).toEqual([])
    valid(agent.events)
  })

  it('R9 (fuzzer oracle, seed 1623662664): a run that parks 101 times, each park decided and left, is not "stayed parked"', async () => {
    // seed 1623662664: six followups, each a chain of retry turns whose steps park: 100 parks in one
    // run, every one decided and left, and the oracle's bound of 100 parks called it R9
    const parks = 101
    const rm = countingTool('rm', { needsApproval: true })
    const script = Array.from({ length: parks }, (_, i) => [{ toolCalls: [{ name: 'rm', args: { path: `p${i}` }, id: `c${i}` }] }, { text: `done ${i}` }]).flat()
    const { agent } = makeAgent(script, { tools: [rm.tool], checkRequests: 'log' })
    for (let i = 0; i < parks; i++) agent.followup(`go ${i}`)
    const run = { agent, accepted: [], canceller: 'hook', advanceClock: () => {} } as unknown as Run
    await settleParked(run, { waitFor: <T>(p: Promise<T>) => p } as unknown as fc.Scheduler)
    expect(agent.status).toBe('idle')
    expect(rm.runs).toHaveLength(parks)
    expect(agent.events.filter((e) => e.type === 'step/parked')).toHaveLength(parks)
    valid(agent.events)
  })

  it('R9 (fuzzer oracle): an agent still parked at the same step/parked after a decision fails R9 at once', async () => {
    const parked = { seq: 0, time: 0, type: 'step/parked', data: { turn: 1, step: 1, approvals: ['a1'] } } as unknown as LogEvent
    let decisions = 0
    const agent = {
      status: 'parked', events: [parked],
      whenSettled: async () => 'parked' as const,
      approvals: () => [{ approvalId: 'a1', callId: 'c1', name: 'rm', turn: 1, step: 1 }],
      decide: async () => {
        decisions++
      },
      on: () => () => {},
    }
    const run = { agent, accepted: [], canceller: 'hook', advanceClock: () => {} } as unknown as Run
    const err = await settleParked(run, { waitFor: <T>(p: Promise<T>) => p } as unknown as fc.Scheduler).then(() => null, (e: unknown) => e)
    expect(err).toBeInstanceOf(FuzzViolation)
    expect((err as FuzzViolation).invariant).toBe('R9')
    expect((err as FuzzViolation).detail).toMatch(/stayed parked/)
    expect(decisions).toBe(1)
  })
})
