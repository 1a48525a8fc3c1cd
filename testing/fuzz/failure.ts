/**
 * How a fuzz fails. A check that breaks throws a `FuzzViolation` (the invariant id, its message,
 * the run's log so far, what was pending); `fuzzAgent` throws a `FuzzFailure` built from the last
 * (shrunk) failing run: the violation, the seed and path that replay exactly it, the shrunk
 * scenario and commands, and the census of the runs that passed before it.
 */
import type { LogEvent } from '../../events/index.js'
import type { FuzzCensus } from './census.js'

/** Log lines in a failure's message; the whole log is always in `FuzzFailure.events`. */
const MESSAGE_LOG_LINES = 300

/** One run broke a check. `invariant` is an id from docs/spec/invariants.md (`L11`, `R5`…) or one of
 * `STUCK`, `DRIVER` (the agent reported a defect), `MEMORY` (the inbox machine differs from the
 * log), `CHECK` (your `check` threw), `ERROR` (something threw out of the agent's API). */
export class FuzzViolation extends Error {
  constructor(
    readonly invariant: string,
    readonly detail: string,
    readonly events: readonly LogEvent[],
    readonly pending: readonly string[] = [],
  ) {
    super(`${invariant}: ${detail}`)
    this.name = 'FuzzViolation'
  }
}

/** What `fuzzAgent` throws when a run fails. */
export class FuzzFailure extends Error {
  /** The violated invariant (`R5`, `L11`, `STUCK`…) and its message. */
  readonly invariant: string
  readonly detail: string
  /** `fuzzAgent({ ...sameOptions, seed, path })` runs exactly the failing (shrunk) run again. */
  readonly seed: number
  readonly path: string
  /** The shrunk scenario and commands, as text. */
  readonly counterexample: string
  /** The failing run's log (so far, for `STUCK`). */
  readonly events: readonly LogEvent[]
  /** For `STUCK`: the calls that had not settled. */
  readonly pending: readonly string[]
  readonly numRuns: number
  readonly numShrinks: number
  /** The census of the runs that passed before the failure. */
  readonly census: FuzzCensus

  constructor(v: {
    invariant: string; detail: string; seed: number; path: string; counterexample: string; events: readonly LogEvent[]
    pending: readonly string[]; numRuns: number; numShrinks: number; census: FuzzCensus; cause?: unknown
  }) {
    const log = v.events.map((e) => JSON.stringify(e))
    const shown = log.length > MESSAGE_LOG_LINES ? [...log.slice(0, MESSAGE_LOG_LINES), `… ${log.length - MESSAGE_LOG_LINES} more events (err.events)`] : log
    super([
      `${v.invariant}: ${v.detail}`,
      `seed ${v.seed}, path "${v.path}" (failed after ${v.numRuns} run(s), shrunk ${v.numShrinks} time(s)); replay exactly this run with fuzzAgent({ ..., seed: ${v.seed}, path: ${JSON.stringify(v.path)} })`,
      ...(v.pending.length ? [`pending: ${v.pending.join('; ')}`] : []),
      `counterexample: ${v.counterexample}`,
      `log (${v.events.length} events):`,
      ...shown,
    ].join('\n'), v.cause !== undefined ? { cause: v.cause } : undefined)
    this.name = 'FuzzFailure'
    this.invariant = v.invariant
    this.detail = v.detail
    this.seed = v.seed
    this.path = v.path
    this.counterexample = v.counterexample
    this.events = v.events
    this.pending = v.pending
    this.numRuns = v.numRuns
    this.numShrinks = v.numShrinks
    this.census = v.census
  }
}
