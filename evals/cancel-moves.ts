/**
 * Where a recorded cancel came, earlier than the first event only a cancel makes (inputs.ts
 * `planCancels` starts from that event): events the scheduler writes in one synchronous run with
 * the step's next event, so no cancel can have come between them (tools/scheduler.ts). Pure.
 */
import type { EventOf, LogEvent } from '../events/index.js'
import { isCancelEffect, settlesAfterCancel } from '../replay/reexecute/facts.js'

/**
 * A call a decision denied gets its refused pair when the start loop reaches it, and the loop
 * starts the next call in the same synchronous run: nothing can cancel between that pair and the
 * next call's `tool/call`. Refused pairs right before a cancel's not-dispatched pair (at `first`)
 * were therefore written after the cancel, by the cancel's close-out: the cancel came before them
 * (seed 515943978: a steer superseded the parked request and a cancel followed at once; issued
 * after the denied pair, it came after the next call had started). Returns the seq of the first
 * such pair, or `first`.
 */
export function beforeRefusedPairs(events: readonly LogEvent[], first: number, turnStart: number): number {
  if (!isNotDispatchedPair(events[first]!, events[first + 1])) return first
  while (isRefusedPair(events, first - 2, turnStart)) first -= 2
  return first
}

/**
 * A cancel's not-dispatched pair (at `first`) right after results the bodies gave: had those bodies
 * settled before the cancel, the start loop would have started the waiting call (a slot freed, or
 * the barrier's drain done) before, or racing, their commits, and the log would show its
 * `tool/call` as started. It shows the pair, so the cancel came while those bodies ran (seed
 * 1997684145: pool 1, the second call deferred; issued after the first call's result, the cancel
 * came after the second call had started). Only outcomes a body also gives after a cancel count
 * (an output, a timeout; a throw after a cancel is `ABORTED`, facts.ts `settlesAfterCancel`).
 * Returns the seq of the first such result and the calls (`turn.step.callId`) whose bodies must
 * have started before the cancel is issued; `first` and none when there are none.
 */
export function beforeSettledResults(events: readonly LogEvent[], first: number): { first: number; bodies: string[] } {
  const bodies: string[] = []
  const pair = events[first]
  if (pair === undefined || !isNotDispatchedPair(pair, events[first + 1])) return { first, bodies }
  const { turn, step } = (pair as EventOf<'tool/call'>).data
  for (let j = first - 1; j >= 0; j--) {
    const e = events[j]!
    if (e.type !== 'tool/result') break
    const r = e as EventOf<'tool/result'>
    if (r.data.turn !== turn || r.data.step !== step || !settlesAfterCancel(r)) break
    bodies.unshift(`${turn}.${step}.${r.data.callId}`)
    first = j
  }
  return { first, bodies }
}

/**
 * An asked call's request decided `canceled` right after it, with no `step/parked` between: the
 * request parks its step in the same synchronous run (tools/scheduler.ts `#asked`) unless the turn
 * was cancelled already, so the cancel came before the request, while the call's pre-execute
 * listeners decided (seed 1145134089; issued after the request, it came after the park).
 * `events[first]` is that decision, `events[first - 1]` the request, after the call's own
 * `tool/call` in the same step (an `ask` verdict). Returns the call's key (`turn.step.callId`), or
 * undefined.
 */
export function askedAfterCancel(events: readonly LogEvent[], first: number): string | undefined {
  const d = events[first]
  const r = events[first - 1]
  if (d?.type !== 'tool/approval-decided' || r?.type !== 'tool/approval-requested') return undefined
  const dd = (d as EventOf<'tool/approval-decided'>).data
  const rd = (r as EventOf<'tool/approval-requested'>).data
  if (dd.by.kind !== 'canceled' || dd.approvalId !== rd.approvalId) return undefined
  return calledBefore(events, first - 1, rd.callId) ? `${rd.turn}.${rd.step}.${rd.callId}` : undefined
}

/**
 * An `ask` request logged after the cancel's first effect (at `first`), in its step, for a call
 * whose `tool/call` came before it (seed 952250528: another call's request decided `canceled`
 * first): the call's pre-execute had begun before the cancel (it answers `cancelled` without
 * calling the listeners once the turn is cancelled), so the cancel came while its listeners
 * decided. Returns the call's key (`turn.step.callId`), or undefined.
 */
export function askedLaterAfterCancel(events: readonly LogEvent[], first: number): string | undefined {
  for (let j = first; j < events.length; j++) {
    const e = events[j]!
    if (e.type === 'step/end' || e.type === 'turn/end' || e.type === 'step/start') return undefined
    if (e.type !== 'tool/approval-requested') continue
    const rd = (e as EventOf<'tool/approval-requested'>).data
    if (calledBefore(events, first, rd.callId)) return `${rd.turn}.${rd.step}.${rd.callId}`
  }
  return undefined
}

/** The call's `tool/call` is before `i` in the same step. */
function calledBefore(events: readonly LogEvent[], i: number, callId: string): boolean {
  for (let j = i - 1; j >= 0; j--) {
    const e = events[j]!
    if (e.type === 'step/start' || e.type === 'turn/start') return false
    if (e.type === 'tool/call' && (e as EventOf<'tool/call'>).data.callId === callId) return true
  }
  return false
}

/** `e` and `after` are a call's `tool/call` and its `ABORTED_BEFORE_DISPATCH` result after a cancel. */
function isNotDispatchedPair(e: LogEvent, after: LogEvent | undefined): boolean {
  return e.type === 'tool/call' && isCancelEffect(e, after)
}

/**
 * `events[j]`, `events[j + 1]` (after the turn's start) are the refused pair of a call a decision
 * denied (docs/spec/lifecycle.md §9): its `tool/call` and at once its `DENIED` / `APPROVAL_EXPIRED` result, the
 * call's request decided `deny` earlier in the turn.
 */
function isRefusedPair(events: readonly LogEvent[], j: number, turnStart: number): boolean {
  if (j <= turnStart) return false
  const c = events[j]
  const r = events[j + 1]
  if (c?.type !== 'tool/call' || r?.type !== 'tool/result') return false
  const callId = (c as EventOf<'tool/call'>).data.callId
  const code = (r as EventOf<'tool/result'>).data.error?.code
  if ((r as EventOf<'tool/result'>).data.callId !== callId || (code !== 'DENIED' && code !== 'APPROVAL_EXPIRED')) return false
  for (let x = j - 1; x > turnStart; x--) {
    const e = events[x]!
    if (e.type !== 'tool/approval-decided') continue
    const d = (e as EventOf<'tool/approval-decided'>).data
    if (d.callId === callId) return d.decision.kind === 'deny'
  }
  return false
}
