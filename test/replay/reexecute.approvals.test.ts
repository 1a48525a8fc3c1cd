/**
 * P4 with approvals (docs/spec/lifecycle.md §9 "Re-execution and fuzzing"): decisions are recorded input.
 * `reexecute` re-issues each recorded `tool/approval-decided` at its position: a person's through
 * the agent, an expiry by firing the expiry timer (the clock is the recorded one), a supersede
 * and a cancel by re-issuing the recorded steer / cancel; a parked session that exited and was
 * resumed is re-executed as two processes.
 */
import { describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import type { AgentOptions } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { reexecute } from '../../replay/reexecute.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import type { AnyTool } from '../../tools/types.js'
import { trace } from '../agent/helpers.js'
import { countingTool, manualTimers, settle } from '../approvals/helpers.js'
import { HEADER } from './replay-helpers.js'

const THREE: ScriptedEntry[] = [
  { toolCalls: [{ name: 'read', args: { path: 'a' }, id: 'c1' }, { name: 'rm', args: { path: 'b' }, id: 'c2' }, { name: 'rm', args: { path: 'c' }, id: 'c3' }] },
  { text: 'done' },
  { text: 'again' },
]

function tools(timeoutMs?: number): AnyTool[] {
  return [countingTool('read').tool, countingTool('rm', { needsApproval: true, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }).tool] as AnyTool[]
}

function recorder(script: ScriptedEntry[], opts: Partial<AgentOptions> = {}) {
  let n = 0
  let t = 1_764_450_000_000
  const mt = manualTimers()
  const agent = createAgent({
    tools: tools(), system: 'sys', model: scriptedModel(script, { info: { name: 'scripted' } }),
    clock: () => (t += 3), ids: () => `m${++n}`, timers: mt.timers, ...opts,
  })
  return { agent, mt, advance: (ms: number) => (t += ms) }
}

async function p4(events: readonly LogEvent[], opts: Partial<AgentOptions> & { tools: AnyTool[] }) {
  expect(verify(events).violations).toEqual([])
  const r = await reexecute(events, { system: 'sys', stallMs: 500, ...opts } as never)
  if (!r.ok) throw new Error(r.divergence.diff)
  expect(r).toEqual({ ok: true, eventCount: events.length })
}

describe('reexecute re-issues recorded decisions (P4, docs/spec/lifecycle.md §9)', () => {
  it('P4: decisions by a person (approve with edited arguments, deny with a reason, by a named person) re-execute to the same log', async () => {
    const { agent } = recorder(THREE)
    agent.followup('clean up')
    expect(await agent.whenSettled()).toBe('parked')
    const [b, c] = agent.approvals()
    await agent.decide(c!.approvalId, { kind: 'deny', reason: 'keep c' }, { by: { kind: 'user', id: 'ann' } })
    expect(agent.status).toBe('parked')
    await agent.decide(b!.approvalId, { kind: 'approve', arguments: { path: 'b2' } })
    await agent.whenIdle()
    const t = trace(agent.events)
    const i = t.indexOf('assistant/message tool-calls')
    expect(t.slice(i, i + 13)).toEqual([
      'assistant/message tool-calls', 'tool/approval-requested', 'tool/approval-requested',
      'tool/call c1 read', 'tool/result c1', 'step/parked',
      'tool/approval-decided', 'step/parked', 'tool/approval-decided',
      'tool/call c2 rm', 'tool/result c2', 'tool/call c3 rm', 'tool/result c3 DENIED',
    ])
    await p4(agent.events, { tools: tools() })
  })

  it('P4: a changed decision is a divergence at the decision\'s consequence, not at the decision', async () => {
    const { agent } = recorder(THREE)
    agent.followup('clean up')
    await agent.whenSettled()
    for (const a of agent.approvals()) await agent.decide(a.approvalId, { kind: 'approve' })
    await agent.whenIdle()
    // today's tool no longer needs approval: the recorded request is not made again
    const r = await reexecute(agent.events, { system: 'sys', stallMs: 300, tools: [countingTool('read').tool, countingTool('rm').tool] as AnyTool[] })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.divergence.expected?.type).toBe('tool/approval-requested')
    expect(r.divergence.actual?.type).toBe('tool/call')
  })

  it('P4: an expiry is re-issued by the expiry timer on the recorded clock (APPROVAL_EXPIRED); time included', async () => {
    const { agent, mt, advance } = recorder(THREE, { tools: tools(60_000) })
    agent.followup('clean up')
    expect(await agent.whenSettled()).toBe('parked')
    expect(mt.armed()).toHaveLength(1)
    advance(60_000)
    mt.fire()
    await agent.whenIdle()
    const decided = agent.events.filter((e) => e.type === 'tool/approval-decided').map((e) => (e.data as { by: { kind: string } }).by.kind)
    expect(decided).toEqual(['expired', 'expired'])
    const codes = agent.events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { error?: { code: string } }).error?.code)
    expect(codes).toEqual([undefined, 'APPROVAL_EXPIRED', 'APPROVAL_EXPIRED'])
    await p4(agent.events, { tools: tools(60_000) })
  })

  it('P4: a steer while parked supersedes (re-issued as the recorded steer); the steer enters the next step', async () => {
    const { agent } = recorder(THREE)
    agent.followup('clean up')
    await agent.whenSettled()
    agent.steer('stop, do not delete')
    await agent.whenIdle()
    const by = agent.events.filter((e) => e.type === 'tool/approval-decided').map((e) => (e.data as { by: { kind: string } }).by.kind)
    expect(by).toEqual(['superseded', 'superseded'])
    await p4(agent.events, { tools: tools() })
  })

  it('P4: a cancel while parked decides by canceled (re-issued as the recorded cancel); a followup then runs', async () => {
    const { agent } = recorder(THREE)
    agent.followup('clean up')
    await agent.whenSettled()
    agent.cancel()
    await agent.whenIdle()
    agent.followup('next')
    await agent.whenIdle()
    const t = trace(agent.events)
    expect(t.filter((x) => x.startsWith('turn/end'))).toEqual(['turn/end 1 aborted user', 'turn/end 2 completed'])
    await p4(agent.events, { tools: tools() })
  })

  it('P4: an ask verdict of tools/pre-execute, then a decision, re-executes with the same hook', async () => {
    const hooks = { 'tools/pre-execute': (p: { call: { name: string } }, next: () => unknown) => (p.call.name === 'write' ? { kind: 'ask' as const, question: 'write?' } : next()) }
    const ts = () => [countingTool('read').tool, countingTool('write').tool] as AnyTool[]
    const { agent } = recorder([
      { toolCalls: [{ name: 'read', args: { path: 'a' }, id: 'c1' }, { name: 'write', args: { path: 'b' }, id: 'c2' }, { name: 'read', args: { path: 'c' }, id: 'c3' }] },
      { text: 'done' },
    ], { tools: ts(), hooks: hooks as never })
    agent.followup('go')
    expect(await agent.whenSettled()).toBe('parked')
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve' })
    await agent.whenIdle()
    expect(trace(agent.events)).toContain('tool/approval-requested')
    await p4(agent.events, { tools: ts(), hooks: hooks as never })
  })

  it('P4: a recording that ends parked re-executes to its end, parked', async () => {
    const { agent } = recorder(THREE)
    agent.followup('clean up')
    await agent.whenSettled()
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve' })
    await settle()
    expect(agent.status).toBe('parked')
    await p4(agent.events, { tools: tools() })
  })

  it('P4: parked, the process exits, a decision is logged while no agent runs, a new process resumes: two processes re-executed', async () => {
    const { agent } = recorder(THREE)
    agent.followup('clean up')
    await agent.whenSettled()
    const [b, c] = agent.approvals()
    await agent.decide(b!.approvalId, { kind: 'approve' })
    expect(await agent.whenSettled()).toBe('parked')
    await agent.dispose()
    // what store.decide appends while no agent runs
    const events = agent.events.slice() as LogEvent[]
    const last = events.at(-1)!
    events.push({
      seq: events.length, time: last.time + 5, type: 'tool/approval-decided',
      data: { turn: 1, step: 1, callId: 'c3', approvalId: c!.approvalId, decision: { kind: 'deny', reason: 'no' }, by: { kind: 'user', id: 'ops' } },
    } as LogEvent)
    let t = last.time + 100
    let n = 0
    const resumed = await resumeAgent({
      log: { header: HEADER, events }, tools: tools(), system: 'sys', model: scriptedModel(THREE.slice(1), { info: { name: 'scripted' } }),
      clock: () => (t += 3), ids: () => `r${++n}`, timers: manualTimers().timers,
    })
    await resumed.whenIdle()
    resumed.followup('more')
    await resumed.whenIdle()
    const ends = resumed.events.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)
    expect(ends).toEqual(['completed', 'completed'])
    await p4(resumed.events, { tools: tools() })
  })
})
