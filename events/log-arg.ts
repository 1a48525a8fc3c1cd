/**
 * The guard every API that takes a log in memory reads its argument through: `{ header, events }`
 * (what `readLog` returns), `{ sessionId, events }`, or the events alone. A path, a missing
 * `events`, or anything else is `INVALID_ARGUMENT` saying what the API takes and what it was given
 * (a user's mistake gets a coded error naming the parameter, never a TypeError from deep inside).
 */
import { TurnlogError } from './errors.js'
import type { LogEvent } from './envelope.js'

/** What was given, in a few words (never its contents). */
function given(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}…` : value)}`
  if (typeof value === 'object') {
    const keys = Object.keys(value as object).slice(0, 6)
    return keys.length ? `an object with ${keys.join(', ')}` : 'an empty object'
  }
  return typeof value
}

/**
 * The events of `value` (an array of events, or an object whose `events` is iterable). `api`
 * names the function (`recordedModel`), `param` its parameter.
 */
export function logEventsArg(value: unknown, api: string, param: string): Iterable<LogEvent> {
  if (typeof value === 'string') {
    throw new TurnlogError('INVALID_ARGUMENT', `${api} takes a log in memory ({ header, events }, as readLog returns it), not a path: pass await readLog(${JSON.stringify(value)})`, { field: param })
  }
  if (Array.isArray(value)) return value as LogEvent[]
  const events = typeof value === 'object' && value !== null ? (value as { events?: unknown }).events : undefined
  if (events === undefined || events === null || typeof (events as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function') {
    throw new TurnlogError('INVALID_ARGUMENT', `${api} takes a log ({ header, events }, as readLog returns it) or its events; it was given ${given(value)}`, { field: param })
  }
  return events as Iterable<LogEvent>
}

/** The session id of a log argument (`sessionId`, or `header.id`), or `INVALID_ARGUMENT`. */
export function logSessionIdArg(value: unknown, api: string, param: string): string {
  const v = value as { sessionId?: unknown; header?: { id?: unknown } } | null
  const id = typeof v?.sessionId === 'string' ? v.sessionId : typeof v?.header?.id === 'string' ? v.header.id : undefined
  if (id === undefined) {
    throw new TurnlogError('INVALID_ARGUMENT', `${api} needs the session's id: pass { header, events } (readLog's result) or { sessionId, events }; it was given ${given(value)}`, { field: param })
  }
  return id
}
