/**
 * Cancels: a recorded turn that ended `aborted` (or `interrupted` with a cancel's traces) is
 * cancelled again, at the point the recording's traces fix: before the first event only a cancel
 * makes, at the clearing splices of a cancel without `keepInbox`, or, in a step whose tools the
 * cancel cut, once every call got as far as its recorded result says it did.
 */
import type { CancelCause, EventOf, LogEvent } from '../../events/index.js'
import { isAbortedBeforeBody, isCancelEffect, isExecuteHookError, key3, settlesAfterCancel } from './facts.js'
import type { Host } from './state.js'
import { settle } from './tools.js'

/** The cancel to issue before `next`, or null. Pure. */
export function cancelPlan(rx: Host, next: LogEvent): { turn: number; cause: CancelCause; keepInbox: boolean } | null {
  const turn = rx.agent.lifecycle.openTurn
  if (turn === null || rx.aborted() || rx.cancelled.has(turn)) return null
  const end = rx.turnEnds.get(turn)
  if (!end) return null
  let cause: CancelCause
  if (end.reason.kind === 'aborted') cause = end.reason.cause as CancelCause
  // a crash lost the turn/end of a cancelled turn (repair closed it): the cancel's traces stand for it
  else if (end.reason.kind === 'interrupted' && rx.cancelTraced.has(turn)) cause = { kind: 'user' }
  else return null
  // a step that parked stood still until the cancel (docs/spec/lifecycle.md §9): it came after the last parking
  if (parkedAhead(rx, end.seq)) return null
  // In a step whose tools the cancel cut, the calls' recorded progress decides when it came.
  if (inToolCancelStep(rx)) {
    // A result the recording committed before the cancel's traces: its body settles first,
    // unless its outcome is one a body also gives after the cancel (an output, a timeout) and
    // nothing in the log pins the cancel later (the clearing splices of a cancel without
    // keepInbox): then the cancel came first (the calls it stopped never started, see
    // `#toolCancelReady`), and the body settles after it, inside the grace period.
    if (next.type === 'tool/result' && !isCancelEffect(next, rx.rec[next.seq + 1])) {
      const r = next as EventOf<'tool/result'>
      const b = rx.bodies.get(key3(r.data.turn, r.data.step, r.data.callId))
      if (b && !b.settled && !(settlesAfterCancel(r) && !cancelPinned(rx, next.seq, end.seq))) return null
    }
    return toolCancelReady(rx) ? { turn, cause, keepInbox: !isCancelClear(rx, next.seq, end.seq) } : null
  }
  if (isCancelEffect(next, rx.rec[next.seq + 1])) return { turn, cause, keepInbox: true }
  if (next.type === 'agent/inbox/spliced') {
    if (isCancelClear(rx, next.seq, end.seq)) return { turn, cause, keepInbox: false }
    if (latchingSendAfterCancel(rx, next as EventOf<'agent/inbox/spliced'>, end.seq)) return { turn, cause, keepInbox: true }
  }
  return null
}

/** The recording has a `step/parked` still ahead in this turn: a cancel of the turn came after it. */
export function parkedAhead(rx: Host, endSeq: number): boolean {
  for (let i = rx.len; i < endSeq; i++) if (rx.rec[i]!.type === 'step/parked') return true
  return false
}

/**
 * In a step whose tools the cancel cut: settles every running body whose recorded result only a
 * body that settled before the cancel gives. A body that throws after the abort is `ABORTED`
 * (tools/scheduler.ts), so a recorded `TOOL_ERROR` is a fact of the recording: its body threw
 * before the cancel, even when its result commits after an aborted one (results commit in model
 * order). An output, a timeout or an abort may come after the cancel: those settle as the
 * recording's next event asks. True when it settled something.
 */
export function settleBeforeCancel(rx: Host): boolean {
  if (!inToolCancelStep(rx)) return false
  let did = false
  for (const b of rx.bodies.values()) {
    if (b.settled || b.result?.data.error?.code !== 'TOOL_ERROR') continue
    did = settle(rx, b) || did
  }
  return did
}

/** A splice between `from` and the turn's end clears a list as a cancel does: the cancel's
 * position is written in the log. */
export function cancelPinned(rx: Host, from: number, endSeq: number): boolean {
  for (let i = from; i < endSeq; i++) {
    const x = rx.rec[i]!
    if (x.type === 'agent/inbox/spliced' && (x as EventOf<'agent/inbox/spliced'>).data.outcome === 'canceled') return true
  }
  return false
}

/** The open step's tools were cut by a cancel (recorded), and its message is already appended. */
export function inToolCancelStep(rx: Host): boolean {
  const st = rx.stepRec()
  if (!st || st.outcome?.kind !== 'aborted' || !st.hasTools) return false
  return rx.agent.events.some((e) => e.type === 'assistant/message' && (e.data as { turn: number }).turn === st.turn
    && (e.data as { step: number }).step === st.step && e.surfaceOp === 'append')
}

