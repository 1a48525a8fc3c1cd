/**
 * B7 (bench/README.md): fuzzAgent scenarios per second. A CI job of users gates on the
 * fuzzer, so its throughput decides how many scenarios a minute of CI buys. Each scenario is the
 * fuzzer's default mix (5–20 operations: followups, steers, injects, inbox edits, cancels, with
 * the fuzzer's tools and generated model responses), every invariant checked after it.
 *
 * The figure is scenarios per second over `B7_RUNS` runs (default 1,000) with a fixed seed, the
 * median of 3 passes (after a warm-up pass of 100 runs).
 */
import { fuzzAgent } from '../testing/index.js'
import { envInt, median, round, type BenchResult } from './common.js'

export async function benchFuzz(log: (l: string) => void = () => {}): Promise<{ B7: BenchResult }> {
  const runs = envInt('B7_RUNS', 1_000)
  await fuzzAgent({ numRuns: 100, seed: 7 })
  const rates: number[] = []
  for (let pass = 0; pass < 3; pass++) {
    const t0 = performance.now()
    await fuzzAgent({ numRuns: runs, seed: 1000 + pass, maxCommands: 20 })
    const secs = (performance.now() - t0) / 1000
    rates.push(runs / secs)
    log(`  B7 pass ${pass + 1}: ${runs} scenarios in ${secs.toFixed(2)} s = ${(runs / secs).toFixed(0)}/s`)
  }
  const value = round(median(rates), 1)
  return {
    B7: {
      value,
      unit: 'scenarios/s',
      target: '>= 1000',
      detail: { runsPerPass: runs, passes: rates.map((r) => round(r, 1)), seeds: [1000, 1001, 1002], node: process.version },
    },
  }
}
