/**
 * `verify`: checks a stored log (its events, the header already stripped) against the event schemas
 * and every L invariant, and reports all violations in log order. It never stops at the first one:
 * an event that fails validation is reported as `SCHEMA` and skipped by the checker (its position
 * still counts for L1); an event that breaks an invariant is applied anyway (best effort).
 */
import { TurnlogError } from '../events/errors.js'
import { LogChecker } from '../events/invariants/checker.js'
import type { CheckerOptions, Violation } from '../events/invariants/types.js'
import { findLossy } from '../events/lossless.js'
import { defaultRegistry, type EventRegistry } from '../events/registry.js'

export interface VerifyOptions extends CheckerOptions {
  /** The registry that validates each event (plugin types). Default: the core vocabulary. */
  registry?: EventRegistry
}

export interface VerifyResult {
  /** True when no event failed validation and no invariant was broken. */
  ok: boolean
  /** Every violation, in log order; within one event, by invariant id. */
  violations: Violation[]
}

export function verify(events: readonly unknown[], opts: VerifyOptions = {}): VerifyResult {
  const registry = opts.registry ?? defaultRegistry
  const checker = new LogChecker(opts)
  const violations: Violation[] = []
  for (let i = 0; i < events.length; i++) {
    const raw = events[i]
    const schema = schemaFailure(raw, i, registry)
    if (schema !== null) {
      violations.push(schema)
      const seq = (raw as { seq?: unknown } | null)?.seq
      if (typeof seq === 'number' && seq !== i) {
        violations.push({ invariant: 'L1', seq: i, message: `seq ${seq} at position ${i}` })
      }
      checker.skip()
      continue
    }
    const e = raw as Parameters<LogChecker['check']>[0]
    violations.push(...checker.check(e))
    checker.apply(e)
  }
  return { ok: violations.length === 0, violations }
}

/** The event's schema failure (zod, unknown type, lossy data) as a `SCHEMA` violation, or null. */
function schemaFailure(raw: unknown, position: number, registry: EventRegistry): Violation | null {
  try {
    registry.validate(raw, { seq: position })
  } catch (err) {
    // verify never throws on bad input (quality.md): anything validation throws is a SCHEMA report
    if (!TurnlogError.is(err)) return { invariant: 'SCHEMA', seq: position, message: `INVALID_EVENT: ${String(err)}` }
    const v: Violation = { invariant: 'SCHEMA', seq: position, message: err.message }
    if (err.field !== undefined) v.field = err.field
    return v
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