/**
 * A next-turn send whose turn ends aborted and is followed at once by the next turn (a wake
 * latched during the abort), with nothing between it and that end but what a cancel leaves
 * (splices, results, interrupted messages, the aborted step's end): it came after the cancel.
 */
export function latchingSendAfterCancel(rx: Host, e: EventOf<'agent/inbox/spliced'>, endSeq: number): boolean {
  const d = e.data
  if (d.target !== 'next-turn' || d.outcome !== undefined || (d.removedCount ?? 0) > 0 || d.inserted.length === 0) return false
  const after = rx.rec[endSeq + 1]
  if (after?.type !== 'turn/start' || (after as EventOf<'turn/start'>).data.cause !== undefined) return false
  return onlyCancelTraces(rx, e.seq + 1, endSeq)
}

/** The splices at `seq` clear both lists exactly as `cancel` without `keepInbox` does. */
export function isCancelClear(rx: Host, seq: number, endSeq: number): boolean {
  const lists = { 'next-step': rx.agent.inbox.nextStep.length, 'next-turn': rx.agent.inbox.nextTurn.length }
  let i = seq
  for (const target of ['next-step', 'next-turn'] as const) {
    if (lists[target] === 0) continue
    const e = rx.rec[i]
    if (e?.type !== 'agent/inbox/spliced') return false
    const d = (e as EventOf<'agent/inbox/spliced'>).data
    if (d.target !== target || d.start !== 0 || d.removedCount !== lists[target] || d.inserted.length > 0 || d.outcome !== 'canceled') return false
    i++
  }
  return i > seq && i <= endSeq && onlyCancelTraces(rx, i, endSeq)
}

/** Events `from..end-1` are all what a cancel leaves (splices, results, interrupted messages,
 * synthetic pairs, the aborted step's end): the agent did nothing new in between. */
export function onlyCancelTraces(rx: Host, from: number, end: number): boolean {
  for (let i = from; i < end; i++) {
    const x = rx.rec[i]!
    // a claim (a removal without outcome) opens a step: no agent makes one once its turn is cancelled
    if (x.type === 'agent/inbox/spliced' && !isClaim(x as EventOf<'agent/inbox/spliced'>)) continue
    if (x.type === 'tool/result' || x.type === 'llm/retry') continue
    if (isCancelEffect(x, rx.rec[i + 1])) continue
    if (isAbortEstimate(rx, i)) continue
    return false
  }
  return true
}

/**
 * The usage the agent estimates for a stream the cancel cut (agent/estimated-usage.ts): an
 * `estimated` usage chunk whose step ends aborted. Only the cut writes it there, after the cancel,
 * so sends before it may still have come after the cancel (and latched the next turn).
 */
function isAbortEstimate(rx: Host, i: number): boolean {
  const x = rx.rec[i]!
  if (x.type !== 'assistant/chunk') return false
  const chunk = (x as EventOf<'assistant/chunk'>).data.chunk
  if (chunk.type !== 'usage' || chunk.usage.estimated !== true) return false
  for (let j = i + 1; j < rx.rec.length; j++) {
    const y = rx.rec[j]!
    if (y.type === 'step/end') return (y as EventOf<'step/end'>).data.outcome.kind === 'aborted'
  }
  return false
}

/** The driver's claim of pending messages for a step: removed, with no outcome. */
function isClaim(e: EventOf<'agent/inbox/spliced'>): boolean {
  return e.data.outcome === undefined && (e.data.removedCount ?? 0) > 0
}

/** In a step whose tools were cut by the cancel: every call the recording started has started, and
 * every started call got as far as its recorded result says it did. */
export function toolCancelReady(rx: Host): boolean {
  const st = rx.stepRec()
  if (!st || !inToolCancelStep(rx)) return false
  const called = new Set<string>()
  for (let i = rx.len - 1; i >= 0; i--) {
    const e = rx.agent.events[i]!
    if (e.type === 'step/start') break
    if (e.type === 'tool/call') {
      const d = (e as EventOf<'tool/call'>).data
      called.add(key3(d.turn, d.step, d.callId))
    }
  }
  for (const k of st.realCalls) {
    // a call an approval denied (a person, the clock, the cancel itself) runs no body, and its
    // pair is written when the barrier before it has committed, which may be after the cancel
    if (st.denied.has(k)) continue
    if (!called.has(k)) return false
    const r = st.results.get(k)
    if (!r || isAbortedBeforeBody(r)) continue
    const code = r.data.error?.code
    if (code === 'DENIED' || code === 'UNKNOWN_TOOL' || code === 'INVALID_ARGS' || (code === 'HOOK_ERROR' && !isExecuteHookError(r))) {
      if (!rx.preDone.has(k)) return false
      continue
    }
    // its body ran (or was running) when the cancel came
    if (!rx.bodies.has(k)) return false
  }
  return true
}
