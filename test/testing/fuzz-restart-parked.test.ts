/**
 * Dispose and crash while parked under the fuzzer (docs/spec/lifecycle.md §9 "While parked" and "Re-execution
 * and fuzzing", issue 21 item 9): with `approvals: true` a parked run may be disposed (the session
 * stays parked: dispose writes no turn/end or step/end, the stored log's last lifecycle event is
 * `step/parked`) or crash (the agent dropped, its timers fenced), then resumed with `resumeAgent`
 * and continued; the oracle (L17, L18, R9, R10 and the rest) runs on the whole log, and R10 counts
 * bodies across both agents.
 */
import { describe, expect, it } from 'vitest'
import { fuzzAgent } from '../../testing/index.js'

describe('fuzzAgent: dispose and crash while parked, then resume (docs/spec/lifecycle.md §9)', () => {
  it('L17, L18, R9, R10 across a dispose or a crash while parked and the resume (fixed seed, 100 runs)', async () => {
    const report = await fuzzAgent({ numRuns: 100, seed: 3, approvals: true })
    const o = report.census.other
    if (process.env.TURNLOG_CENSUS) console.log(o)
    expect(o['parked: dispose'] ?? 0).toBeGreaterThan(0)
    expect(o['parked: crash'] ?? 0).toBeGreaterThan(0)
    expect(o['parked: resumed parked'] ?? 0).toBeGreaterThan(0)
    // after a resume the scenario went on: a decision reached the resumed agent and a turn ended
    expect(o['parked: decided after resume'] ?? 0).toBeGreaterThan(0)
  }, 120_000)
})
