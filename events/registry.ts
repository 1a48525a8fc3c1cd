/**
 * The event-type registry: the core vocabulary plus plugin types. Validation goes through a map
 * lookup per type, not a union parse, because replay validates every event of a million-event log.
 *
 * Speed (benchmark B1): the verdict comes from zod's own compiled validators — `z.compile(schema)`
 * (zod ≥ 4.5: the same schema compiled to a flat function, same accepted set) and `.validate()`
 * (zod ≥ 4.6: a boolean, no output copy, no error built). A `safeParse` copies every nested object
 * of every event, which was most of replay's validation time and garbage. Only a refused event
 * goes through `safeParse` of the schema as written, which decides and names the field.
 */
import { z } from 'zod'
import { EVENT_DATA, SURFACE_TYPES } from './data.js'
import { Envelope, type LogEvent } from './envelope.js'
import { TurnlogError, type ErrorDetails } from './errors.js'

export interface EventTypeSpec {
  /** The zod schema of the event's `data`. */
  data: z.ZodType
  /** True for types that carry `surfaceOp` (only core types may). */
  surface?: boolean
}

/** Compiled clones, per schema object (shared by every registry that holds the schema). */
const COMPILED = new WeakMap<z.ZodType, z.ZodType>()

/** The compiled clone of `schema` (compiled on first use; zod hands back the schema itself when it
 * cannot compile it, which then validates on zod's runtime parser). */
function compiled(schema: z.ZodType): z.ZodType {
  let c = COMPILED.get(schema)
  if (c === undefined) {
    c = z.compile(schema)
    COMPILED.set(schema, c)
  }
  return c
}

let envelopeCheck: z.ZodType | undefined

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
   * Whether `raw` is a valid event (envelope and data; an unknown type only when `ignorable`): the
   * verdict of `validate`, without building an error or a copy of the event. Call `validate` for
   * the error when this says false.
   */
  isValid(raw: unknown): raw is LogEvent {
    if (!(envelopeCheck ??= compiled(Envelope)).validate(raw)) return false
    const e = raw as LogEvent
    const spec = this.#types.get(e.type)
    if (spec === undefined) return e.ignorable === true
    return compiled(spec.data).validate(e.data)
  }

  /**
   * Validates one event (envelope and data) and returns it typed. Throws `INVALID_EVENT` naming the
   * field, or `UNKNOWN_EVENT_TYPE` for a type nobody registered unless the event is `ignorable`.
   * `where` adds the place (file, line) to the error.
   */
  validate(raw: unknown, where: ErrorDetails = {}): LogEvent {
    if (this.isValid(raw)) return raw
    // refused: the runtime parser of the schemas as written decides and names the field
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
