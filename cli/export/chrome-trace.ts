/**
 * The session as a Chrome trace (the Trace Event Format read by Perfetto and chrome://tracing):
 * the inspector's timeline (replay/timeline.ts) with real times: one thread for turns, one for
 * steps, one for model streams, one for compactions, one for parked times (lifecycle §9), one per
 * tool-pool lane; approval requests and decisions, wakeups, child sessions, retries, cancels,
 * failures, repairs, prunes and verify violations as instant events. Every event carries its seq
 * range in `args`. Times are the log's (µs since the session's earliest event); a bar whose end
 * event's time is before its start's (a clock that stepped back) lasts 0, like its span.
 */
import type { LogEvent } from '../../events/envelope.js'
import type { Violation } from '../../events/invariants/types.js'
import { buildTimeline, type Row } from '../../replay/timeline.js'

interface TraceEvent {
  name: string
  ph: 'X' | 'i' | 'M'
  pid: number
  tid: number
  ts?: number
  dur?: number
  cat?: string
  s?: 'g' | 'p' | 't'
  args?: Record<string, unknown>
}

const TIDS: Record<string, number> = { turn: 1, step: 2, model: 3, compaction: 4, marks: 5, parked: 6 }

function tidOf(row: Row): number {
  return row.startsWith('tool') ? 10 + Number(row.slice(4)) : TIDS[row]!
}

/** The trace as a JSON-serialisable object `{ traceEvents, displayTimeUnit, otherData }`; `agentName` prefixes the process name. */
export function chromeTrace(events: readonly LogEvent[], sessionId: string, violations: readonly Violation[] = [], agentName?: string): {
  traceEvents: TraceEvent[]; displayTimeUnit: 'ms'; otherData: Record<string, unknown>
} {
  const tl = buildTimeline(events, violations)
  // t0 is the earliest time, not the first event's: a log whose clock stepped back still gives no
  // time before the trace's start; a bar's end is clamped to its start, as the span fold does
  let t0 = events.length ? Number(events[0]!.time) : 0
  for (const e of events) if (Number(e.time) < t0) t0 = Number(e.time)
  const us = (seq: number): number => Math.round((Number(events[seq]!.time) - t0) * 1000)
  const out: TraceEvent[] = [
    { name: 'process_name', ph: 'M', pid: 1, tid: 0, args: { name: `${agentName !== undefined ? `${agentName} · ` : ''}turnlog session ${sessionId}` } },
  ]
  const names: Record<number, string> = { 1: 'turns', 2: 'steps', 3: 'model streams', 4: 'compactions', 5: 'marks', 6: 'parked (waiting for people)' }
  for (let l = 0; l < tl.lanes; l++) names[10 + l] = `tools · lane ${l + 1}`
  for (const [tid, name] of Object.entries(names)) {
    out.push({ name: 'thread_name', ph: 'M', pid: 1, tid: Number(tid), args: { name } })
    out.push({ name: 'thread_sort_index', ph: 'M', pid: 1, tid: Number(tid), args: { sort_index: Number(tid) } })
  }
  for (const b of tl.bars) {
    const ts = us(b.seq)
    out.push({
      name: b.label, ph: 'X', pid: 1, tid: tidOf(b.row), ts, dur: Math.max(0, us(b.endSeq) - ts), cat: b.kind,
      args: { seq: b.seq, endSeq: b.endSeq, status: b.status },
    })
  }
  for (const m of tl.marks) {
    if (m.kind === 'gap') continue
    out.push({ name: m.label, ph: 'i', s: 't', pid: 1, tid: 5, ts: us(m.seq), cat: m.kind, args: { seq: m.seq } })
  }
  return { traceEvents: out, displayTimeUnit: 'ms', otherData: { sessionId, events: events.length, startTime: t0 } }
}
