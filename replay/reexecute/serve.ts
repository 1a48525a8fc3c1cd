/**
 * The pump's waiting points: which model stream, summary call or tool body the next recorded
 * event releases; hook gates; and what the agent waits on when nothing can be released (stalls).
 */
import type { EventOf, LogEvent } from '../../events/index.js'
import { diverge } from './compare.js'
import { isAbortedBeforeBody, isAbortedWhileRunning, key3 } from './facts.js'
import type { Gate, Host } from './state.js'
import { askRound, settle } from './tools.js'
import { CHILD_HOST } from '../../tools/types.js'

export function stalled(rx: Host, next: LogEvent | null): void {
  const seq = rx.len
  if (rx.agent.status === 'idle' && rx.gates.length === 0 && !rx.maintaining && next !== null) {
    diverge(rx, { seq, expected: next, actual: null, kind: 'missing', waiting: 'is idle' })
    return
  }
  const waiting = describeWaiting(rx)
  rx.stall = setTimeout(() => {
    if (rx.done || rx.len !== seq) return
    diverge(rx, { seq, expected: next, actual: null, kind: next === null ? 'extra' : 'missing', waiting })
  }, rx.opts.stallMs ?? 2000)
}

export function describeWaiting(rx: Host): string {
  const parts: string[] = []
  for (const s of rx.streams) {
    if (!s.waiter) continue
    if (s.compaction !== undefined) parts.push(`waits for the summary of compaction ${s.compaction?.id ?? '?'}`)
    else parts.push(`waits for the model (turn ${s.rec?.turn ?? '?'} step ${s.rec?.step ?? '?'})`)
  }
  for (const b of rx.bodies.values()) if (!b.settled) parts.push(`waits for tool call ${b.key}`)
  for (const g of rx.gates) parts.push(`waits ${g.kind === 'sleep' ? 'in a retry sleep' : `${g.kind} hook ${g.hook}`}`)
  return parts.length ? parts.join(', ') : 'waits on something outside the re-execution (a hook?)'
}

export function release(rx: Host, g: Gate): void {
  const i = rx.gates.indexOf(g)
  if (i >= 0) rx.gates.splice(i, 1)
  g.release()
}

/** Releases hook after-gates and sleeps (never blocked by anything but a pending tool cancel). */
export function releaseSafe(rx: Host): boolean {
  const safe = rx.gates.filter((g) => g.kind !== 'before' && mayPass(rx, g))
  for (const g of safe) release(rx, g)
  return safe.length > 0
}

/** While a cancel inside the tool phase is pending, calls that the cancel stopped before their body
 * must not get through `tools/pre-execute`. */
export function mayPass(rx: Host, g: Gate): boolean {
  if (g.hook !== 'tools/pre-execute' || g.callKey === undefined) return true
  const turn = rx.agent.lifecycle.openTurn
  if (turn === null || rx.aborted()) return true
  const result = rx.stepRec()?.results.get(g.callKey)
  return !(result && isAbortedBeforeBody(result))
}

/**
 * When the next recorded event is the `tool/result` of a running body and another call's
 * `tools/pre-execute` has finished (its after-gate waits), the body settles first: the verdict
 * is released after it, as the recording ordered them (see run.ts, step 3).
 */
export function serveResultFirst(rx: Host, next: LogEvent): boolean {
  if (next.type !== 'tool/result') return false
  const d = (next as EventOf<'tool/result'>).data
  const k = key3(d.turn, d.step, d.callId)
  const b = rx.bodies.get(k)
  if (b === undefined || b.settled) return false
  const held = rx.gates.some((g) => g.kind === 'after' && g.hook === 'tools/pre-execute' && g.callKey !== undefined && g.callKey !== k)
  return held && settle(rx, b)
}

export function serve(rx: Host, next: LogEvent): boolean {
  // a compaction summary call: answered when its bracket's outcome is next
  for (const s of rx.streams) {
    if (!s.waiter || s.compaction === undefined) continue
    if ((next.type === 'compaction/summary' || next.type === 'compaction/end') &&
      (next.data as { compactionId: string }).compactionId === s.compaction?.id) {
      const w = s.waiter
      s.waiter = null
      w()
      return true
    }
  }
  // the model stream
  for (const s of rx.streams) {
    if (!s.waiter || !s.rec) continue
    const more = s.i < s.rec.chunks.length
    if (next.type === 'assistant/chunk' ? more : !more && s.rec.end.kind !== 'hang') {
      const w = s.waiter
      s.waiter = null
      w()
      return true
    }
  }
  if (next.type === 'child/spawned') {
    // a subagent call's child (docs/spec/lifecycle.md §10) is recorded input: the served body spawns it again
    // under the recorded id, through its context, while it runs
    const d = (next as EventOf<'child/spawned'>).data
    const b = rx.bodies.get(key3(d.turn, d.step, d.callId))
    const host = b?.ctx[CHILD_HOST]
    if (b !== undefined && !b.settled && host !== undefined) {
      host.spawned(d.child)
      return true
    }
  }
  if (next.type === 'tool/input-requested') {
    // a body's round (docs/spec/lifecycle.md §11): its run ends asking what the recording asked
    const d = (next as EventOf<'tool/input-requested'>).data
    const b = rx.bodies.get(key3(d.turn, d.step, d.callId))
    if (b && !b.settled && b.round?.seq === next.seq) {
      askRound(b)
      return true
    }
  }
  if (next.type === 'tool/result') {
    const d = (next as EventOf<'tool/result'>).data
    const b = rx.bodies.get(key3(d.turn, d.step, d.callId))
    if (b && !b.settled && settle(rx, b)) return true
  }
  if (next.type === 'step/parked') {
    // the step parks when every started body has settled (docs/spec/lifecycle.md §11): a body that
    // ran beside an open round settled before the park, and its result waits behind that round
    for (const b of rx.bodies.values()) {
      if (!b.settled && b.round === undefined && b.result && !isAbortedWhileRunning(b.result) && settle(rx, b)) return true
    }
  }
  if (next.type === 'tool/call') {
    // A call waits for a pool slot: one running body must settle first. Settling the body whose
    // result commits next makes that result follow at once (its post-execute gate is released
    // eagerly), right after the one call its slot lets start; so it is the one only when the
    // recording commits it right after this call. Before calls that start ahead of it (a run of
    // several), a body that cannot commit yet (the last one) settles, which logs nothing; the head
    // settles first only when no such body is running.
    const running = [...rx.bodies.values()].filter((b) => !b.settled && b.round === undefined && b.result && !isAbortedWhileRunning(b.result))
    running.sort((x, y) => y.index - x.index)
    const due = resultAfterCalls(rx, next.seq)
    const head = due === null ? undefined : running.find((b) => b.key === due)
    const runOfCalls = rx.rec[next.seq + 1]?.type === 'tool/call'
    if (head && !runOfCalls && settle(rx, head)) return true
    for (const b of running) if (b !== head && settle(rx, b)) return true
    if (head && settle(rx, head)) return true
  }
  return false
}

/** The call key of the first `tool/result` after the run of `tool/call`s starting at `seq`, or null. */
export function resultAfterCalls(rx: Host, seq: number): string | null {
  let i = seq
  while (rx.rec[i]?.type === 'tool/call') i++
  const r = rx.rec[i]
  if (r?.type !== 'tool/result' || r.surfaceOp !== 'append') return null
  const d = (r as EventOf<'tool/result'>).data
  return key3(d.turn, d.step, d.callId)
}
