/**
 * One-invariant mutators: take a valid log and break exactly one L invariant so that the first
 * violation a checker reports (the lowest seq; within one event, the lowest id) is that invariant
 * at a known seq. Each invariant has several mutations; one applies only where the log has the
 * needed shape (a mutator returns null when no mutation of that invariant applies).
 *
 * Events inserted or removed shift the seqs after them; every reference (`sourceEventSeqs`, a
 * replace range, `shadowedSeq`, `shadowedSeqs`) is renumbered, so nothing but the intended rule
 * breaks before the reported seq.
 *
 * Split along its seams (issue 15): mutation-edit.ts edits a log, mutation-scan.ts reads one,
 * mutation-candidates.ts lists the mutations of each invariant; this file picks one.
 */
import fc from 'fast-check'
import type { LogEvent } from '../../events/envelope.js'
import type { CheckerOptions, LogInvariant } from '../../events/invariants/types.js'
import { arbValidLog, checkerOptionsFor, type ValidLogOptions } from './valid-log.js'
import { candidates, type Candidate } from './mutation-candidates.js'
import type { LogMutation } from './mutation-edit.js'

export type { LogMutation } from './mutation-edit.js'

export const LOG_INVARIANTS: readonly LogInvariant[] = [
  'L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'L7', 'L8', 'L9', 'L10', 'L11', 'L12', 'L13', 'L14', 'L15', 'L16',
]

/**
 * Breaks `invariant` in `log` (a valid log under `opts`). `pick` chooses among the applicable
 * mutations (a number, taken modulo their count, or a function returning a number in [0, 1)).
 * Returns null when the log has no shape this invariant's mutations need.
 */
export function mutateToBreak(
  log: readonly LogEvent[],
  invariant: LogInvariant,
  pick: number | (() => number) = 0,
  opts: CheckerOptions = {},
): LogMutation | null {
  const all = candidates(log, invariant, { ...checkerOptionsFor(), ...opts } as Required<CheckerOptions>)
  if (all.length === 0) return null
  // First the kind of mutation (each applicable kind equally likely), then the site.
  const groups = new Map<string, Candidate[]>()
  for (const c of all) {
    const g = groups.get(c.variant)
    if (g) g.push(c)
    else groups.set(c.variant, [c])
  }
  const kinds = [...groups.values()]
  const n = typeof pick === 'number' ? Math.abs(Math.floor(pick)) : Math.floor(pick() * 2 ** 31)
  const kind = kinds[n % kinds.length]!
  return kind[Math.floor(n / kinds.length) % kind.length]!.make()
}

/** Step-kind weights that make each invariant's mutable shapes frequent. */
const BIAS: Partial<Record<LogInvariant, ValidLogOptions['stepWeights']>> = {
  L5: { tools: 80, 'abort-tools': 10 },
  L6: { tools: 80 },
  L10: { tools: 60 },
  L13: { fail: 40 },
  L16: { fail: 60 },
}

/**
 * Arbitrary of `{log, invariant, seq}`: a valid log of `arbValidLog(opts)` with exactly `invariant`
 * broken, first at `seq`.
 */
export function arbLogMutation(invariant: LogInvariant, opts: ValidLogOptions = {}): fc.Arbitrary<LogMutation> {
  const check = checkerOptionsFor(opts)
  const logs = arbValidLog({ minTurns: 2, ...opts, stepWeights: { ...BIAS[invariant], ...opts.stepWeights } })
  return fc
    .tuple(logs, fc.nat())
    .map(([log, pick]) => mutateToBreak(log, invariant, pick, check))
    .filter((m): m is LogMutation => m !== null)
}

/** Like `arbLogMutation`, with the invariant drawn too. */
export function arbAnyLogMutation(opts: ValidLogOptions = {}): fc.Arbitrary<LogMutation> {
  return fc.constantFrom(...LOG_INVARIANTS).chain((inv) => arbLogMutation(inv, opts))
}
