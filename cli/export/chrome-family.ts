/**
 * A parent session and its child sessions (docs/spec/lifecycle.md §10) as one Chrome trace
 * (`turnlog export LOG --format chrome-trace --children`): each session is a process of its own
 * (the parent pid 1, its children after it in spawn order, depth first, sorted so), named for its
 * call (`child S · call C of P`), all on one time base (µs since the family's earliest event), so a
 * child's turns stand under the parent's call in time; a flow arrow runs from the spawning call's
 * tool bar to the child's first turn. Each session's bars and marks are `sessionTrace`'s.
 */
import type { LogEvent } from '../../events/envelope.js'
import { verify } from '../../replay/verify.js'
import type { ChildLogs } from '../family.js'
import { earliestTime, sessionTrace, type TraceEvent } from './chrome-trace.js'

/** The family's trace: `{ traceEvents, displayTimeUnit, otherData: { sessionId, events, startTime, sessions: [{pid, sessionId, parent?, callId?}] } }`. */
export function chromeTraceFamily(root: { sessionId: string; events: readonly LogEvent[]; children: readonly ChildLogs[] }, agentName?: string): {
  traceEvents: TraceEvent[]; displayTimeUnit: 'ms'; otherData: Record<string, unknown>
} {
  // the family's earliest time
  let t0 = earliestTime(root.events)
  const walkTimes = (cs: readonly ChildLogs[]): void => {
    for (const c of cs) {
      if (c.tree.events.length > 0) t0 = earliestTime(c.tree.events, Math.min(t0, Number(c.tree.events[0]!.time)))
      walkTimes(c.tree.children)
    }
  }
  walkTimes(root.children)
  const out: TraceEvent[] = []
  const sessions: Array<{ pid: number; sessionId: string; parent?: string; callId?: string }> = []
  let nextPid = 1
  let flow = 0
  const add = (sessionId: string, events: readonly LogEvent[], children: readonly ChildLogs[], processName: string, link?: { parent: string; callId: string }): { pid: number; firstTurnTs: number | undefined } => {
    const pid = nextPid++
    sessions.push({ pid, sessionId, ...(link !== undefined ? link : {}) })
    const s = sessionTrace(events, verify(events).violations, { pid, t0, processName, sortIndex: pid })
    out.push(...s.traceEvents)
    for (const c of children) {
      const child = add(c.tree.sessionId, c.tree.events, c.tree.children, `child ${c.tree.sessionId} · call ${c.callId} of ${sessionId}`, { parent: sessionId, callId: c.callId })
      // the arrow: from the spawning call's bar (at its child/spawned) to the child's first turn
      const spawned = events.find((e) => e.type === 'child/spawned' && (e.data as { child?: unknown }).child === c.tree.sessionId)
      const call = spawned === undefined ? undefined : events.find((e) => e.type === 'tool/call' && (e.data as { callId?: unknown }).callId === c.callId && e.seq < spawned.seq)
      const bar = call === undefined ? undefined : s.toolBars.get(call.seq)
      if (spawned === undefined || bar === undefined || child.firstTurnTs === undefined) continue
      const id = ++flow
      out.push({ name: 'child session', cat: 'child', ph: 's', id, pid, tid: bar.tid, ts: s.us(spawned.seq), args: { child: c.tree.sessionId, callId: c.callId } })
      out.push({ name: 'child session', cat: 'child', ph: 'f', bp: 'e', id, pid: child.pid, tid: 1, ts: child.firstTurnTs })
    }
    return { pid, firstTurnTs: s.firstTurnTs }
  }
  add(root.sessionId, root.events, root.children, `${agentName !== undefined ? `${agentName} · ` : ''}turnlog session ${root.sessionId}`)
  return { traceEvents: out, displayTimeUnit: 'ms', otherData: { sessionId: root.sessionId, events: root.events.length, startTime: t0, sessions } }
}
