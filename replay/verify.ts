/**
 * `verify`: checks a stored log (its events, the header already stripped) against the event schemas
 * and every L invariant, and reports all violations in log order. It never stops at the first one:
 * an event that fails validation is reported as `SCHEMA` and skipped by the checker (its position
 * still counts for L1); an event that breaks an invariant is applied anyway (best effort).
 *
 * `Verifier` is the same check one event at a time, so a log can be verified while it streams
 * (the CLI keeps the checker's folded state, never the events).
 */
import { TurnlogError } from '../events/errors.js'
import { LogChecker } from '../events/invariants/checker.js'
import type { CheckerOptions, Violation } from '../events/invariants/types.js'
import { RecordDefect } from '../events/jsonl.js'
import { findLossy } from '../events/lossless.js'
import { defaultRegistry, type EventRegistry } from '../events/registry.js'

export interface VerifyOptions extends CheckerOptions {
  /** The registry that validates each event (plugin types). Default: the core vocabulary. */
  registry?: EventRegistry
  /** Keep at most this many violations in `violations` (`violationCount` counts them all). Default: all. */
  maxViolations?: number
}

export interface VerifyResult {
  /** True when no event failed validation and no invariant was broken. */
  ok: boolean
  /** Every violation (up to `maxViolations`), in log order; within one event, by invariant id. */
  violations: Violation[]
}

export function verify(events: readonly unknown[], opts: VerifyOptions = {}): VerifyResult {
  const v = new Verifier(opts)
  for (let i = 0; i < events.length; i++) v.push(events[i])
  return v.result()
}

/** An incremental `verify`: `push` the events in log order (raw JSON values), then read `result()`. */
export class Verifier {
  readonly #registry: EventRegistry
  readonly #checker: LogChecker
  readonly #max: number
  readonly #violations: Violation[] = []
  #total = 0
  #count = 0

  constructor(opts: VerifyOptions = {}) {
    this.#registry = opts.registry ?? defaultRegistry
    this.#checker = new LogChecker(opts)
    this.#max = opts.maxViolations ?? Infinity
  }

  /** How many events were pushed (the position of the next one). */
  get eventCount(): number {
    return this.#count
  }

  get ok(): boolean {
    return this.#total === 0
  }

  /** How many violations were found in all (`result().violations` keeps up to `maxViolations`). */
  get violationCount(): number {
    return this.#total
  }

  /** Checks the next event (a raw JSON value; a `RecordDefect` from a lenient read is a SCHEMA violation). */
  push(raw: unknown): void {
    const i = this.#count++
    const schema = raw instanceof RecordDefect ? defectViolation(raw.error, i) : schemaFailure(raw, i, this.#registry)
    if (schema !== null) {
      this.#add(schema)
      const seq = (raw as { seq?: unknown } | null)?.seq
      if (typeof seq === 'number' && seq !== i) {
        this.#add({ invariant: 'L1', seq: i, message: `seq ${seq} at position ${i}` })
      }
      this.#checker.skip()
      return
    }
    const e = raw as Parameters<LogChecker['check']>[0]
    const found = this.#checker.check(e)
    for (let k = 0; k < found.length; k++) this.#add(found[k]!)
    this.#checker.apply(e)
  }

  result(): VerifyResult {
    return { ok: this.#total === 0, violations: this.#violations }
  }

  #add(v: Violation): void {
    this.#total++
    if (this.#violations.length < this.#max) this.#violations.push(v)
  }
}

function defectViolation(err: TurnlogError, position: number): Violation {
  const v: Violation = { invariant: 'SCHEMA', seq: position, message: err.message }
  if (err.field !== undefined) v.field = err.field
  return v
}

/** The event's schema failure (zod, unknown type, lossy data) as a `SCHEMA` violation, or null. */
function schemaFailure(raw: unknown, position: number, registry: EventRegistry): Violation | null {
  try {
    registry.validate(raw, { seq: position })
  } catch (err) {
    // verify never throws on bad input (docs/spec/reliability.md "Bad input"): anything validation throws is a SCHEMA report
    if (!TurnlogError.is(err)) return { invariant: 'SCHEMA', seq: position, message: `INVALID_EVENT: ${String(err)}` }
    return defectViolation(err, position)
  }
  const r = raw as { data: unknown; surfaceOp?: unknown; sourceEventSeqs?: unknown }
  for (const [value, path] of [[r.data, 'data'], [r.surfaceOp, 'surfaceOp'], [r.sourceEventSeqs, 'sourceEventSeqs']] as const) {
    if (value === undefined) continue
    const lossy = findLossy(value, path)
    if (lossy) {
      return { invariant: 'SCHEMA', seq: position, message: `NOT_LOSSLESS: ${lossy.why} (seq ${position}, field ${lossy.path})`, field: lossy.path }
    }
  }
  return null
}
