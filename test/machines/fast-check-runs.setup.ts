/**
 * Vitest setup file of the mutation runs (vitest.stryker.config.ts): `TURNLOG_FC_RUNS=N` sets
 * fast-check's default number of runs per property, so a mutant is judged in seconds. Properties
 * that pass an explicit `numRuns` keep it (fast-check's local parameters override global ones).
 */
import fc from 'fast-check'

const raw = process.env.TURNLOG_FC_RUNS
if (raw !== undefined && raw !== '') {
  const numRuns = Number(raw)
  if (!Number.isInteger(numRuns) || numRuns < 1) throw new Error(`TURNLOG_FC_RUNS must be a positive integer, got '${raw}'`)
  fc.configureGlobal({ ...fc.readConfigureGlobal(), numRuns })
}
