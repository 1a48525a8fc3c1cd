/**
 * The seed of a census test (a fuzz or sample asserting that its generator reaches every kind it
 * claims). The fixed seed keeps CI's run reproducible; `TURNLOG_CENSUS_SEED=<n>` runs the same census on
 * another seed, which is how the generators' weights are checked: every seed must reach every kind
 * in the test's run count (docs/decisions/fuzzer.md).
 */
export function censusSeed(fixed: number): number {
  const raw = process.env.TURNLOG_CENSUS_SEED
  if (raw === undefined || raw === '') return fixed
  const n = Number(raw)
  if (!Number.isInteger(n)) throw new Error(`TURNLOG_CENSUS_SEED must be an integer, got '${raw}'`)
  return n
}
