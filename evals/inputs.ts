/**
 * The recorded inputs of a golden after the cut, each with its lifecycle position (positions.ts):
 * sends and inbox edits (splices the agent does not make itself), cancels (from a turn's
 * `turn/end {aborted}`: issued just before the first event only a cancel makes) and wakes (a turn
 * opening with no send right before it) and approval decisions (docs/spec/lifecycle.md §9: a person's, and an
 * expiry, re-issued as the decision it recorded; a `superseded` or `canceled` decision follows from
 * the re-issued steer or cancel and is not an input). Pure: `planInputs` reads the golden only.
 */
import type { ApprovalBy, ApprovalDecision, CancelCause, EventOf, InputAnswer, InputBy, LogEvent, UserMessage } from '../events/index.js'
import { isAbortedWhileRunning, settlesAfterCancel } from '../replay/reexecute/facts.js'
import { isAgentSplice } from './agent-splice.js'
import { openApprovalsAt, planCancels } from './cancel-plan.js'
import { PositionCounter } from './positions.js'

export type PlannedInput =
  | {
    kind: 'send'; seq: number; at: string; target: 'next-turn' | 'next-step'; message: UserMessage; wakeIfIdle: boolean;
    /** Sent after the next step's (empty, unlogged) claim: issued from `agent/pre-step`. */
    afterClaim?: boolean
    /**
     * A next-step send that did not wake (an inject): with approvals open, a waking one supersedes
     * them at once (docs/spec/lifecycle.md §9) and the golden shows no such decision right after it.
     */
    noWake?: boolean
  }
  | {
    kind: 'edit'; seq: number; at: string; target: 'next-turn' | 'next-step'; start: number; removedIds: readonly string[];
    inserted: readonly UserMessage[]; outcome?: 'canceled'
  }
  | {
    kind: 'cancel'; seq: number; at: string; turn: number; cause: CancelCause; keepInbox: boolean;
    /** Calls (`turn.step.callId`) whose body the recording shows running when the cancel came: issued once they have started. */
    bodies: readonly string[]
    /** Came while the turn-stopping listeners ran (their steer was re-targeted to next-turn): issued from the outermost one. */
    duringStopping?: boolean
    /** Came right after a step that owes another (or after a claim): issued from our outermost `agent/pre-step` listener. */
    duringPreStep?: boolean
    /**
     * Came while the `tools/pre-execute` listeners of this call (`turn.step.callId`) decided an
     * `ask`: issued from our outermost pre-execute listener once they answered, before the request.
     */
    duringPreExecute?: string
  }
  | { kind: 'wake'; seq: number; at: string }
  /**
   * A wakeup (docs/spec/lifecycle.md §10): the app's `schedule` / `unschedule` (a `schedule/created` without a
   * call id, a `schedule/canceled`) or a recorded firing (`schedule/fired`, with its splice's
   * message id), issued through the agent's wakeups as recorded (replay/reexecute/schedules.ts).
   */
  | { kind: 'schedule'; seq: number; at: string; event: LogEvent; messageId?: string; /** Recorded after its turn's end, between turns. */ betweenTurns?: boolean }
  | {
    /**
     * A recorded answer to an input round (docs/spec/lifecycle.md §11, a person's or an expiry):
     * matched to the re-run's open round of the same call and round, issued right after it is asked.
     */
    kind: 'answer'; seq: number; at: string; turn: number; step: number; callId: string; round: number; answer: InputAnswer; by: InputBy
  }
  | {
    /** A recorded decision: matched to the re-run's open approval of the same call (turn, step, call id), not by approval id. */
    kind: 'decision'; seq: number; at: string; turn: number; step: number; callId: string; decision: ApprovalDecision; by: ApprovalBy
  }

export { isAgentSplice }

