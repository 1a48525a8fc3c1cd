/**
 * While parked (docs/spec/lifecycle.md §9): the `ask` verdict, expiry from the injectable clock (one timer),
 * steer (supersedes; `onSteer: 'queue'` waits), followup (waits), cancel (decided `by: canceled`,
 * ABORTED_BEFORE_DISPATCH), dispose (the session stays parked). R9: nothing runs while parked.
 */
import { describe, expect, it } from 'vitest'
import { defineTool } from '../../tools/index.js'
import { lifecycleReducer } from '../../reducers/lifecycle.js'
import { replay } from '../../replay/index.js'
import { data, endKinds, makeAgent, valid } from '../agent/contain-helpers.js'
import { trace } from '../agent/helpers.js'
import { countingTool, manualClock, manualTimers, settle } from './helpers.js'
import { z } from 'zod'

const script = () => [
  { toolCalls: [{ name: 'rm', args: { path: 'x' }, id: 'c1' }, { name: 'read', args: { path: 'y' }, id: 'c2' }] },
  { text: 'done' },
  { text: 'second' },
]

describe('while parked (docs/spec/lifecycle.md §9)', () => {
  it('the ask verdict: the request right after its own tool/call, the body waits, no later call starts (L17)', async () => {
    const read = countingTool('read')
    const rm = countingTool('rm')
    const { agent } = makeAgent(script(), {
      tools: [rm.tool, read.tool],
      hooks: { 'tools/pre-execute': (p, next) => (p.call.name === 'rm' ? { kind: 'ask', question: 'delete x?' } : next()) },
    })
    agent.followup('go')
    expect(await agent.whenSettled()).toBe('parked')
    expect(agent.approvals()).toMatchObject([{ callId: 'c1', question: 'delete x?' }])
    expect(read.runs).toEqual([])
    const t = trace(agent.events)
    expect(t.slice(t.indexOf('tool/call c1 rm'))).toEqual(['tool/call c1 rm', 'tool/approval-requested', 'step/parked'])
    valid(agent.events)
    // an ask call's tool/call is logged: its arguments cannot be edited
    await expect(agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve', arguments: { path: 'z' } })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve' })
    await agent.whenIdle()
    expect(rm.runs).toEqual(['x'])
    expect(read.runs).toEqual(['y'])
    valid(agent.events)
  })

  it('expiry: one timer from the agent clock; by expired gives APPROVAL_EXPIRED; a late decision is APPROVAL_DECIDED', async () => {
    const clock = manualClock()
    const timers = manualTimers()
    const rm = countingTool('rm', { needsApproval: true, timeoutMs: 60_000 })
    const read = countingTool('read')
    const { agent } = makeAgent(script(), { tools: [rm.tool, read.tool], clock: clock.now, timers: timers.timers })
    agent.followup('go')
    await agent.whenSettled()
    const [req] = data(agent.events, 'tool/approval-requested')
    expect(req!.expiresAt).toBe(clock.now() + 60_000)
    expect(timers.armed()).toEqual([60_000])
    // a timer that fires early (the clock has not reached the expiry) re-arms, decides nothing
    timers.fire()
    await settle()
    expect(agent.status).toBe('parked')
    expect(timers.armed()).toEqual([60_000])
    clock.advance(60_000)
    timers.fire()
    await agent.whenIdle()
    expect(data(agent.events, 'tool/approval-decided')[0]).toMatchObject({ decision: { kind: 'deny' }, by: { kind: 'expired' } })
    expect(data(agent.events, 'tool/result')[0]!.error.code).toBe('APPROVAL_EXPIRED')
    expect(rm.runs).toEqual([])
    expect(read.runs).toEqual(['y'])
    expect(timers.armed()).toEqual([])
    await expect(agent.decide(req!.approvalId, { kind: 'approve' })).rejects.toMatchObject({ code: 'APPROVAL_DECIDED' })
    valid(agent.events)
  })

  it('steer supersedes: open approvals denied by superseded (never approved), the other calls run, the steer enters the next step', async () => {
    const rm = countingTool('rm', { needsApproval: true })
    const read = countingTool('read')
    const { agent } = makeAgent(script(), { tools: [rm.tool, read.tool] })
    agent.followup('go')
    await agent.whenSettled()
    const n = agent.events.length
    const id = agent.steer('no, do something else')
    await agent.whenIdle()
    expect(rm.runs).toEqual([])
    expect(read.runs).toEqual(['y'])
    const after = trace(agent.events.slice(n))
    expect(after.slice(0, 7)).toEqual([
      `splice next-step 0 -0 +[${id}]`, 'tool/approval-decided', 'tool/call c1 rm', 'tool/result c1 DENIED', 'tool/call c2 read', 'tool/result c2', 'step/end 1.1 tools',
    ])
    expect(data(agent.events, 'tool/approval-decided')[0]).toMatchObject({ by: { kind: 'superseded' }, decision: { kind: 'deny' } })
    expect(data(agent.events, 'user/message').map((d) => d.message.id)).toContain(id)
    expect(endKinds(agent.events)).toEqual(['completed'])
    valid(agent.events)
  })

  it("onSteer: 'queue' keeps the approvals open; the steer waits for the next step; a followup waits for the next turn", async () => {
    const rm = countingTool('rm', { needsApproval: true })
    const read = countingTool('read')
    const { agent } = makeAgent(script(), { tools: [rm.tool, read.tool], approvals: { onSteer: 'queue' } })
    agent.followup('go')
    await agent.whenSettled()
    const n = agent.events.length
    agent.steer('also this')
    agent.followup('next turn please')
    await settle()
    expect(agent.status).toBe('parked')
    expect(trace(agent.events.slice(n)).every((l) => l.startsWith('splice'))).toBe(true)
    valid(agent.events)
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve' })
    await agent.whenIdle()
    expect(rm.runs).toEqual(['x'])
    expect(endKinds(agent.events)).toEqual(['completed', 'completed'])
    valid(agent.events)
  })

  it('cancel while parked: decided by canceled, ABORTED_BEFORE_DISPATCH for every unstarted call, the turn ends aborted (R9: no body ran)', async () => {
    const rm = countingTool('rm', { needsApproval: true })
    const read = countingTool('read')
    const { agent } = makeAgent(script(), { tools: [rm.tool, read.tool] })
    agent.followup('go')
    await agent.whenSettled()
    agent.cancel()
    await agent.whenIdle()
    expect(rm.runs).toEqual([])
    expect(read.runs).toEqual([])
    expect(data(agent.events, 'tool/approval-decided')[0]!.by).toEqual({ kind: 'canceled' })
    expect(data(agent.events, 'tool/result').map((r) => r.error?.code)).toEqual(['ABORTED_BEFORE_DISPATCH', 'ABORTED_BEFORE_DISPATCH'])
    expect(endKinds(agent.events)).toEqual(['aborted'])
    valid(agent.events)
  })

  it('cancel while an ask call waits: its request is decided by canceled, its result ABORTED_BEFORE_DISPATCH', async () => {
    const rm = countingTool('rm')
    const read = countingTool('read')
    const { agent } = makeAgent(script(), {
      tools: [rm.tool, read.tool],
      hooks: { 'tools/pre-execute': (p, next) => (p.call.name === 'rm' ? { kind: 'ask' } : next()) },
    })
    agent.followup('go')
    await agent.whenSettled()
    agent.cancel()
    await agent.whenIdle()
    expect(rm.runs).toEqual([])
    expect(data(agent.events, 'tool/result').map((r) => r.error?.code)).toEqual(['ABORTED_BEFORE_DISPATCH', 'ABORTED_BEFORE_DISPATCH'])
    valid(agent.events)
  })

  it('dispose of a parked agent leaves the session parked: no closers, the log ends at step/parked', async () => {
    const timers = manualTimers()
    const rm = countingTool('rm', { needsApproval: true, timeoutMs: 1000 })
    const { agent } = makeAgent(script(), { tools: [rm.tool], timers: timers.timers })
    agent.followup('go')
    await agent.whenSettled()
    await agent.dispose()
    expect(agent.events.at(-1)!.type).toBe('step/parked')
    expect(timers.armed()).toEqual([]) // no timer left behind
    const l = replay(agent.events).lifecycle
    expect(l.parkedSeq).toBe(agent.events.at(-1)!.seq)
    expect(l.openStep).toBe(1)
    await expect(agent.decide('x', { kind: 'approve' })).rejects.toMatchObject({ code: 'AGENT_DISPOSED' })
    expect(lifecycleReducer.name).toBe('lifecycle')
  })

  it('defineTool refuses a bad needsApproval or approval.timeoutMs (INVALID_ARGUMENT)', () => {
    const base = { name: 't', description: 'd', parameters: z.object({}), execute: () => 'x' }
    expect(() => defineTool({ ...base, needsApproval: 'yes' as never })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', field: 'needsApproval' }))
    expect(() => defineTool({ ...base, approval: { timeoutMs: -1 } })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    expect(() => defineTool({ ...base, approval: null as never })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
  })
})
