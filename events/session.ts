/**
 * The in-memory session log: assigns `seq` and `time`, validates, checks the L invariants on
 * append, freezes, commits, then tells the folds and the observers. The log is append-only: an
 * event that would break the log is refused before anything changes.
 */
import type { EventDraft, LogEvent } from './envelope.js'
import { TurnlogError } from './errors.js'
import { LogChecker } from './invariants/checker.js'
import type { CheckerOptions } from './invariants/types.js'
import { deepFreeze, findLossy } from './lossless.js'
import { defaultRegistry, type EventRegistry } from './registry.js'

export type Clock = () => number

/** Envelope members besides `data` that carry a value from the caller. */
const ENVELOPE_VALUES = ['surfaceOp', 'sourceEventSeqs'] as const
export type EventObserver = (event: LogEvent) => void

export interface SessionOptions {
  id: string
  /** Epoch milliseconds; inject a fake clock for tests and re-execution. Default `Date.now`. */
  clock?: Clock
  registry?: EventRegistry
  /** Checker options (step budget, retry maximum), or `false` to skip invariant checks. */
  check?: CheckerOptions | false
  /** Events already in the log (a resumed or forked session). They are checked, not re-validated. */
  prefix?: readonly LogEvent[]
  /** Called when an observer throws. The append stands; the error is reported here. */
  onObserverError?: (error: unknown, event: LogEvent) => void
}

export class Session {
  readonly id: string
  readonly #events: LogEvent[] = []
  readonly #clock: Clock
  readonly #registry: EventRegistry
  /** Created on the first append: an idle agent's session holds no checker state (benchmark B6). */
  #checkerState: LogChecker | null | undefined
  readonly #checkOptions: CheckerOptions | false
  readonly #folds: EventObserver[] = []
  /** Created by the first `subscribe` (benchmark B6). */
  #observers: Set<EventObserver> | null = null
  readonly #onObserverError: (error: unknown, event: LogEvent) => void
  #publishing = false
  #closed = false

  constructor(opts: SessionOptions) {
    this.id = opts.id
    this.#clock = opts.clock ?? Date.now
    this.#registry = opts.registry ?? defaultRegistry
    this.#checkOptions = opts.check ?? {}
    this.#onObserverError = opts.onObserverError ?? (() => {})
    for (const e of opts.prefix ?? []) {
      if (e.seq !== this.#events.length) {
        throw new TurnlogError('BAD_SEQ', `prefix event has seq ${e.seq}, expected ${this.#events.length}`, {
          seq: e.seq, expectedSeq: this.#events.length, sessionId: this.id,
        })
      }
      this.#checker?.apply(e)
      this.#events.push(deepFreeze(e))
    }
  }

  get #checker(): LogChecker | null {
    if (this.#checkerState === undefined) {
      this.#checkerState = this.#checkOptions === false ? null : new LogChecker(this.#checkOptions)
    }
    return this.#checkerState
  }

  /** The log so far. Frozen events; the array itself must not be mutated by callers. */
  get events(): readonly LogEvent[] {
    return this.#events
  }

  get length(): number {
    return this.#events.length
  }

  get lastEvent(): LogEvent | undefined {
    return this.#events[this.#events.length - 1]
  }

  get registry(): EventRegistry {
    return this.#registry
  }

  /**
   * Appends one event. Assigns seq and time, validates (zod), refuses lossy data, checks every L
   * invariant against the prefix, freezes and commits; then runs the folds and the observers.
   * Throws a coded error and changes nothing when the event is refused.
   */
  append(draft: EventDraft | { type: string; data: unknown; ignorable?: true }): LogEvent {
    if (this.#closed) throw new TurnlogError('SESSION_CLOSED', 'the session is closed for appends', { sessionId: this.id })
    if (this.#publishing) {
      throw new TurnlogError('REENTRANT_APPEND', 'an observer tried to append while an event was being published', {
        sessionId: this.id, eventType: draft.type,
      })
    }
    const seq = this.#events.length
    const raw = { seq, time: this.#clock(), ...draft } as Record<string, unknown>
    const lossy = findLossy(raw.data)
    if (lossy) {
      throw new TurnlogError('NOT_LOSSLESS', lossy.why, { seq, field: lossy.path, eventType: draft.type, sessionId: this.id })
    }
    for (let i = 0; i < ENVELOPE_VALUES.length; i++) {
      const k = ENVELOPE_VALUES[i]!
      const l = raw[k] === undefined ? null : findLossy(raw[k], k)
      if (l) throw new TurnlogError('NOT_LOSSLESS', l.why, { seq, field: l.path, eventType: draft.type, sessionId: this.id })
    }
    // Drop members a caller spelled as undefined, so the committed event round-trips exactly.
    for (const k in raw) if (raw[k] === undefined) delete raw[k]
    const event = this.#registry.validate(raw, { sessionId: this.id })
    const checker = this.#checker
    if (checker) {
      const v = checker.check(event)
      if (v.length > 0) {
        const first = v[0]!
        throw new TurnlogError('INVARIANT', first.message, {
          seq, invariant: first.invariant, eventType: event.type, sessionId: this.id,
          info: { violations: v },
        })
      }
      checker.apply(event)
    }
    this.#events.push(deepFreeze(event))
    this.#publish(event)
    return event
  }

  /** Internal folds run before observers, in registration order; a throwing fold is a bug and propagates. */
  addFold(fold: EventObserver): void {
    this.#folds.push(fold)
  }

  /** Calls `observer` with each event committed from now on. Returns an unsubscribe function. */
  subscribe(observer: EventObserver): () => void {
    const observers = (this.#observers ??= new Set())
    observers.add(observer)
    return () => observers.delete(observer)
  }

  /** Refuses further appends (dispose). */
  close(): void {
    this.#closed = true
  }

  #publish(event: LogEvent): void {
    this.#publishing = true
    try {
      for (const f of this.#folds) f(event)
      if (this.#observers !== null) for (const o of this.#observers) {
        try {
          o(event)
        } catch (err) {
          this.#onObserverError(err, event)
        }
      }
    } finally {
      this.#publishing = false
    }
  }
}