/** The recorded inputs from `cut` on, in log order, each with its position. */
export function planInputs(events: readonly LogEvent[], cut: number): PlannedInput[] {
  const cancelAt = planCancels(events, cut)
  const byCancel = new Set<number>()
  // the splices of recorded firings: the firing re-makes them
  const byFiring = new Set<number>()
  for (const c of cancelAt.values()) for (const s of c.splices) byCancel.add(s)
  // the pending lists, to name what an edit removes
  const lists = pendingAt(events, cut)
  const out: PlannedInput[] = []
  const counter = new PositionCounter()
  let at = 'start'
  let atSeq = -1
  for (let i = cut; i < events.length; i++) {
    const e = events[i]!
    const c = cancelAt.get(i)
    if (c) {
      const cancel: PlannedInput = {
        kind: 'cancel', seq: i, at, turn: c.turn, cause: c.cause, keepInbox: c.splices.length === 0, bodies: [...new Set([...runningAt(events, i), ...c.bodies])],
        ...(c.preExecute !== undefined ? { duringPreExecute: c.preExecute } : {}),
      }
      // Next-turn sends right before a cancel that wrote nothing came after the cancel only when the
      // next turn opened at once from the wake they latched (a waking send is re-targeted to
      // next-turn and latched while the turn aborts: a steer the turn-stopping listeners made after
      // the cancel, or a user's followup). Otherwise they came before it: a waking send to a turn
      // not yet aborted latches nothing, and the aborted turn parks them (docs/spec/lifecycle.md §3.8; seed
      // 569338541: followups, then a cancel, right after a stopping step — not reordered).
      // A cancel right after a step that stops the turn came while the turn-stopping listeners
      // ran, or before they started: the log cannot tell. Hooks first: the listeners under test
      // are called (a hook that counts its calls stays in step), and the cancel comes from our
      // outermost one (or after the sends queued before it, from the innermost one).
      const stop = events[atSeq]
      const stopping = stop?.type === 'step/end' && ['stop', 'max-tokens'].includes((stop as EventOf<'step/end'>).data.outcome.kind)
      // (A cancel that cleared the inbox wrote its clear at once: sends before that clear came first.)
      let k = out.length
      while (c.splices.length === 0 && c.reopened && k > 0 && out[k - 1]!.kind === 'send' && out[k - 1]!.at === at &&
        (out[k - 1] as { target: string }).target === 'next-turn') k--
      // (only with next-step empty: a pending item would have been claimed, and logged, before the
      // pre-step listeners ran; no claim in the log means the cancel came before it)
      // Next-step sends at this position the step's claim did not take (the turn aborted with them
      // pending) came after that claim, so after the pre-step listeners started: they and the
      // cancel wait for our outermost pre-step listener (seed 404510064: a pre-step hook that
      // counts its messages stays in step).
      const fresh = out.filter((q) => q.kind === 'send' && q.at === at && q.target === 'next-step') as Extract<PlannedInput, { kind: 'send' }>[]
      const unclaimed = lists.nextStep.length > 0 && lists.nextStep.every((m) => fresh.some((q) => q.message.id === m.id))
      if (stopping) out.splice(k, 0, { ...cancel, duringStopping: true })
      else if (proposing(stop) && (lists.nextStep.length === 0 || unclaimed)) {
        if (unclaimed) for (const q of fresh) q.afterClaim = true
        out.splice(k, 0, { ...cancel, duringPreStep: true })
      } else out.splice(k, 0, cancel)
    }
    if (e.type === 'agent/inbox/spliced') {
      const d = (e as EventOf<'agent/inbox/spliced'>).data
      const list = d.target === 'next-turn' ? lists.nextTurn : lists.nextStep
      const removed = list.slice(d.start, d.start + (d.removedCount ?? 0))
      if (!byCancel.has(i) && !isAgentSplice(d) && !byFiring.has(i)) {
        if (d.outcome === undefined && (d.removedCount ?? 0) === 0 && d.inserted.length === 1 && d.start === list.length) {
          out.push({
            kind: 'send', seq: i, at, target: d.target, message: d.inserted[0]!, wakeIfIdle: events[i + 1]?.type === 'turn/start',
            ...(d.target === 'next-step' && afterEmptyClaim(events, i) ? { afterClaim: true } : {}),
            ...(d.target === 'next-step' && openApprovalsAt(events, cut, i) && !supersededAfter(events, i) ? { noWake: true } : {}),
          })
        } else {
          out.push({
            kind: 'edit', seq: i, at, target: d.target, start: d.start, removedIds: removed.map((m) => m.id), inserted: d.inserted,
            ...(d.outcome !== undefined ? { outcome: d.outcome } : {}),
          })
        }
      }
      list.splice(d.start, d.removedCount ?? 0, ...d.inserted)
      const key = counter.next(e)
      if (key !== null) {
        at = key
        atSeq = i
      }
      continue
    }
    if (e.type === 'schedule/fired' || e.type === 'schedule/canceled' ||
      (e.type === 'schedule/created' && (e as EventOf<'schedule/created'>).data.callId === undefined)) {
      let messageId: string | undefined
      const next = events[i + 1]
      if (e.type === 'schedule/fired' && !(e as EventOf<'schedule/fired'>).data.dropped && next?.type === 'agent/inbox/spliced') {
        messageId = (next as EventOf<'agent/inbox/spliced'>).data.inserted.find((m) => m.source.kind === 'schedule')?.id
        if (messageId !== undefined) byFiring.add(i + 1)
      }
      const between = events.slice(cut, i).findLast((x) => x.type === 'turn/start' || x.type === 'turn/end')?.type === 'turn/end'
      out.push({ kind: 'schedule', seq: i, at, event: e, ...(messageId !== undefined ? { messageId } : {}), ...(between ? { betweenTurns: true } : {}) })
      // a position too: the re-run logs the same event when it issues it
    }
    if (isDecisionInput(e)) {
      const d = (e as EventOf<'tool/approval-decided'>).data
      out.push({ kind: 'decision', seq: i, at, turn: d.turn, step: d.step, callId: d.callId, decision: d.decision, by: d.by })
      continue // an input, never a position (positions.ts)
    }
    if (isAnswerInput(e)) {
      const d = (e as EventOf<'tool/input-provided'>).data
      out.push({ kind: 'answer', seq: i, at, turn: d.turn, step: d.step, callId: d.callId, round: d.round, answer: d.answer, by: d.by })
      continue // an input, never a position (positions.ts)
    }
    if (e.type === 'turn/start' && i > cut && (e as EventOf<'turn/start'>).data.cause?.kind !== 'retry' &&
      events[i - 1]?.type !== 'agent/inbox/spliced') {
      out.push({ kind: 'wake', seq: i, at })
    }
    at = counter.next(e) ?? at
    atSeq = i
  }
  return out
}

