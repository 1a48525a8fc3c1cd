/**
 * The session as a Chrome trace (the Trace Event Format read by Perfetto and chrome://tracing):
 * the inspector's timeline (replay/timeline.ts) with real times: one thread for turns, one for
 * steps, one for model streams, one for compactions, one for parked times (docs/spec/lifecycle.md §9), one per
 * tool-pool lane; approval requests and decisions, wakeups, child sessions, retries, cancels,
 * failures, repairs, prunes and verify violations as instant events. Every event carries its seq
 * range in `args`. Times are the log's (µs since the session's earliest event); a bar whose end
 * event's time is before its start's (a clock that stepped back) lasts 0, like its span.
 */
import type { LogEvent } from '../../events/envelope.js'
import type { Violation } from '../../events/invariants/types.js'
import { buildTimeline, type Row } from '../../replay/timeline.js'

export interface TraceEvent {
  name: string
  /** complete, instant, metadata, flow start, flow end */
  ph: 'X' | 'i' | 'M' | 's' | 'f'
  pid: number
  tid: number
  ts?: number
  dur?: number
  cat?: string
  s?: 'g' | 'p' | 't'
  /** flow events: the flow's id, and `e` (bind to the enclosing slice) on its end */
  id?: number
  bp?: 'e'
  args?: Record<string, unknown>
}

const TIDS: Record<string, number> = { turn: 1, step: 2, model: 3, compaction: 4, marks: 5, parked: 6 }

export function tidOf(row: Row): number {
  return row.startsWith('tool') ? 10 + Number(row.slice(4)) : TIDS[row]!
}

/** The trace as a JSON-serialisable object `{ traceEvents, displayTimeUnit, otherData }`; `agentName` prefixes the process name. */
export function chromeTrace(events: readonly LogEvent[], sessionId: string, violations: readonly Violation[] = [], agentName?: string): {
  traceEvents: TraceEvent[]; displayTimeUnit: 'ms'; otherData: Record<string, unknown>
} {
  const t0 = earliestTime(events)
  const { traceEvents } = sessionTrace(events, violations, { pid: 1, t0, processName: `${agentName !== undefined ? `${agentName} · ` : ''}turnlog session ${sessionId}` })
  return { traceEvents, displayTimeUnit: 'ms', otherData: { sessionId, events: events.length, startTime: t0 } }
}

/**
 * t0 is the earliest time, not the first event's: a log whose clock stepped back still gives no
 * time before the trace's start; a bar's end is clamped to its start, as the span fold does.
 */
export function earliestTime(events: readonly LogEvent[], start = events.length ? Number(events[0]!.time) : 0): number {
  let t0 = start
  for (const e of events) if (Number(e.time) < t0) t0 = Number(e.time)
  return t0
}

/**
 * One session's trace events as process `pid`, times in µs since `t0` (a family shares one `t0`);
 * with the tool bars (their call's `tool/call` seq → thread and start) for the family's flows.
 */
export function sessionTrace(events: readonly LogEvent[], violations: readonly Violation[], at: { pid: number; t0: number; processName: string; sortIndex?: number }): {
  traceEvents: TraceEvent[]; toolBars: Map<number, { tid: number; ts: number }>; firstTurnTs: number | undefined; us: (seq: number) => number
} {
  const tl = buildTimeline(events, violations)
  const { pid, t0 } = at
  const us = (seq: number): number => Math.round((Number(events[seq]!.time) - t0) * 1000)
  const out: TraceEvent[] = [
    { name: 'process_name', ph: 'M', pid, tid: 0, args: { name: at.processName } },
    ...(at.sortIndex !== undefined ? [{ name: 'process_sort_index', ph: 'M' as const, pid, tid: 0, args: { sort_index: at.sortIndex } }] : []),
  ]
  const toolBars = new Map<number, { tid: number; ts: number }>()
  let firstTurnTs: number | undefined
  const names: Record<number, string> = { 1: 'turns', 2: 'steps', 3: 'model streams', 4: 'compactions', 5: 'marks', 6: 'parked (waiting for people)' }
  for (let l = 0; l < tl.lanes; l++) names[10 + l] = `tools · lane ${l + 1}`
  for (const [tid, name] of Object.entries(names)) {
    out.push({ name: 'thread_name', ph: 'M', pid, tid: Number(tid), args: { name } })
    out.push({ name: 'thread_sort_index', ph: 'M', pid, tid: Number(tid), args: { sort_index: Number(tid) } })
  }
  for (const b of tl.bars) {
    const ts = us(b.seq)
    const tid = tidOf(b.row)
    if (b.kind === 'tool') toolBars.set(b.seq, { tid, ts })
    if (b.kind === 'turn' && firstTurnTs === undefined) firstTurnTs = ts
    out.push({
      name: b.label, ph: 'X', pid, tid, ts, dur: Math.max(0, us(b.endSeq) - ts), cat: b.kind,
      args: { seq: b.seq, endSeq: b.endSeq, status: b.status },
    })
  }
  for (const m of tl.marks) {
    if (m.kind === 'gap') continue
    out.push({ name: m.label, ph: 'i', s: 't', pid, tid: 5, ts: us(m.seq), cat: m.kind, args: { seq: m.seq } })
  }
  return { traceEvents: out, toolBars, firstTurnTs, us }
}
