/**
 * Resume of a parked log (docs/spec/lifecycle.md §9): the parked step is restored as it is — no repair closers,
 * no re-run, the approved-but-unstarted calls start — and R10: each body runs at most once. Repair
 * of an interrupted (not parked) step decides its open requests `by: canceled` (L17).
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { repairEvents, resumeAgent } from '../../replay/index.js'
import { data, makeAgent, valid } from '../agent/contain-helpers.js'
import { counterIds, fakeClock, instantTimers, trace } from '../agent/helpers.js'
import { countingTool } from './helpers.js'

const calls = [
  { toolCalls: [{ name: 'read', args: { path: 'a' }, id: 'c1' }, { name: 'rm', args: { path: 'b' }, id: 'c2' }, { name: 'read', args: { path: 'c' }, id: 'c3' }] },
]

async function parkedLog(opts: { ask?: boolean } = {}) {
  const read = countingTool('read')
  const rm = countingTool('rm', opts.ask ? {} : { needsApproval: true })
  const { agent } = makeAgent([...calls], {
    tools: [read.tool, rm.tool],
    ...(opts.ask ? { hooks: { 'tools/pre-execute': (p, next) => (p.call.name === 'rm' ? { kind: 'ask' as const } : next()) } } : {}),
  })
  agent.followup('go')
  expect(await agent.whenSettled()).toBe('parked')
  await agent.dispose()
  return { events: agent.events.slice() as LogEvent[], read, rm }
}

function resumeOn(events: readonly LogEvent[], ask = false) {
  const read = countingTool('read')
  const rm = countingTool('rm', ask ? {} : { needsApproval: true })
  const p = resumeAgent({
    log: events, model: scriptedModel([{ text: 'done' }]), tools: [read.tool, rm.tool],
    clock: fakeClock(1_764_460_000_000), ids: counterIds('r'), timers: instantTimers(),
  })
  return { p, read, rm }
}

describe('resume of a parked log (docs/spec/lifecycle.md §9)', () => {
  it('repair leaves a parked log alone (no closers); resume restores the step parked; approve runs the body once (R10)', async () => {
    const { events, read } = await parkedLog()
    expect(read.runs).toEqual(['a'])
    expect(repairEvents({ header: { type: 'session', format: 1, id: 's', createdAt: 0 }, events }).closers).toEqual([])
    const r = resumeOn(events)
    const agent = await r.p
    expect(agent.status).toBe('parked')
    expect(agent.events.length).toBe(events.length) // nothing appended: it stands parked already
    const [open] = agent.approvals()
    expect(open).toMatchObject({ callId: 'c2', name: 'rm' })
    await agent.decide(open!.approvalId, { kind: 'approve' })
    await agent.whenIdle()
    expect(r.rm.runs).toEqual(['b'])
    expect(r.read.runs).toEqual(['c']) // 'a' was not run again
    const t = trace(agent.events.slice(events.length))
    expect(t.slice(0, 6)).toEqual(['tool/approval-decided', 'tool/call c2 rm', 'tool/result c2', 'tool/call c3 read', 'tool/result c3', 'step/end 1.1 tools'])
    expect(data(agent.events, 'turn/start')).toHaveLength(1) // the same turn goes on
    valid(agent.events)
  })

  it('a decision logged while no agent ran: resume starts the approved call at once with the edited arguments', async () => {
    const { events } = await parkedLog()
    const req = data(events, 'tool/approval-requested')[0]!
    const last = events.at(-1)!
    const decided = {
      seq: events.length, time: last.time + 1, type: 'tool/approval-decided',
      data: { turn: 1, step: 1, callId: req.callId, approvalId: req.approvalId, decision: { kind: 'approve', arguments: '{"path":"b2"}' }, by: { kind: 'user', id: 'ops' } },
    } as LogEvent
    const r = resumeOn([...events, decided])
    const agent = await r.p
    await agent.whenIdle()
    expect(r.rm.runs).toEqual(['b2'])
    expect(data(agent.events, 'tool/call').find((c) => c.callId === 'c2')!.arguments).toBe('{"path":"b2"}')
    valid(agent.events)
  })

  it('an ask call restored: it waits again; deny gives its DENIED result, the body never runs', async () => {
    const { events, rm } = await parkedLog({ ask: true })
    expect(rm.runs).toEqual([])
    const r = resumeOn(events, true)
    const agent = await r.p
    expect(agent.status).toBe('parked')
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'deny', reason: 'no' })
    await agent.whenIdle()
    expect(r.rm.runs).toEqual([])
    expect(data(agent.events, 'tool/result').find((x) => x.callId === 'c2')!.error.code).toBe('DENIED')
    valid(agent.events)
  })

  it('L17: repair of an interrupted step (not parked) decides its open requests by canceled', async () => {
    const { events } = await parkedLog()
    // cut the log before its step/parked: the body of c1 was still running when the process died
    const cut = events.slice(0, events.findIndex((e) => e.type === 'tool/result'))
    const rep = repairEvents({ header: { type: 'session', format: 1, id: 's', createdAt: 0 }, events: cut })
    expect(trace(rep.closers)).toEqual([
      'tool/approval-decided', 'tool/result c1 TOOL_OUTCOME_UNKNOWN', 'tool/call c2 rm', 'tool/result c2 ABORTED_BEFORE_DISPATCH',
      'tool/call c3 read', 'tool/result c3 TOOL_NOT_STARTED', 'step/end 1.1 tools', 'turn/end 1 interrupted',
    ])
    expect(data(rep.closers, 'tool/approval-decided')[0]!.by).toEqual({ kind: 'canceled' })
    valid(rep.log.events)
  })
})

describe('a restored ask call stays a barrier (docs/spec/lifecycle.md §9 "Order")', () => {
  it('L17: after a resume, a later parallel-safe call starts only once the asked call is decided and committed', async () => {
    const read = countingTool('read')
    const hooks = { 'tools/pre-execute': (p: { call: { name: string } }, next: () => unknown) => (p.call.name === 'rm' ? { kind: 'ask' as const } : next()) }
    const tools = () => {
      const rm = countingTool('rm')
      const r = countingTool('read')
      return { rm, r, list: [{ ...rm.tool, isConcurrencySafe: () => true }, { ...r.tool, isConcurrencySafe: () => true }] }
    }
    const first = tools()
    const { agent } = makeAgent([{ toolCalls: [{ name: 'rm', args: { path: 'b' }, id: 'c1' }, { name: 'read', args: { path: 'c' }, id: 'c2' }] }], {
      tools: first.list as never, hooks: hooks as never,
    })
    agent.followup('go')
    expect(await agent.whenSettled()).toBe('parked')
    await agent.dispose()
    expect(read.runs).toEqual([])
    const second = tools()
    const resumed = await resumeAgent({
      log: agent.events.slice() as LogEvent[], model: scriptedModel([{ text: 'done' }]), tools: second.list as never, hooks: hooks as never,
      clock: fakeClock(1_764_460_000_000), ids: counterIds('r'), timers: instantTimers(),
    })
    const errors: unknown[] = []
    resumed.on('agent/error', ({ error }) => errors.push(error))
    expect(resumed.status).toBe('parked')
    await resumed.decide(resumed.approvals()[0]!.approvalId, { kind: 'deny', reason: 'no' })
    await resumed.whenIdle()
    expect(errors).toEqual([])
    const t = trace(resumed.events.slice(agent.events.length))
    expect(t.slice(0, 4)).toEqual(['tool/approval-decided', 'tool/result c1 DENIED', 'tool/call c2 read', 'tool/result c2'])
    expect(second.r.runs).toEqual(['c'])
    expect(second.rm.runs).toEqual([])
    valid(resumed.events)
  })
})
