/**
 * The transcript's record of what a step waited for (docs/spec/lifecycle.md §9, §10, §11): its approval requests with
 * their decisions (who, when, edited arguments, reason), its input rounds with their answers, the times it stood parked, and the child
 * sessions its calls ran. Part of the transcript fold (transcript.ts calls `applyWaits` for every
 * event with the open step); O(1) per event except a decision, which finds its request among the
 * step's own requests.
 */
import type { EventOf, LogEvent } from '../events/index.js'
import { isRunnableCall } from '../events/index.js'
import { endsParking } from './approvals.js'
import type { TranscriptApproval, TranscriptInput, TranscriptStep } from './transcript-types.js'

/** Whether an event ends a parked wait: anything that `endsParking` except a decision or a re-parking. */
export function endsWait(type: string): boolean {
  return type !== 'tool/approval-decided' && type !== 'tool/input-provided' && type !== 'step/parked' && endsParking(type)
}

/** The requested call of `callId` in the step's assistant message (name, raw arguments). */
function callOf(step: TranscriptStep, callId: string): { name: string; arguments: string } {
  for (let i = step.messages.length - 1; i >= 0; i--) {
    const m = step.messages[i]!
    if (m.type !== 'assistant/message') continue
    for (const b of m.message.content) if (isRunnableCall(b) && b.id === callId) return { name: b.name, arguments: b.arguments }
  }
  return { name: '', arguments: '' }
}

/** Folds `event` into the open step's waits (`step` null: no step open, nothing to record). */
export function applyWaits(step: TranscriptStep | null, event: LogEvent): void {
  if (step === null) return
  const parked = step.parked
  const last = parked !== undefined ? parked[parked.length - 1] : undefined
  if (last !== undefined && last.end === null && endsWait(event.type)) last.end = { seq: event.seq, time: event.time }
  switch (event.type) {
    case 'tool/approval-requested': {
      const d = (event as EventOf<'tool/approval-requested'>).data
      const a: TranscriptApproval = {
        kind: 'approval', seq: event.seq, time: event.time, approvalId: d.approvalId, callId: d.callId, ...callOf(step, d.callId), decision: null,
      }
      if (d.question !== undefined) a.question = d.question
      if (d.expiresAt !== undefined) a.expiresAt = d.expiresAt
      ;(step.approvals ??= []).push(a)
      return
    }
    case 'tool/approval-decided': {
      const d = (event as EventOf<'tool/approval-decided'>).data
      const a = step.approvals?.find((x) => x.approvalId === d.approvalId)
      if (a === undefined || a.decision !== null) return // a log the checker refuses: the fold stays total
      const decision: NonNullable<TranscriptApproval['decision']> = { seq: event.seq, time: event.time, kind: d.decision.kind, by: d.by }
      if (d.decision.kind === 'approve' && d.decision.arguments !== undefined) decision.arguments = d.decision.arguments
      if (d.decision.kind === 'deny' && d.decision.reason !== undefined) decision.reason = d.decision.reason
      a.decision = decision
      return
    }
    case 'tool/input-requested': {
      const d = (event as EventOf<'tool/input-requested'>).data
      const r: TranscriptInput = {
        kind: 'input', seq: event.seq, time: event.time, requestId: d.requestId, callId: d.callId, ...callOf(step, d.callId), round: d.round,
        asked: Object.entries(d.requests).map(([key, q]) => ({ key, kind: q.kind })), answer: null,
      }
      if (d.expiresAt !== undefined) r.expiresAt = d.expiresAt
      ;(step.inputs ??= []).push(r)
      return
    }
    case 'tool/input-provided': {
      const d = (event as EventOf<'tool/input-provided'>).data
      const r = step.inputs?.find((x) => x.requestId === d.requestId)
      if (r === undefined || r.answer !== null) return // a log the checker refuses: the fold stays total
      r.answer = { seq: event.seq, time: event.time, action: d.answer.action, by: d.by }
      return
    }
    case 'step/parked': {
      if (last !== undefined && last.end === null) return // a re-parking after a decision: the same wait
      const d = (event as EventOf<'step/parked'>).data
      ;(step.parked ??= []).push({ kind: 'parked', seq: event.seq, time: event.time, approvals: [...d.approvals], end: null })
      return
    }
    case 'child/spawned': {
      const d = (event as EventOf<'child/spawned'>).data
      ;(step.children ??= []).push({ kind: 'child', seq: event.seq, time: event.time, callId: d.callId, child: d.child })
      return
    }
    default:
  }
}
