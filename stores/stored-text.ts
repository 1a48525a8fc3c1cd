/**
 * What the database stores (PostgreSQL, SQLite) read back from their rows: a session's header text
 * and one event's JSON text, each validated (a database is not trusted more than a file), and
 * their positive numeric options. Shared so that both stores refuse the same things with the same
 * codes.
 */
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import { LogHeader } from '../events/jsonl.js'
import type { EventRegistry } from '../events/registry.js'

/** A stored header: `INVALID_HEADER` naming the field when it is not JSON or not a header. */
export function parseStoredHeader(id: string, text: string): LogHeader {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    throw new TurnlogError('INVALID_HEADER', 'the stored header is not JSON', { sessionId: id, field: 'header' })
  }
  const r = LogHeader.safeParse(raw)
  if (!r.success) {
    const issue = r.error.issues[0]!
    throw new TurnlogError('INVALID_HEADER', issue.message, { sessionId: id, field: issue.path.join('.') || 'header' })
  }
  return r.data
}

/** One stored event, validated: `MALFORMED_LINE` when not JSON, `BAD_SEQ` when it names another seq. */
export function decodeStoredEvent(registry: EventRegistry, id: string, text: string, seq: number): LogEvent {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    throw new TurnlogError('MALFORMED_LINE', 'a stored event is not JSON', { sessionId: id, seq })
  }
  const e = registry.validate(raw, { sessionId: id, seq })
  if (e.seq !== seq) {
    throw new TurnlogError('BAD_SEQ', `the event stored at seq ${seq} says seq ${String(e.seq)}`, { sessionId: id, seq, field: 'seq' })
  }
  return e
}

/** A positive finite number option, or its default: `INVALID_OPTION` naming it otherwise. */
export function positiveOption(v: unknown, dflt: number, field: string): number {
  if (v === undefined) return dflt
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new TurnlogError('INVALID_OPTION', `${field} must be a positive number`, { field })
  }
  return v
}
