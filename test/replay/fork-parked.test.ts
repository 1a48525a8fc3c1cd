/**
 * A fork at a parked seq (docs/spec/lifecycle.md "Deliberate choices" 5, invariant L2): the fork
 * keeps the parked step with its open approvals, and its `session/end-seed` stands inside that
 * parked turn. `fork`, `verify`, `replay` and resume agree on it: the fork verifies, replays
 * parked, and a resumed fork decides differently from the parent and finishes the same turn.
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { fork, replay, resumeAgent, verify } from '../../replay/index.js'
import { data, makeAgent, valid } from '../agent/contain-helpers.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { countingTool } from '../approvals/helpers.js'

async function parkedLog() {
  const rm = countingTool('rm', { needsApproval: true })
  const { agent } = makeAgent([{ toolCalls: [{ name: 'rm', args: { path: 'b' }, id: 'c1' }] }], { tools: [rm.tool] })
  agent.followup('go')
  expect(await agent.whenSettled()).toBe('parked')
  await agent.dispose()
  return agent.events.slice() as LogEvent[]
}

describe('fork at a parked seq (L2, lifecycle "Deliberate choices" 5)', () => {
  it('L2: a fork at a parked seq keeps the parked step, its session/end-seed inside the turn; verify, replay and resume agree', async () => {
    const events = await parkedLog()
    expect(events.at(-1)!.type).toBe('step/parked')
    const seq = events.length - 1
    const f = fork({ header: { type: 'session', format: 1, id: 'p', createdAt: 0 }, events }, seq, { sessionId: 'f', createdAt: 1 })
    // no closers: the parked step stays open, only the seed marker follows
    expect(f.closers.map((e) => e.type)).toEqual(['session/end-seed'])
    expect(verify(f.events)).toEqual({ ok: true, violations: [] })
    const r = replay(f.events)
    expect(r.lifecycle.openTurn).toBe(1)
    expect(r.approvals.open.map((id) => r.approvals.byId[id]!.callId)).toEqual(['c1'])
    expect(r.approvals.waiting).toMatchObject({ turn: 1, step: 1 })

    // resume of the fork: parked, the approval open; a person decides differently than in the parent
    const rm = countingTool('rm', { needsApproval: true })
    const agent = await resumeAgent({
      log: f.events, model: scriptedModel([{ text: 'kept b' }]), tools: [rm.tool],
      clock: fakeClock(1_764_460_000_000), ids: counterIds('r'), timers: instantTimers(),
    })
    expect(agent.status).toBe('parked')
    const [open] = agent.approvals()
    expect(open).toMatchObject({ callId: 'c1', name: 'rm' })
    await agent.decide(open!.approvalId, { kind: 'deny', reason: 'keep it' })
    await agent.whenIdle()
    expect(rm.runs).toEqual([])
    expect(data(agent.events, 'turn/start')).toHaveLength(1) // the parked turn goes on
    expect(data(agent.events, 'turn/end').map((d) => d.reason.kind)).toEqual(['completed'])
    valid(agent.events)
    await agent.dispose()
  })
})
