/**
 * Fuzzer sessions with approvals, as goldens (docs/spec/lifecycle.md §9): the golden property's runs
 * (test/replay/agent-runs.ts) plus the fuzzer's `fuzz_approval` tool (needs approval for an even
 * `n`, parallel-safe for `n % 4 === 1`) and its `ask` (an odd `n` divisible by 3, from
 * `tools/pre-execute`), decided while parked by a person — approve the first or the last open
 * request, approve with edited arguments, deny —, or left by a steer or a cancel. Expiry is left
 * out: it needs the clock moved under the agent, which a re-run re-issues but the recording here
 * cannot drive deterministically.
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import { recordedModel, rerun } from '../../evals/index.js'
import { createAgent, type TurnlogAgent } from '../../agent/agent.js'
import type { HookMap } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { approvalTool, arbApprovalCall, asks } from '../../testing/fuzz/approval-tool.js'
import { arbToolCall, arbScenario as fuzzScenario } from '../../testing/fuzz/scenario.js'
import type { AnyTool } from '../../tools/types.js'
import { apply, arbCommandList, fakeClock, fuzzTools, instantTimers, MAX_STEPS, scenarioHooks, TOOL_NAMES, withTimeout, type Command, type Scenario } from '../replay/agent-runs.js'
import { explain } from './golden-property.js'

export type ParkedMove = 'approve' | 'approve-last' | 'edit' | 'deny' | 'steer' | 'cancel'

/**
 * The scenario generator with `fuzz_approval` calls among the tool calls; in two scenarios in
 * three the first answer is a step of one to three calls with at least one `fuzz_approval` (most
 * of which park), so that most goldens hold a decision.
 */
export function arbApprovalScenario(): fc.Arbitrary<Scenario> {
  const names = [...TOOL_NAMES, 'fuzz_approval']
  const userCalls = { fuzz_approval: arbApprovalCall() }
  const first = fc.tuple(arbApprovalCall(), fc.array(arbToolCall(names, userCalls), { maxLength: 2 }), fc.nat(2))
    .map(([a, rest, at]) => ({ toolCalls: [...rest.slice(0, at), a, ...rest.slice(at)] }))
  return fc.tuple(fuzzScenario(names, {}, userCalls, false, false), fc.option(first, { freq: 2 }))
    .map(([sc, step]) => (step === null ? sc : { ...sc, responses: [step as Scenario['responses'][number], ...sc.responses] }))
}

export function arbParkedMoves(): fc.Arbitrary<ParkedMove[]> {
  return fc.array(fc.constantFrom<ParkedMove>('approve', 'approve', 'approve-last', 'edit', 'deny', 'steer', 'cancel'), { minLength: 1, maxLength: 4 })
}

/** The scenario's hooks plus the fuzzer's `ask`; `wait` is the recorded run's scheduler wait. */
export function approvalHooks(sc: Scenario, wait: () => Promise<void> = async () => {}): Partial<{ [K in keyof HookMap]: HookMap[K] }> {
  return {
    ...scenarioHooks(sc, wait),
    'tools/pre-execute': async (p, next) => {
      await wait()
      return asks(p.call) ? { kind: 'ask' as const, question: 'fuzz asks' } : next()
    },
  }
}

export function approvalTools(wait: () => Promise<void> = async () => {}, body?: (fail: boolean) => Promise<unknown>, fails?: () => boolean): AnyTool[] {
  return [...fuzzTools(body, fails), approvalTool(wait)]
}

/** Runs one scenario with `s` interleaving chunks, hook waits and bodies; each park gets the next move (then approvals). */
export async function recordApprovalRun(sc: Scenario, s: fc.Scheduler, cmds: readonly Command[], moves: readonly ParkedMove[]): Promise<readonly LogEvent[]> {
  const wait = () => s.schedule(Promise.resolve(), 'settle').then(() => {})
  let failIdx = 0
  const tools = approvalTools(wait, async (fail) => {
    await wait()
    if (fail) throw new Error('fuzz tool failure')
    return { ok: true }
  }, () => sc.toolFails[failIdx++ % sc.toolFails.length] ?? false)
  const model = scriptedModel((_req, i) => sc.responses[i % sc.responses.length]!, { beforeChunk: () => wait(), info: { name: 'fuzz' } })
  let n = 0
  const agent = createAgent({
    model, tools, system: 'fuzz', clock: fakeClock(), ids: () => `f${++n}`, timers: instantTimers,
    checkRequests: 'full', maxStepsPerTurn: MAX_STEPS, maxParallelToolCalls: sc.maxParallel, hooks: approvalHooks(sc, wait),
  }) as TurnlogAgent
  for (const c of cmds) {
    if (c.kind === 'wait') {
      for (let i = 0; i < c.n; i++) {
        await new Promise((r) => setImmediate(r))
        if (s.count() === 0) break
        await s.waitOne()
      }
    } else apply(agent, c)
  }
  await settleParked(agent, s, moves)
  agent.followup('final')
  await settleParked(agent, s, [])
  return agent.events
}

