/**
 * Loading a golden and resolving `from`: where the recorded prefix ends (`cut`: the `turn/start`
 * of the first live turn), which steps of that turn are still served as recorded, and where the
 * live part of the golden begins (`liveSeq`: the first event the change under test may alter).
 * Pure reading, apart from `loadGolden` reading a file.
 */
import type { EventOf, LogEvent } from '../events/index.js'
import { TurnlogError } from '../events/errors.js'
import type { LogHeader } from '../events/jsonl.js'
import { readLog } from '../replay/read-log.js'
import type { Golden, GoldenInput, RerunFrom, StepAt } from './types.js'

/** Reads a golden (a JSONL path, `{header, events}` or an event list). Coded errors from `readLog`. */
export async function loadGolden(input: GoldenInput): Promise<Golden> {
  if (typeof input === 'string') {
    const r = await readLog(input)
    return { header: r.header, events: r.events, path: input }
  }
  const events: readonly LogEvent[] = Array.isArray(input) ? input as readonly LogEvent[] : (input as { events: readonly LogEvent[] }).events
  if (!Array.isArray(events)) throw new TurnlogError('INVALID_ARGUMENT', 'a golden is a JSONL path, {header, events} or an event list', { field: 'golden' })
  const header: LogHeader = (!Array.isArray(input) && (input as { header?: LogHeader }).header) ||
    { type: 'session', format: 1, id: 'golden', createdAt: events[0]?.time ?? 0 }
  return { header, events }
}

/** Where a re-run goes live in a golden. */
export interface LivePlan {
  /** The golden's events `0..cut-1` are the new log's prefix, verbatim. */
  cut: number
  /** The first live turn (its `turn/start` is at `cut`). */
  turn: number
  /** The first step run with the change under test: steps of the live turns before it are served as recorded. */
  live: StepAt
  /** The golden seq of the first live step's `step/start` (else of the live turn's end / the golden's end). */
  liveSeq: number
}

function turnStarts(events: readonly LogEvent[]): Map<number, EventOf<'turn/start'>> {
  const m = new Map<number, EventOf<'turn/start'>>()
  for (const e of events) if (e.type === 'turn/start') m.set((e as EventOf<'turn/start'>).data.turn, e as EventOf<'turn/start'>)
  return m
}

/** Resolves `from` (default: the first turn) against the golden's events. `INVALID_OPTION` names the field. */
export function planLive(events: readonly LogEvent[], from: RerunFrom | undefined): LivePlan {
  const starts = turnStarts(events)
  if (starts.size === 0) throw new TurnlogError('INVALID_OPTION', 'the golden has no turn to re-run', { field: 'golden' })
  let turn: number
  let step = 1
  if (from === undefined) turn = Math.min(...starts.keys())
  else if ('seq' in from) {
    const at = locate(events, from.seq)
    if (at === null) {
      throw new TurnlogError('INVALID_OPTION', `from.seq ${from.seq}: no turn starts at or after it (the golden has ${events.length} events)`, { field: 'from.seq', seq: from.seq })
    }
    ;({ turn, step } = at)
  } else {
    turn = from.turn
    step = from.step ?? 1
    if (!starts.has(turn)) throw new TurnlogError('INVALID_OPTION', `from.turn ${turn}: the golden has no such turn (turns ${[...starts.keys()].join(', ')})`, { field: 'from.turn' })
    if (!Number.isInteger(step) || step < 1) throw new TurnlogError('INVALID_OPTION', `from.step must be an integer >= 1, got ${step}`, { field: 'from.step' })
  }
  // A retry or resume turn cannot be opened on its own: the re-run starts at the first turn of its
  // chain, whose steps before `from` are served as recorded (a recorded failure fails again and
  // the retry policy opens the retry turn).
  let first = starts.get(turn)!
  while (first.data.cause !== undefined) {
    const of = (first.data.cause as { of: number }).of
    const prev = starts.get(of)
    if (prev === undefined) break
    first = prev
  }
  const live = { turn, step }
  let liveSeq = events.length
  for (let i = first.seq; i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'step/start') {
      const d = (e as EventOf<'step/start'>).data
      if (before(live, d) === false) {
        liveSeq = i
        break
      }
    } else if (e.type === 'turn/end' && (e as EventOf<'turn/end'>).data.turn >= turn && !chainContinues(events, i)) {
      liveSeq = i
      break
    }
  }
  return { cut: first.seq, turn: first.data.turn, live, liveSeq }
}

/** The turn ending at `i` is retried (or resumed) by the next turn. */
function chainContinues(events: readonly LogEvent[], i: number): boolean {
  const n = events[i + 1]
  return n?.type === 'turn/start' && (n as EventOf<'turn/start'>).data.cause !== undefined
}

/** Is step `s` before the live step `live` (served as recorded)? */
export function before(live: StepAt, s: StepAt): boolean {
  return s.turn < live.turn || (s.turn === live.turn && s.step < live.step)
}

/** The (turn, step) open at `seq` (step 1 when no step started yet), or the next turn's start. */
function locate(events: readonly LogEvent[], seq: number): StepAt | null {
  let turn: number | null = null
  let step = 1
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'turn/start') {
      turn = (e as EventOf<'turn/start'>).data.turn
      step = 1
      if (i >= seq) return { turn, step }
    } else if (e.type === 'step/start') step = (e as EventOf<'step/start'>).data.step
    if (i === seq && turn !== null) return { turn, step }
    if (e.type === 'turn/end') turn = null
  }
  return null
}

/** The system and config of the last `request/header` before `seq`. */
export function headerBefore(events: readonly LogEvent[], seq: number): EventOf<'request/header'> | undefined {
  for (let i = Math.min(seq, events.length) - 1; i >= 0; i--) if (events[i]!.type === 'request/header') return events[i] as EventOf<'request/header'>
  return events.find((e) => e.type === 'request/header') as EventOf<'request/header'> | undefined
}

/** What of a golden's live part a re-run cannot reproduce: a turn left open at its end, turns a crash cut (repair closed them `interrupted`). */
export interface GoldenGaps {
  /** The golden ends inside this turn (its `turn/start` seq). */
  open?: { turn: number; seq: number }
  /** Turns of the live part that ended `interrupted` (their `turn/end` seq). */
  interrupted: Array<{ turn: number; seq: number }>
}

/** The gaps of `events` from `cut` on (pure). */
export function goldenGaps(events: readonly LogEvent[], cut: number): GoldenGaps {
  const out: GoldenGaps = { interrupted: [] }
  let open: { turn: number; seq: number } | undefined
  for (let i = Math.max(0, cut); i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'turn/start') open = { turn: (e as EventOf<'turn/start'>).data.turn, seq: e.seq }
    else if (e.type === 'turn/end') {
      const d = (e as EventOf<'turn/end'>).data
      if (d.reason.kind === 'interrupted') out.interrupted.push({ turn: d.turn, seq: e.seq })
      open = undefined
    }
  }
  if (open !== undefined) out.open = open
  return out
}

/** The sentence naming the interrupted turns (for a failed trial's error). */
export function interruptedText(gaps: GoldenGaps): string | undefined {
  const n = gaps.interrupted
  if (n.length === 0) return undefined
  const which = n.map((t) => `turn ${t.turn} (turn/end at seq ${t.seq})`).join(', ')
  return `the golden's ${which} ${n.length === 1 ? 'was' : 'were'} cut by a crash and closed by repair: a re-run cannot reproduce a crash, so it differs there; re-run from a later turn (from) or fork the golden before ${n.length === 1 ? 'it' : 'them'}`
}
