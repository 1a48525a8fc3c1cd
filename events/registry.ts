/**
 * The event-type registry: the core vocabulary plus plugin types. Validation goes through a map
 * lookup per type, not a union parse, because replay validates every event of a million-event log.
 */
import type { z } from 'zod'
import { EVENT_DATA, SURFACE_TYPES } from './data.js'
import { Envelope, type LogEvent } from './envelope.js'
import { TurnlogError, type ErrorDetails } from './errors.js'

export interface EventTypeSpec {
  /** The zod schema of the event's `data`. */
  data: z.ZodType
  /** True for types that carry `surfaceOp` (only core types may). */
  surface?: boolean
}

export class EventRegistry {
  readonly #types = new Map<string, EventTypeSpec>()

  constructor(withCore = true) {
    if (withCore) {
      for (const [type, data] of Object.entries(EVENT_DATA)) {
        this.#types.set(type, { data, surface: SURFACE_TYPES.has(type) })
      }
    }
  }

  /** Registers a plugin event type. Core types and already registered types cannot be replaced. */
  register(type: string, spec: EventTypeSpec): this {
    if (this.#types.has(type)) {
      throw new TurnlogError('DUPLICATE_EVENT_TYPE', `event type ${type} is already registered`, { eventType: type })
    }
    this.#types.set(type, { data: spec.data, surface: false })
    return this
  }

  has(type: string): boolean {
    return this.#types.has(type)
  }

  get(type: string): EventTypeSpec | undefined {
    return this.#types.get(type)
  }

  /** A copy that can take more registrations without touching this one. */
  extend(): EventRegistry {
    const r = new EventRegistry(false)
    for (const [k, v] of this.#types) r.#types.set(k, v)
    return r
  }

  /**
   * Validates one event (envelope and data) and returns it typed. Throws `INVALID_EVENT` naming the
   * field, or `UNKNOWN_EVENT_TYPE` for a type nobody registered unless the event is `ignorable`.
   * `where` adds the place (file, line) to the error.
   */
  validate(raw: unknown, where: ErrorDetails = {}): LogEvent {
    const env = Envelope.safeParse(raw)
    const seq = typeof (raw as { seq?: unknown })?.seq === 'number' ? (raw as { seq: number }).seq : undefined
    if (!env.success) throw invalid(env.error, '', { ...where, seq })
    const e = raw as LogEvent
    const spec = this.#types.get(e.type)
    if (!spec) {
      if (e.ignorable === true) return e
      throw new TurnlogError('UNKNOWN_EVENT_TYPE', `unknown event type ${JSON.stringify(e.type)}`, {
        ...where, seq: e.seq, field: 'type', eventType: e.type,
      })
    }
    const data = spec.data.safeParse(e.data)
    if (!data.success) throw invalid(data.error, 'data', { ...where, seq: e.seq, eventType: e.type })
    return e
  }
}

function invalid(err: z.ZodError, prefix: string, where: ErrorDetails): TurnlogError {
  const issue = err.issues[0]!
  const path = [prefix, ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))]
    .filter(Boolean)
    .join('.')
    .replace(/\.\[/g, '[')
  return new TurnlogError('INVALID_EVENT', issue.message, {
    ...where,
    field: path || undefined,
    info: { issues: err.issues.map((i) => ({ path: i.path.map(String), message: i.message, code: i.code })) },
  })
}

/** The registry with the core vocabulary only. Extend it (`defaultRegistry.extend()`) to add types. */
export const defaultRegistry = new EventRegistry()