/** A livelock bound, far above any scenario's parks (each later park appends its own `step/parked`). */
const MAX_PARKS = 10_000

/** The seq of the last `step/parked`, or -1. */
const lastParked = (agent: TurnlogAgent): number => agent.events.findLast((e) => e.type === 'step/parked')?.seq ?? -1

/**
 * Until idle: each park gets the next move; once they are used up, the first open request is
 * approved. Judged per park, as the fuzzer's oracle (testing/fuzz/approvals.ts): the agent must not
 * stand at the `step/parked` our last move answered once that move and the rest of its tick are
 * over. (A bound of 100 parks, before round 16, called a long golden stuck: seed 1287895711, 25
 * turns of a cycling script, every park decided.)
 */
async function settleParked(agent: TurnlogAgent, s: fc.Scheduler, moves: readonly ParkedMove[]): Promise<void> {
  let i = 0
  let answered: number | null = null
  for (let parks = 0; parks < MAX_PARKS; parks++) {
    let st = await s.waitFor(agent.whenSettled())
    if (st === 'idle') return
    if (agent.status !== 'parked') continue
    if (answered !== null && lastParked(agent) === answered) {
      await new Promise((r) => setImmediate(r))
      st = await s.waitFor(agent.whenSettled())
      if (st === 'idle') return
      if (agent.status === 'parked' && lastParked(agent) === answered) throw stayedParked(agent, moves[i - 1] ?? 'approve')
      if (agent.status !== 'parked') continue
    }
    answered = lastParked(agent)
    const open = agent.approvals()
    if (open.length === 0) throw new Error('parked with no open approval')
    const first = open[0]!
    const move = moves[i++] ?? 'approve'
    const calledAlready = (o: (typeof open)[number]) => agent.events.some((e) => e.type === 'tool/call' &&
      (e.data as { turn: number; step: number; callId: string }).turn === o.turn &&
      (e.data as { step: number }).step === o.step && (e.data as { callId: string }).callId === o.callId)
    switch (move) {
      case 'approve': await agent.decide(first.approvalId, { kind: 'approve' }); break
      case 'approve-last': await agent.decide(open.at(-1)!.approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } }); break
      case 'edit': {
        // only a call not yet logged (needsApproval) takes edited arguments; an asked one is approved as it is
        const editable = open.find((o) => o.name === 'fuzz_approval' && !calledAlready(o))
        await agent.decide((editable ?? first).approvalId, editable ? { kind: 'approve', arguments: { n: 100 + i } } : { kind: 'approve' })
        break
      }
      case 'deny': await agent.decide(first.approvalId, { kind: 'deny', reason: 'fuzz says no' }); break
      case 'steer': agent.steer('fuzz steer while parked'); break
      case 'cancel': agent.cancel({ kind: 'user' }); break
    }
    // a steer or a cancel changes the status only once the loop runs
    await new Promise((r) => setImmediate(r))
  }
  throw new Error(`the agent parked more than ${MAX_PARKS} times (a livelock)`)
}

function stayedParked(agent: TurnlogAgent, move: ParkedMove): Error {
  const ev = agent.events
  const tail = ev.slice(-12).map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 160)}`).join('\n')
  return new Error(`the agent stayed parked at the step/parked at seq ${lastParked(agent)} after the move on it (${move}; ` +
    `${agent.approvals().length} open); the log ends:\n${tail}`)
}

/** Hang limits; GOLDEN_LIMIT_MS raises them for long explorations on a loaded machine (as golden-property.ts). */
const LIMIT_MS = Number(process.env.GOLDEN_LIMIT_MS ?? 0)

/** The approvals property (P4 for goldens with approvals); `stats` counts the goldens that parked and that logged a decision. */
export function approvalsReproduce(stats = { parked: 0, decided: 0 }) {
  return fc.asyncProperty(arbApprovalScenario(), fc.scheduler(), arbCommandList(8), arbParkedMoves(), async (sc, s, cmds, moves) => {
    const events = await withTimeout(recordApprovalRun(sc, s, cmds, moves), Math.max(5000, LIMIT_MS), 'the recorded run')
    if (events.some((e) => e.type === 'step/parked')) stats.parked++
    if (events.some((e) => e.type === 'tool/approval-decided')) stats.decided++
    const r = await withTimeout(rerun(events, {
      model: recordedModel(events), tools: approvalTools(), hooks: () => approvalHooks(sc),
      maxParallelToolCalls: sc.maxParallel, maxStepsPerTurn: MAX_STEPS, timers: instantTimers, timeoutMs: 3000,
    }), Math.max(8000, LIMIT_MS), 'rerun')
    if (r.divergence) throw new Error(explain(r))
    expect(r.timedOut).toBe(false)
    // (the scenario's throwing hooks are reported in `errors` too: only the re-run's own complaints count)
    expect(r.errors.filter((m) => /parked|dispose/.test(m))).toEqual([])
    expect(r.verify.ok).toBe(true)
    expect(r.log.events.length).toBe(events.length)
  })
}