/**
 * The position `e` is followed by the next proposal's `agent/pre-step` (a step that ended `tools`,
 * or a claim): a cancel recorded right there came while the pre-step listeners ran, or before they
 * started; the log cannot tell, and hooks go first (a hook that counts its calls stays in step).
 */
function proposing(e: LogEvent | undefined): boolean {
  if (e?.type === 'step/end') return (e as EventOf<'step/end'>).data.outcome.kind === 'tools'
  if (e?.type !== 'agent/inbox/spliced') return false
  const d = (e as EventOf<'agent/inbox/spliced'>).data
  return isAgentSplice(d) && d.outcome === undefined && (d.removedCount ?? 0) > 0 && d.inserted.length === 0
}

/**
 * The golden's approval ids from `cut` on, by call (`turn.step.callId`): a re-run's request for
 * the same call gets the recorded id (each at most once), so an unchanged re-run logs the same
 * request and a recorded decision names it.
 */
export function recordedApprovalIds(events: readonly LogEvent[], cut: number): (turn: number, step: number, callId: string) => string | undefined {
  const ids = new Map<string, string>()
  for (let i = cut; i < events.length; i++) {
    const e = events[i]!
    if (e.type !== 'tool/approval-requested') continue
    const d = (e as EventOf<'tool/approval-requested'>).data
    ids.set(`${d.turn}.${d.step}.${d.callId}`, d.approvalId)
  }
  return (turn, step, callId) => {
    const k = `${turn}.${step}.${callId}`
    const id = ids.get(k)
    ids.delete(k)
    return id
  }
}

/**
 * The golden's input request ids from `cut` on, by call and round: a re-run's round of the same
 * call gets the recorded id (each at most once), so an unchanged re-run logs the same request and
 * a recorded answer names it.
 */
export function recordedInputIds(events: readonly LogEvent[], cut: number): (turn: number, step: number, callId: string, round: number) => string | undefined {
  const ids = new Map<string, string>()
  for (let i = cut; i < events.length; i++) {
    const e = events[i]!
    if (e.type !== 'tool/input-requested') continue
    const d = (e as EventOf<'tool/input-requested'>).data
    ids.set(`${d.turn}.${d.step}.${d.callId}.${d.round}`, d.requestId)
  }
  return (turn, step, callId, round) => {
    const k = `${turn}.${step}.${callId}.${round}`
    const id = ids.get(k)
    ids.delete(k)
    return id
  }
}

/** An answer from outside the agent's run (a person's, or an expiry): an input, like a send. */
export function isAnswerInput(e: LogEvent): boolean {
  if (e.type !== 'tool/input-provided') return false
  const k = (e as EventOf<'tool/input-provided'>).data.by.kind
  return k === 'user' || k === 'expired'
}

