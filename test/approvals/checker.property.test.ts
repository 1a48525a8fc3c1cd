/**
 * L17/L18 as the checker decides them (events/invariants/approvals.ts): logs the live agent writes
 * with random approval scenarios verify clean, and each rule broken on purpose in such a log is
 * caught (property tests over mutated logs).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { LogEvent } from '../../events/index.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/index.js'
import { Edit } from '../../testing/arbitraries/mutation-edit.js'
import { makeAgent } from '../agent/contain-helpers.js'

interface CallPlan { needs: boolean; ask: boolean; verdict: 'approve' | 'deny' | 'edit' }
interface Plan { calls: CallPlan[]; reverse: boolean; end: 'decide' | 'cancel' | 'steer' }

const arbPlan: fc.Arbitrary<Plan> = fc.record({
  calls: fc.array(fc.record({ needs: fc.boolean(), ask: fc.boolean(), verdict: fc.constantFrom('approve', 'deny', 'edit') }), { minLength: 1, maxLength: 4 }),
  reverse: fc.boolean(),
  end: fc.constantFrom('decide', 'decide', 'cancel', 'steer'),
}) as fc.Arbitrary<Plan>

/** Runs the agent through the plan and returns its log. */
async function logOf(plan: Plan): Promise<LogEvent[]> {
  const tool = defineTool({
    name: 'act', description: 'act', parameters: z.object({ i: z.number(), needs: z.boolean(), ask: z.boolean() }),
    needsApproval: (a) => a.needs,
    execute: ({ i }) => `did ${i}`,
  })
  const calls = plan.calls.map((c, i) => ({ name: 'act', args: { i, needs: c.needs, ask: c.ask && !c.needs }, id: `c${i}` }))
  const { agent } = makeAgent([{ toolCalls: calls }, { text: 'done' }, { text: 'again' }], {
    tools: [tool],
    hooks: { 'tools/pre-execute': (p, next) => ((p.args as { ask?: boolean }).ask ? { kind: 'ask' } : next()) },
  })
  agent.followup('go')
  for (let guard = 0; guard < 20; guard++) {
    if ((await agent.whenSettled()) === 'idle') break
    const open = agent.approvals()
    if (plan.end === 'cancel' && guard > 0) { agent.cancel(); continue }
    if (plan.end === 'steer' && guard > 0) { agent.steer('instead'); continue }
    const a = plan.reverse ? open.at(-1)! : open[0]!
    const i = Number(a.callId.slice(1))
    const v = plan.calls[i]!.verdict
    const askCall = !plan.calls[i]!.needs
    if (v === 'deny') await agent.decide(a.approvalId, { kind: 'deny', reason: 'no' })
    else if (v === 'edit' && !askCall) await agent.decide(a.approvalId, { kind: 'approve', arguments: { i: 100 + i, needs: true, ask: false } })
    else await agent.decide(a.approvalId, { kind: 'approve' })
  }
  await agent.whenIdle()
  return agent.events.slice() as LogEvent[]
}

const kinds = (log: readonly LogEvent[]) => verify(log).violations.map((v) => v.invariant)
const idx = (log: readonly LogEvent[], f: (e: LogEvent) => boolean) => log.findIndex(f)
const d = (e: LogEvent) => e.data as Record<string, any>

