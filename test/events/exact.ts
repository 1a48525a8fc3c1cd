/**
 * Exact verdicts of the LogChecker (issue 15 part 3): what one more event would break after a
 * writer's log, as the full list of violations (invariant, seq and message). The messages are
 * behaviour — `turnlog verify` prints them — so the tests built on this helper assert them whole,
 * and assert that the nearest valid event breaks nothing.
 */
import { expect } from 'vitest'
import type { EventDraft, LogEvent } from '../../events/envelope.js'
import { LogChecker } from '../../events/invariants/checker.js'
import type { CheckerOptions, Violation } from '../../events/invariants/types.js'
import { defaultRegistry } from '../../events/registry.js'
import type { LogWriter } from './log-writer.js'

/** A checker that has applied every event of `events` (whatever they break). */
export function checkerAfter(events: readonly LogEvent[], opts: CheckerOptions = {}): LogChecker {
  const c = new LogChecker(opts)
  for (const e of events) c.apply(e)
  return c
}

/** The draft as the event at position `seq`, schema-validated (the checker only promises schema-valid input). */
export function at(seq: number, draft: EventDraft): LogEvent {
  return defaultRegistry.validate({ seq, time: 0, ...draft })
}

/** Every violation `draft` would give as the next event after the writer's log. */
export function verdict(w: LogWriter, draft: EventDraft, opts: CheckerOptions = {}): Violation[] {
  return checkerAfter(w.session.events, opts).check(at(w.next, draft))
}

/** Expects exactly these [invariant, message] pairs (in this order) at the writer's next seq. */
export function expectExactly(w: LogWriter, draft: EventDraft, expected: Array<[string, string]>, opts: CheckerOptions = {}): void {
  const seq = w.next
  expect(verdict(w, draft, opts)).toEqual(expected.map(([invariant, message]) => ({ invariant, seq, message })))
}

/** Expects no violation for `draft` after the writer's log. */
export function expectClean(w: LogWriter, draft: EventDraft, opts: CheckerOptions = {}): void {
  expect(verdict(w, draft, opts)).toEqual([])
}

/**
 * Appends drafts to the writer's log WITHOUT the session's check (a broken event the checker must
 * still apply, best effort, as `verify` does), and returns the events. Seqs are positions.
 */
export function forced(events: readonly LogEvent[], ...drafts: EventDraft[]): LogEvent[] {
  const out = [...events]
  for (const d of drafts) out.push(at(out.length, d))
  return out
}

/** Exactly these [invariant, message] pairs for `draft` after `events` (applied best effort). */
export function expectAfter(events: readonly LogEvent[], draft: EventDraft, expected: Array<[string, string]>, opts: CheckerOptions = {}): void {
  const seq = events.length
  expect(checkerAfter(events, opts).check(at(seq, draft))).toEqual(expected.map(([invariant, message]) => ({ invariant, seq, message })))
}
