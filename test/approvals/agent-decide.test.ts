/**
 * The live agent waits for a person (docs/spec/lifecycle.md §9): needsApproval requests before any tool/call,
 * the barrier order, `step/parked` and status `parked`, `agent.decide` (approve, edited arguments,
 * deny), the coded refusals that log nothing, and R10 (the body runs once, after approve).
 */
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/index.js'
import { data, makeAgent, valid } from '../agent/contain-helpers.js'
import { trace } from '../agent/helpers.js'
import { countingTool, settle } from './helpers.js'

function twoCalls() {
  return [
    { toolCalls: [{ name: 'read', args: { path: 'a' }, id: 'c1' }, { name: 'rm', args: { path: 'b' }, id: 'c2' }, { name: 'read', args: { path: 'c' }, id: 'c3' }] },
    { text: 'done' },
  ]
}

describe('agent.decide (docs/spec/lifecycle.md §9)', () => {
  it('L17/L18: requests before any tool/call, calls before the waiting one commit, parked, approve runs the body once (R10)', async () => {
    const read = countingTool('read')
    const rm = countingTool('rm', { needsApproval: true })
    const { agent } = makeAgent(twoCalls(), { tools: [read.tool, rm.tool] })
    const statuses: string[] = []
    agent.on('agent/status', ({ status }) => statuses.push(status))
    const asked: string[] = []
    agent.on('agent/approval', ({ approval }) => asked.push(approval.callId))
    agent.followup('clean up')
    expect(await agent.whenSettled()).toBe('parked')
    expect(agent.status).toBe('parked')
    expect(asked).toEqual(['c2'])
    expect(rm.runs).toEqual([])
    expect(read.runs).toEqual(['a'])
    const open = agent.approvals()
    expect(open).toMatchObject([{ callId: 'c2', name: 'rm', arguments: '{"path":"b"}', turn: 1, step: 1 }])
    expect(agent.snapshot().turn.state).toEqual({ running: 'parked' })
    expect(agent.snapshot().step?.state).toBe('parked')
    valid(agent.events)
    await agent.decide(open[0]!.approvalId, { kind: 'approve' })
    await agent.whenIdle()
    expect(rm.runs).toEqual(['b'])
    expect(read.runs).toEqual(['a', 'c'])
    expect(statuses).toEqual(['running', 'parked', 'running', 'idle'])
    const t = trace(agent.events)
    const i = t.indexOf('assistant/message tool-calls')
    expect(t.slice(i, i + 11)).toEqual([
      'assistant/message tool-calls',
      'tool/approval-requested',
      'tool/call c1 read',
      'tool/result c1',
      'step/parked',
      'tool/approval-decided',
      'tool/call c2 rm',
      'tool/result c2',
      'tool/call c3 read',
      'tool/result c3',
      'step/end 1.1 tools',
    ])
    expect(data(agent.events, 'tool/approval-decided')[0]).toMatchObject({ callId: 'c2', decision: { kind: 'approve' }, by: { kind: 'user' } })
    valid(agent.events)
  })

  it('L17: a deny gives the call its tool/call + DENIED pair with the reason; edited arguments are what the tool/call carries', async () => {
    const rm = countingTool('rm', { needsApproval: true })
    const { agent } = makeAgent([
      { toolCalls: [{ name: 'rm', args: { path: 'x' }, id: 'c1' }, { name: 'rm', args: { path: 'y' }, id: 'c2' }] },
      { text: 'done' },
    ], { tools: [rm.tool] })
    agent.followup('go')
    await agent.whenSettled()
    const [a, b] = agent.approvals()
    // a person answers in any order
    await agent.decide(b!.approvalId, { kind: 'approve', arguments: { path: 'y2' } }, { by: { kind: 'user', id: 'ann' } })
    expect(agent.status).toBe('parked')
    await agent.decide(a!.approvalId, { kind: 'deny', reason: 'not that one' })
    await agent.whenIdle()
    expect(rm.runs).toEqual(['y2'])
    const calls = data(agent.events, 'tool/call')
    expect(calls.map((c) => c.arguments)).toEqual(['{"path":"x"}', '{"path":"y2"}'])
    const results = data(agent.events, 'tool/result')
    expect(results[0]!.error).toEqual({ code: 'DENIED', message: "Tool 'rm' was denied: not that one" })
    expect(results[1]!.error).toBeUndefined()
    expect(data(agent.events, 'tool/approval-decided')[0]!.by).toEqual({ kind: 'user', id: 'ann' })
    // parked again after the first decision left the step waiting (L18: the last step/parked lists what is open)
    expect(data(agent.events, 'step/parked').map((d) => d.approvals)).toEqual([[a!.approvalId, b!.approvalId], [a!.approvalId]])
    valid(agent.events)
  })

  it('refusals log nothing: UNKNOWN_APPROVAL, APPROVAL_DECIDED, INVALID_ARGS, INVALID_ARGUMENT', async () => {
    const rm = countingTool('rm', { needsApproval: true })
    const { agent } = makeAgent([{ toolCalls: [{ name: 'rm', args: { path: 'x' }, id: 'c1' }] }, { text: 'done' }], { tools: [rm.tool] })
    agent.followup('go')
    await agent.whenSettled()
    const id = agent.approvals()[0]!.approvalId
    const before = agent.events.length
    const code = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (TurnlogError.is(e) ? e.code : String(e)))
    expect(await code(agent.decide('nope', { kind: 'approve' }))).toBe('UNKNOWN_APPROVAL')
    expect(await code(agent.decide(id, { kind: 'approve', arguments: { path: 3 } }))).toBe('INVALID_ARGS')
    expect(await code(agent.decide(id, { kind: 'maybe' } as never))).toBe('INVALID_ARGUMENT')
    expect(await code(agent.decide(id, { kind: 'approve' }, { by: { kind: 'expired' } } as never))).toBe('INVALID_ARGUMENT')
    expect(agent.events.length).toBe(before)
    expect(agent.status).toBe('parked')
    await agent.decide(id, { kind: 'deny' })
    expect(await code(agent.decide(id, { kind: 'approve' }))).toBe('APPROVAL_DECIDED')
    await agent.whenIdle()
    expect(rm.runs).toEqual([])
    valid(agent.events)
  })

  it('a needsApproval policy over the arguments asks only for some calls; one that throws is that call\'s HOOK_ERROR', async () => {
    const rm = countingTool('rm', { needsApproval: (a) => !a.path.startsWith('drafts/') })
    const bad = countingTool('bad', { needsApproval: () => { throw new Error('policy broke') } })
    const { agent } = makeAgent([
      { toolCalls: [{ name: 'rm', args: { path: 'drafts/x' }, id: 'c1' }, { name: 'bad', args: { path: 'q' }, id: 'c2' }, { name: 'rm', args: { path: 'etc' }, id: 'c3' }] },
      { text: 'done' },
    ], { tools: [rm.tool, bad.tool], expectErrors: ['needsApproval'] })
    agent.followup('go')
    await agent.whenSettled()
    expect(agent.approvals().map((a) => a.callId)).toEqual(['c3'])
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve' })
    await agent.whenIdle()
    expect(rm.runs).toEqual(['drafts/x', 'etc'])
    expect(bad.runs).toEqual([])
    expect(data(agent.events, 'tool/result').map((r) => r.error?.code ?? 'ok')).toEqual(['ok', 'HOOK_ERROR', 'ok'])
    valid(agent.events)
    await settle()
  })
})
