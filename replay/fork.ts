/**
 * `fork(log, seq)`: a new session that starts from a prefix of another (lifecycle "Deliberate
 * choices" 5, P6).
 *
 * The fork's log is: the parent's events `0..seq` verbatim; the synthetic closers of `closers.ts`
 * with reason `forked` for whatever is open at `seq`; one canceled splice per non-empty inbox
 * list (next-step first, then next-turn: what `inbox.clear()` writes), so the fork's own log folds
 * to an empty inbox while every inserted message stays accounted for (L11); then
 * `session/end-seed`. Turn numbering continues (the next turn is the prefix's last + 1).
 *
 * The header names the parent (`parent: {session, seq}`) and `inheritedEventCount` = `seq + 1`,
 * the number of events copied verbatim from the parent.
 */
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import type { CheckerOptions } from '../events/invariants/types.js'
import { JSONL_FORMAT, type LogHeader } from '../events/jsonl.js'
import { inboxReducer } from '../reducers/inbox.js'
import { closerStateOf, closersFor } from './closers.js'
import { verify } from './verify.js'

export interface ForkOptions extends CheckerOptions {
  /** The fork's session id. Default a random UUID. */
  sessionId?: string
  /** The fork's `createdAt`. Default `Date.now()`. */
  createdAt?: number
  /** Check the prefix and the fork with `verify` (default true): a prefix that breaks an L
   * invariant is refused with `INVARIANT`. */
  check?: boolean
}

export interface ForkResult {
  header: LogHeader
  events: LogEvent[]
  /** The synthetic events after the prefix (closers, inbox cancels, `session/end-seed`). */
  closers: LogEvent[]
}

/** Forks `log` (a `{header, events}` or a bare event list) at `seq` (inclusive). Pure: writes nothing. */
export function fork(
  log: { header?: LogHeader; events: readonly LogEvent[] } | readonly LogEvent[],
  seq: number,
  opts: ForkOptions = {},
): ForkResult {
  const events: readonly LogEvent[] = Array.isArray(log) ? (log as readonly LogEvent[]) : (log as { events: readonly LogEvent[] }).events
  const parentHeader = Array.isArray(log) ? undefined : (log as { header?: LogHeader }).header
  if (!Number.isInteger(seq) || seq < 0 || seq >= events.length) {
    throw new TurnlogError('INVALID_ARGUMENT', `cannot fork at seq ${String(seq)}: ${events.length === 0 ? 'the log is empty' : `the log has seqs 0..${events.length - 1}`}`, {
      field: 'seq', ...(typeof seq === 'number' && Number.isFinite(seq) ? { seq } : {}),
    })
  }
  const prefix = events.slice(0, seq + 1)
  const checker: CheckerOptions = {
    ...(opts.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: opts.maxStepsPerTurn } : {}),
    ...(opts.maxRetries !== undefined ? { maxRetries: opts.maxRetries } : {}),
  }
  const check = opts.check ?? true
  if (check) {
    const v = verify(prefix, checker)
    if (!v.ok) {
      const first = v.violations[0]!
      throw new TurnlogError('INVARIANT', `cannot fork a log that breaks an invariant: ${first.message}`, {
        seq: first.seq, invariant: first.invariant, info: { violations: v.violations.slice(0, 5) },
      })
    }
  }
  const state = closerStateOf(prefix)
  const closers = closersFor(state, prefix, { reason: 'forked' })
  const time = prefix[prefix.length - 1]!.time
  // The fork starts with an empty inbox: cancel what is pending, as `clear()` would.
  const inbox = inboxReducer.initial()
  // (the closers too: a firing's owed message, W3, is a splice)
  for (const e of prefix) inboxReducer.apply(inbox, e)
  for (const e of closers) inboxReducer.apply(inbox, e)
  const tail: LogEvent[] = [...closers]
  for (const [target, list] of [['next-step', inbox.nextStep], ['next-turn', inbox.nextTurn]] as const) {
    if (list.length === 0) continue
    tail.push({
      seq: prefix.length + tail.length, time, type: 'agent/inbox/spliced',
      data: { target, start: 0, removedCount: list.length, inserted: [], outcome: 'canceled' },
    } as LogEvent)
  }
  tail.push({ seq: prefix.length + tail.length, time, type: 'session/end-seed', data: {} } as LogEvent)
  const out = [...prefix, ...tail]
  if (check) {
    const v = verify(out, checker)
    if (!v.ok) {
      const first = v.violations[0]!
      throw new Error(`fork produced an invalid log: ${first.invariant} at seq ${first.seq}: ${first.message}`)
    }
  }
  const header: LogHeader = {
    type: 'session',
    format: JSONL_FORMAT,
    id: opts.sessionId ?? globalThis.crypto.randomUUID(),
    createdAt: opts.createdAt ?? Date.now(),
    parent: { session: parentHeader?.id ?? 'unknown', seq },
    inheritedEventCount: seq + 1,
  }
  return { header, events: out, closers: tail }
}
