/**
 * Property 1 of the golden fuzz (P4 for goldens): a fuzzer session re-run from turn 1 with its
 * recorded model, tools and hooks reproduces it, `time` aside. Shared by the seeded exploration
 * (fuzz-goldens.test.ts) and the replays of the counterexamples it found (fuzz-goldens-regressions.test.ts).
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import { recordedModel, rerun } from '../../evals/index.js'
import { arbCommandList, arbScenario, instantTimers, MAX_STEPS, recordRun, withTimeout } from '../replay/agent-runs.js'

export function explain(r: Awaited<ReturnType<typeof rerun>>): string {
  const d = r.divergence!
  // GOLDEN_EXPLAIN=all shows both logs whole (for analysing a counterexample)
  const lo = process.env.GOLDEN_EXPLAIN === 'all' ? 0 : Math.max(0, d.seq - 8)
  const show = (ev: readonly { seq: number; type: string; data: unknown }[]) =>
    ev.slice(lo, d.seq + 2).map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 140)}`).join('\n')
  return `${d.diff}\ngolden:\n${show(r.golden.events)}\nre-run:\n${show(r.log.events)}\ninputs: ${JSON.stringify(r.inputs)}\ntimed out: ${r.timedOut}`
}

/** Hang limits; GOLDEN_LIMIT_MS raises them for long explorations on a loaded machine (a slow run is not a hang there). */
const LIMIT_MS = Number(process.env.GOLDEN_LIMIT_MS ?? 0)

/** Property 1; `providerStreams` adds the scenarios with provider data, whole blocks and refusals. */
export function reproducesFromTurnOne(opts: { providerStreams?: boolean } = {}) {
  return fc.asyncProperty(arbScenario(opts), fc.scheduler(), arbCommandList(10), async (sc, s, cmds) => {
    const run = await withTimeout(recordRun(sc, s, cmds), Math.max(5000, LIMIT_MS), 'the recorded run')
    const r = await withTimeout(rerun(run.events, {
      model: recordedModel(run.events), tools: run.reexec.tools, hooks: run.reexec.hooks,
      maxParallelToolCalls: sc.maxParallel, maxStepsPerTurn: MAX_STEPS, timers: instantTimers, timeoutMs: 3000,
    }), Math.max(8000, LIMIT_MS), 'rerun')
    if (r.divergence) throw new Error(explain(r))
    expect(r.timedOut).toBe(false)
    expect(r.verify.ok).toBe(true)
    expect(r.unrecorded).toEqual([])
    expect(r.toolSequenceDiff.every((e) => e.op === 'same')).toBe(true)
    expect(Object.values(r.usageDelta.delta).every((v) => v === 0)).toBe(true)
  })
}
