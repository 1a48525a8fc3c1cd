/**
 * Where a golden's cancels are re-issued (evals/inputs.ts plans every input; this file plans the
 * cancels): for each turn after the cut that ended `aborted`, the seq before which its cancel is
 * issued, its cause, the splices it wrote at once, and the bodies and pre-execute it came during.
 * Pure: reads the golden only.
 */
import type { CancelCause, EventOf, LogEvent } from '../events/index.js'
import { isCancelEffect } from '../replay/reexecute/facts.js'
import { isAgentSplice } from './agent-splice.js'
import { askedAfterCancel, askedLaterAfterCancel, beforeRefusedPairs, beforeSettledResults } from './cancel-moves.js'

export interface PlannedCancel {
  turn: number; cause: CancelCause; splices: number[]; reopened: boolean
  /** Calls (`turn.step.callId`) whose bodies ran when it came, though their results do not say so. */
  bodies: string[]
  /** The asked call (`turn.step.callId`) whose pre-execute listeners were deciding when it came. */
  preExecute?: string
}

/**
 * For each turn after `cut` that ended `aborted`: the seq before which its cancel is issued (the
 * first event only a cancel makes, moved back over the canceled splices a cancel without
 * `keepInbox` writes at once), its cause, and those splices.
 */
export function planCancels(events: readonly LogEvent[], cut: number): Map<number, PlannedCancel> {
  const out = new Map<number, PlannedCancel>()
  // the length of each splice's target list just before it
  const lenBefore = new Map<number, number>()
  const len = { 'next-turn': 0, 'next-step': 0 }
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'session/end-seed') len['next-turn'] = len['next-step'] = 0
    if (e.type !== 'agent/inbox/spliced') continue
    const s = (e as EventOf<'agent/inbox/spliced'>).data
    lenBefore.set(i, len[s.target])
    len[s.target] += s.inserted.length - (s.removedCount ?? 0)
  }
  let start = -1
  for (let i = cut; i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'turn/start') start = i
    if (e.type !== 'turn/end' || start < 0) continue
    const d = (e as EventOf<'turn/end'>).data
    if (d.reason.kind !== 'aborted') continue
    let first = i
    for (let j = start + 1; j <= i; j++) {
      if (isCancelEffect(events[j]!, events[j + 1])) {
        first = j
        break
      }
    }
    // the cancel came before the refused pairs its close-out wrote, or before an asked call's
    // request (cancel-moves.ts)
    first = beforeRefusedPairs(events, first, start)
    const settled = beforeSettledResults(events, first)
    first = settled.first
    const asked = askedAfterCancel(events, first)
    if (asked !== undefined) first--
    const preExecute = asked ?? askedLaterAfterCancel(events, first)
    // a cancel without keepInbox clears next-step, then next-turn: one canceled splice per
    // non-empty list, each removing the whole list
    let splices: number[] = []
    // next-turn sends right before the first effect may be waking sends made after the cancel
    // (re-targeted to next-turn while the turn aborts): the clear, if any, is before them. Only if
    // the next turn opened at once from the wake they latched (turn/start right after turn/end);
    // else they came before the cancel, and a canceled splice before them is the user's.
    let k = first - 1
    if (events[i + 1]?.type === 'turn/start') while (k > start && isNextTurnSend(events[k]!)) k--
    for (const target of ['next-turn', 'next-step'] as const) {
      const x = events[k]
      if (k <= start || x?.type !== 'agent/inbox/spliced') break
      const s = (x as EventOf<'agent/inbox/spliced'>).data
      if (s.outcome === 'canceled' && s.target === target && s.start === 0 && s.inserted.length === 0 && s.removedCount === lenBefore.get(k)) {
        splices.unshift(k--)
      }
    }
    // … every non-empty list: a run that leaves one uncleared is the user's own removal (a
    // `remove` of the last pending prompt looks like a clear of next-turn), and the cancel wrote no
    // splice: the inbox was empty when it came, or it kept the inbox. Issued with keepInbox, it
    // clears nothing at its later position either.
    if (splices.length > 0) {
      const at = lengthsBefore(events, splices[0]!)
      const cleared = new Set(splices.map((j) => (events[j] as EventOf<'agent/inbox/spliced'>).data.target))
      if ((['next-turn', 'next-step'] as const).some((t) => at[t] > 0 && !cleared.has(t))) {
        splices = []
        k = first - 1
      }
    } else k = first - 1
    out.set(k + 1, {
      turn: d.turn, cause: d.reason.cause, splices, reopened: events[i + 1]?.type === 'turn/start', bodies: settled.bodies,
      ...(preExecute !== undefined ? { preExecute } : {}),
    })
  }
  return out
}

/** The length of each pending list just before `i` (folded from the splices). */
function lengthsBefore(events: readonly LogEvent[], i: number): Record<'next-turn' | 'next-step', number> {
  const len = { 'next-turn': 0, 'next-step': 0 }
  for (let j = 0; j < i; j++) {
    const e = events[j]!
    if (e.type === 'session/end-seed') len['next-turn'] = len['next-step'] = 0
    if (e.type !== 'agent/inbox/spliced') continue
    const s = (e as EventOf<'agent/inbox/spliced'>).data
    len[s.target] += s.inserted.length - (s.removedCount ?? 0)
  }
  return len
}

/** A user's send to next-turn (one message appended, no removal, not the agent's own splice). */
function isNextTurnSend(e: LogEvent): boolean {
  if (e.type !== 'agent/inbox/spliced') return false
  const d = (e as EventOf<'agent/inbox/spliced'>).data
  return d.target === 'next-turn' && d.outcome === undefined && (d.removedCount ?? 0) === 0 && d.inserted.length === 1 && !isAgentSplice(d)
}

/** Approval requests of the open turn still undecided before `i` (docs/spec/lifecycle.md §9). */
export function openApprovalsAt(events: readonly LogEvent[], cut: number, i: number): boolean {
  const open = new Set<string>()
  for (let j = cut; j < i; j++) {
    const e = events[j]!
    if (e.type === 'tool/approval-requested') open.add((e.data as { approvalId: string }).approvalId)
    else if (e.type === 'tool/approval-decided') open.delete((e.data as { approvalId: string }).approvalId)
    else if (e.type === 'turn/end') open.clear()
  }
  return open.size > 0
}
