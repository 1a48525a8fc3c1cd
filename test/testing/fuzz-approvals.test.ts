/**
 * The fuzzer with approvals (docs/spec/lifecycle.md §9 "Re-execution and fuzzing", issue 21 item 9): steps
 * whose calls need approval or are asked (`ask`), decided while parked in any order (approve,
 * edit, deny), expired, steered over and cancelled; every log verifies (L17/L18) and every run
 * holds R9 and R10. A user's own `needsApproval` tool runs under it too; an agent that ran a
 * body before its approval is caught (the oracle can fail).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { LogEvent } from '../../events/index.js'
import { fuzzAgent } from '../../testing/index.js'
import { APPROVAL_SHAPES } from '../../testing/fuzz/approval-shapes.js'
import { checkApprovals } from '../../testing/fuzz/approvals.js'
import type { FuzzViolation } from '../../testing/fuzz/failure.js'
import type { Run } from '../../testing/fuzz/run.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { censusSeed } from '../support/census-seed.js'

const runs = Number(process.env.TURNLOG_FUZZ_APPROVAL_RUNS ?? 150)

describe('fuzzAgent with approvals (docs/spec/lifecycle.md §9)', () => {
  it(`L17, L18, R9, R10 (and L1–L16, R1–R8): ${runs} runs with approvals, decisions, expiries, steers and cancels while parked, and cancels and steers landing at asks (fixed seed, so the run is reproducible)`, async () => {
    const seen = new Map<string, number>()
    const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1)
    const report = await fuzzAgent({
      numRuns: runs, seed: censusSeed(20261205), approvals: true,
      onRun: (events: readonly LogEvent[]) => {
        for (const e of events) {
          const d = e.data as any
          if (e.type === 'step/parked') count('parked')
          else if (e.type === 'tool/approval-requested') count(e.seq > 0 && events[e.seq - 1]!.type === 'tool/call' ? 'asked' : 'requested')
          else if (e.type === 'tool/approval-decided') count(`decided ${d.decision.kind} by ${d.by.kind}${d.decision.arguments !== undefined ? ' edited' : ''}`)
        }
      },
    })
    if (process.env.TURNLOG_CENSUS) console.log([...seen])
    // the generator reaches the approval shapes it claims to fuzz
    // (since round 14 the fuzzer weights its approval tool's calls toward ones that park and plans
    // the first park; every seed tried reaches every kind, and all of them pass the oracle
    // (docs/decisions/fuzzer.md;
    // TURNLOG_CENSUS_SEED=<n> runs the census on another seed)
    for (const k of ['parked', 'requested', 'asked', 'decided approve by user', 'decided deny by expired']) {
      expect(seen.get(k) ?? 0, k).toBeGreaterThan(0)
    }
    expect((seen.get('decided deny by superseded') ?? 0) + (seen.get('decided deny by canceled') ?? 0)).toBeGreaterThan(0)
    // L17, L5 (round 16): the shapes round 14's two agent defects lived in, reached by the generator
    // itself in this run (docs/decisions/fuzzer.md, "Approval fuzzer reach": with either fix reverted, these 150 runs
    // fail on every seed measured). If the generator stops reaching one, this fails.
    if (process.env.TURNLOG_CENSUS) console.log(report.census.other)
    for (const shape of APPROVAL_SHAPES) expect(report.census.other[`approval: ${shape}`] ?? 0, shape).toBeGreaterThan(0)
  }, 600_000)

  it("R9/R10 on a user's own needsApproval tool: its body counted once per approved call", async () => {
    const perRun: Array<Map<string, number>> = []
    const tools = () => {
      const runsByCall = new Map<string, number>()
      perRun.push(runsByCall)
      return [defineTool({
      name: 'pay', description: 'pay', parameters: z.object({ cents: z.number().int() }),
      needsApproval: (a) => a.cents > 100,
      execute: (a, ctx) => {
        const k = `${ctx.turn}.${ctx.step}.${ctx.callId}`
        runsByCall.set(k, (runsByCall.get(k) ?? 0) + 1)
        return `paid ${a.cents}`
      },
    }) as AnyTool]
    }
    const report = await fuzzAgent({ numRuns: 60, seed: 7, tools, approvals: true })
    expect(report.numRuns).toBe(60)
    expect(perRun.flatMap((m) => [...m.values()]).every((n) => n === 1)).toBe(true)
    expect(perRun.some((m) => m.size > 0)).toBe(true)
  }, 600_000)

  it('R9/R10: the oracle fails a body started while parked, one before its approve, and one run twice', () => {
    const run = (starts: Array<{ key: string; status: string; asked: boolean; approved: boolean }>, parkedRequests = 0) =>
      ({ approvals: { starts, parkedRequests }, agent: { events: [] } }) as unknown as Run
    const inv = (r: Run) => {
      try {
        checkApprovals(r)
        return null
      } catch (e) {
        return (e as FuzzViolation).invariant
      }
    }
    const ok = { key: '1.1.c1', status: 'running', asked: true, approved: true }
    expect(inv(run([ok, { ...ok, key: '1.1.c2', asked: false, approved: false }]))).toBeNull()
    expect(inv(run([{ ...ok, status: 'parked' }]))).toBe('R9')
    expect(inv(run([{ ...ok, approved: false }]))).toBe('R9')
    expect(inv(run([], 1))).toBe('R9')
    expect(inv(run([ok, ok]))).toBe('R10')
  })
})
