/**
 * P4 over generated approval sessions (docs/spec/lifecycle.md §9 "Re-execution and fuzzing"): steps whose calls
 * need approval (`needsApproval`) or are asked by `tools/pre-execute` (`ask`), parallel-safe or
 * not, decided while parked by a person (approve, edit, deny, in any order), by the expiry, by a
 * steer or a cancel, with the process exiting while parked (and a decision logged while none ran)
 * and a new one resuming: each recorded log re-executes to the same log, time included.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/agent.js'
import type { Agent } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { reexecute } from '../../replay/reexecute.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { manualTimers, settle } from '../approvals/helpers.js'
import { HEADER } from './replay-helpers.js'

const RUNS = Number(process.env.P4_APPROVAL_RUNS ?? 60)
type Action = 'approve-first' | 'approve-last' | 'edit' | 'deny' | 'expire' | 'steer' | 'cancel' | 'exit' | 'exit-decide'
interface CallPlan { needs: boolean; ask: boolean; safe: boolean }
interface Plan { calls: CallPlan[]; timeout: boolean; actions: Action[]; followup: boolean }

const arbPlan: fc.Arbitrary<Plan> = fc.record({
  calls: fc.array(fc.record({ needs: fc.boolean(), ask: fc.boolean(), safe: fc.boolean() }), { minLength: 1, maxLength: 4 }),
  timeout: fc.boolean(),
  actions: fc.array(fc.constantFrom<Action>('approve-first', 'approve-first', 'approve-last', 'edit', 'deny', 'expire', 'steer', 'cancel', 'exit', 'exit-decide'), { minLength: 1, maxLength: 6 }),
  followup: fc.boolean(),
})

const ARGS = z.object({ i: z.number(), needs: z.boolean(), ask: z.boolean(), safe: z.boolean() })

function toolsOf(timeout: boolean): AnyTool[] {
  return [defineTool({
    name: 'act', description: 'act', parameters: ARGS,
    needsApproval: (a) => a.needs,
    ...(timeout ? { approval: { timeoutMs: 1000 } } : {}),
    isConcurrencySafe: (a) => a.safe,
    execute: ({ i }) => `did ${i}`,
  }) as AnyTool]
}

const hooks = () => ({ 'tools/pre-execute': (p: { args: unknown }, next: () => unknown) => ((p.args as { ask?: boolean }).ask ? { kind: 'ask' as const } : next()) })
const texts = (): ScriptedEntry[] => Array.from({ length: 12 }, (_, i) => ({ text: `done ${i}` }))

/** Records one session of the plan (one or more processes) and returns its log. */
async function record(plan: Plan): Promise<LogEvent[]> {
  let t = 1_764_450_000_000
  let n = 0
  const clock = () => (t += 3)
  const ids = () => `m${++n}`
  const calls = plan.calls.map((c, i) => ({ name: 'act', args: { i, needs: c.needs, ask: c.ask && !c.needs, safe: c.safe }, id: `c${i}` }))
  let mt = manualTimers()
  const common = { tools: toolsOf(plan.timeout), system: 'sys', hooks: hooks() as never, clock, ids }
  let agent: Agent = createAgent({ ...common, model: scriptedModel([{ toolCalls: calls }, ...texts()], { info: { name: 'scripted' } }), timers: mt.timers })
  agent.followup('go')
  for (const action of plan.actions) {
    await settle() // an input given while parked (a cancel) changes the status only when the loop runs
    if ((await agent.whenSettled()) !== 'parked') break
    const open = agent.approvals()
    if (open.length === 0) break
    const first = open[0]!
    const last = open.at(-1)!
    switch (action) {
      case 'approve-first': await agent.decide(first.approvalId, { kind: 'approve' }); break
      case 'approve-last': await agent.decide(last.approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } }); break
      case 'edit': {
        const a = JSON.parse(first.arguments) as z.infer<typeof ARGS>
        // an asked call's arguments were logged with its tool/call: they cannot be edited
        await agent.decide(first.approvalId, a.needs ? { kind: 'approve', arguments: { ...a, i: a.i + 100 } } : { kind: 'approve' })
        break
      }
      case 'deny': await agent.decide(first.approvalId, { kind: 'deny', reason: 'no' }); break
      case 'expire':
        t += 1000
        mt.fire()
        break
      case 'steer': agent.steer('instead'); break
      case 'cancel': agent.cancel(); break
      case 'exit':
      case 'exit-decide': {
        await agent.dispose()
        const events = agent.events.slice() as LogEvent[]
        if (action === 'exit-decide') {
          // what store.decide appends while no agent runs
          events.push({
            seq: events.length, time: clock(), type: 'tool/approval-decided',
            data: { turn: first.turn, step: first.step, callId: first.callId, approvalId: first.approvalId, decision: { kind: 'deny', reason: 'later' }, by: { kind: 'user', id: 'ops' } },
          } as LogEvent)
        }
        mt = manualTimers()
        agent = await resumeAgent({ log: { header: HEADER, events }, ...common, model: scriptedModel(texts(), { info: { name: 'scripted' } }), timers: mt.timers })
        break
      }
    }
  }
  await settle()
  if ((await agent.whenSettled()) === 'idle' && plan.followup) {
    agent.followup('more')
    await agent.whenSettled()
  }
  await agent.dispose()
  return agent.events.slice() as LogEvent[]
}

describe('P4 over generated approval sessions (docs/spec/lifecycle.md §9)', () => {
  it(`P4: every generated approval session re-executes to the same log, time included (${RUNS} runs)`, async () => {
    let parkedRuns = 0
    await fc.assert(
      fc.asyncProperty(arbPlan, async (plan) => {
        const events = await record(plan)
        expect(verify(events).violations).toEqual([])
        if (events.some((e) => e.type === 'step/parked')) parkedRuns++
        const r = await reexecute(events, { tools: toolsOf(plan.timeout), hooks: hooks as never, system: 'sys', stallMs: 500 })
        if (!r.ok) {
          const lo = Math.max(0, r.divergence.seq - 8)
          const ctx = events.slice(lo, r.divergence.seq + 3).map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 160)}`)
          throw new Error(`${r.divergence.diff}\n${r.divergence.waiting ?? ''}\nrecorded around it:\n${ctx.join('\n')}`)
        }
        expect(r).toEqual({ ok: true, eventCount: events.length })
      }),
      { numRuns: RUNS },
    )
    // the generator reaches the parked states it is about
    expect(parkedRuns).toBeGreaterThan(RUNS / 3)
  }, 300_000)
})
