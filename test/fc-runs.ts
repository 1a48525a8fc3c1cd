/**
 * `fcRuns(n)`: the number of runs of a property that asks for `n` explicitly. Normally `n`; during a
 * mutation run (`TURNLOG_FC_RUNS`, set by stryker.config.mjs) at most that cap, so that a surviving
 * mutant costs seconds rather than the full thousand runs (issue 15 part 3). Properties without an
 * explicit count get the cap from test/machines/fast-check-runs.setup.ts instead.
 */
export function fcRuns(n: number): number {
  const raw = process.env.TURNLOG_FC_RUNS
  if (raw === undefined || raw === '') return n
  const cap = Number(raw)
  if (!Number.isInteger(cap) || cap < 1) throw new Error(`TURNLOG_FC_RUNS must be a positive integer, got '${raw}'`)
  return Math.min(n, cap)
}

/**
 * The budget of a long property or fuzz loop: `normal` runs in `npm test`, `full` in
 * `npm run test:long` (vitest.long.config.ts sets TURNLOG_LONG=1; CI's Node 24 lane sets it too), so
 * the everyday suite stays fast (T1) while every change still meets the full budget before it lands.
 * vitest.long.config.ts picks up every test file that calls `longRuns`. The mutation cap applies.
 */
export function longRuns(normal: number, full: number): number {
  return fcRuns(process.env.TURNLOG_LONG === '1' ? full : normal)
}