/** A decision from outside the agent's run (a person's, or an expiry): an input, like a send. */
export function isDecisionInput(e: LogEvent): boolean {
  if (e.type !== 'tool/approval-decided') return false
  const k = (e as EventOf<'tool/approval-decided'>).data.by.kind
  return k === 'user' || k === 'expired'
}

/**
 * A next-step send between a step's end and the next `step/start` with no claim after it: the
 * step's proposal had already claimed (nothing: an empty claim logs no splice) when it came, or
 * it would have been claimed into that step. Likewise when the turn ends there `blocked` or
 * `error {HOOK_ERROR}` instead: only the proposal's `agent/pre-step` ends a turn so between steps
 * (a reject, a throw), after its claim (seed 938791077: a steer while the pre-step listeners
 * waited, then a reject — the steer stays pending for the next turn).
 */
function afterEmptyClaim(events: readonly LogEvent[], i: number): boolean {
  let ended = false
  for (let j = i + 1; j < events.length; j++) {
    const e = events[j]!
    if (e.type === 'step/start') break
    if (endedByPreStep(e)) {
      ended = true
      break
    }
    if (e.type === 'agent/inbox/spliced') {
      if (isAgentSplice((e as EventOf<'agent/inbox/spliced'>).data)) return false
      continue
    }
    return false
  }
  for (let j = i - 1; j >= 0; j--) {
    const e = events[j]!
    if (e.type === 'agent/inbox/spliced') {
      if (isAgentSplice((e as EventOf<'agent/inbox/spliced'>).data)) return false
      continue
    }
    // (a turn ended by the pre-step with nothing claimed: only after `tools` does a proposal follow
    // a step with next-step empty; after `stop` the turn-stopping listeners run instead)
    return e.type === 'step/end' && (!ended || (e as EventOf<'step/end'>).data.outcome.kind === 'tools')
  }
  return false
}

/**
 * A turn's end that only a proposal's `agent/pre-step` writes between steps: a reject (`blocked`)
 * or a throwing pre-step listener (`error {HOOK_ERROR}` naming it). (A step limit or a spent
 * budget ends the turn before the claim; a cancel's end is planned with the cancel.)
 */
function endedByPreStep(e: LogEvent): boolean {
  if (e.type !== 'turn/end') return false
  const r = (e as EventOf<'turn/end'>).data.reason
  return r.kind === 'blocked' || (r.kind === 'error' && r.failure.code === 'HOOK_ERROR' && r.failure.message.startsWith('agent/pre-step:'))
}

/**
 * The calls whose bodies were running when the cancel came at `i`: those of the open step whose
 * recorded result says the cancel stopped them while they ran, or that a body gave after it (no
 * body starts after a cancel, R5: it had started before; seed 998929474).
 */
function runningAt(events: readonly LogEvent[], i: number): string[] {
  const out: string[] = []
  for (let j = i; j < events.length; j++) {
    const e = events[j]!
    if (e.type === 'step/end' || e.type === 'turn/end') break
    if (e.type !== 'tool/result') continue
    const r = e as EventOf<'tool/result'>
    if (isAbortedWhileRunning(r) || settlesAfterCancel(r)) out.push(`${r.data.turn}.${r.data.step}.${r.data.callId}`)
  }
  return out
}

/** The pending lists just before `cut` (folded from the splices). */
function pendingAt(events: readonly LogEvent[], cut: number): { nextTurn: UserMessage[]; nextStep: UserMessage[] } {
  const l = { nextTurn: [] as UserMessage[], nextStep: [] as UserMessage[] }
  for (let i = 0; i < cut; i++) {
    const e = events[i]!
    if (e.type === 'session/end-seed') {
      l.nextTurn = []
      l.nextStep = []
    }
    if (e.type !== 'agent/inbox/spliced') continue
    const d = (e as EventOf<'agent/inbox/spliced'>).data
    ;(d.target === 'next-turn' ? l.nextTurn : l.nextStep).splice(d.start, d.removedCount ?? 0, ...d.inserted)
  }
  return l
}

/** A turn's cancel as planned: the cause, the canceled splices it wrote, whether the next turn opened from its latch. */
/** The events right after the send at `i` are the supersede of the open requests (a waking steer). */
function supersededAfter(events: readonly LogEvent[], i: number): boolean {
  const n = events[i + 1]
  return n?.type === 'tool/approval-decided' && (n.data as { by: { kind: string } }).by.kind === 'superseded'
}