/** Each mutation breaks one rule of L17/L18 in a log that has what it needs, or says it does not apply. */
const MUTATIONS: Array<{ name: string; invariant: 'L17' | 'L18'; apply(log: readonly LogEvent[]): LogEvent[] | null }> = [
  {
    name: 'a needsApproval request moved after a tool/call of its step', invariant: 'L17',
    apply(log) {
      const r = idx(log, (e) => e.type === 'tool/approval-requested' && log[e.seq - 1]!.type !== 'tool/call')
      if (r < 0) return null
      const c = idx(log, (e) => e.type === 'tool/call' && e.seq > r)
      if (c < 0) return null
      const ed = new Edit(log)
      ed.swap(r, c)
      return ed.done()
    },
  },
  {
    name: 'a decision removed', invariant: 'L17',
    apply(log) {
      const x = idx(log, (e) => e.type === 'tool/approval-decided')
      if (x < 0) return null
      const ed = new Edit(log)
      ed.remove(x)
      return ed.done()
    },
  },
  {
    name: 'a decision duplicated', invariant: 'L17',
    apply(log) {
      const x = idx(log, (e) => e.type === 'tool/approval-decided')
      if (x < 0) return null
      const ed = new Edit(log)
      ed.insertAfter(x, { type: 'tool/approval-decided', data: structuredClone(d(log[x]!)) })
      return ed.done()
    },
  },
  {
    name: "a denied call's result code changed", invariant: 'L17',
    apply(log) {
      const x = idx(log, (e) => e.type === 'tool/approval-decided' && d(e).decision.kind === 'deny')
      if (x < 0) return null
      const callId = d(log[x]!).callId
      const r = idx(log, (e) => e.type === 'tool/result' && d(e).callId === callId)
      if (r < 0) return null
      const ed = new Edit(log)
      ed.ev(r).data.error.code = 'TOOL_ERROR'
      return ed.done()
    },
  },
  {
    name: 'an approved call without the approved (edited) arguments', invariant: 'L17',
    apply(log) {
      const x = idx(log, (e) => e.type === 'tool/approval-decided' && d(e).decision.arguments !== undefined)
      if (x < 0) return null
      const callId = d(log[x]!).callId
      const c = idx(log, (e) => e.type === 'tool/call' && d(e).callId === callId && e.seq > x)
      if (c < 0) return null
      const ed = new Edit(log)
      ed.ev(c).data.arguments = '{"i":-1,"needs":true,"ask":false}'
      return ed.done()
    },
  },
  {
    name: 'a tool/call moved before the decision that step/parked waits for', invariant: 'L18',
    apply(log) {
      const p = idx(log, (e) => e.type === 'step/parked')
      if (p < 0) return null
      const x = idx(log, (e) => e.type === 'tool/approval-decided' && e.seq > p)
      if (x < 0 || log[x + 1]?.type !== 'tool/call') return null
      const ed = new Edit(log)
      ed.swap(x, x + 1)
      return ed.done()
    },
  },
  {
    name: 'a step/parked with nothing undecided', invariant: 'L18',
    apply(log) {
      const s = idx(log, (e) => e.type === 'step/end')
      if (s < 0) return null
      const e = d(log[s]!)
      const ed = new Edit(log)
      ed.insertBefore(s, { type: 'step/parked', data: { turn: e.turn, step: e.step, approvals: ['nope'] } })
      return ed.done()
    },
  },
  {
    name: 'step/end while a request is undecided', invariant: 'L17',
    apply(log) {
      const x = idx(log, (e) => e.type === 'tool/approval-decided')
      if (x < 0) return null
      const { turn, step } = d(log[x]!)
      const ed = new Edit(log)
      ed.insertAfter(x, { type: 'tool/approval-requested', data: { turn, step, callId: 'ghost', approvalId: 'ghost-approval' } })
      return ed.done()
    },
  },
]

describe('L17/L18 checker', () => {
  it('L17 L18: every log the agent writes for random approval scenarios verifies', async () => {
    await fc.assert(fc.asyncProperty(arbPlan, async (plan) => {
      const log = await logOf(plan)
      expect(verify(log).violations).toEqual([])
      expect(log.filter((e) => e.type === 'turn/end').length).toBeGreaterThan(0)
    }), { numRuns: 30 })
  })

  it('L17 L18: each broken rule is caught in mutated logs', async () => {
    const hit = new Set<string>()
    await fc.assert(fc.asyncProperty(arbPlan, async (plan) => {
      const log = await logOf(plan)
      for (const m of MUTATIONS) {
        const bad = m.apply(log)
        if (bad === null) continue
        hit.add(m.name)
        expect(kinds(bad), m.name).toContain(m.invariant)
      }
    }), { numRuns: 40 })
    // every mutation found a log to break
    expect([...hit].sort()).toEqual(MUTATIONS.map((m) => m.name).sort())
  })
})
