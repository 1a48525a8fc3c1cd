/**
 * Restoring a parked step (lifecycle §9): an agent created over a log that stands parked (its open
 * step waits for people only: the last `step/parked`, then only splices and decisions) continues
 * that step as it is — no closers, no re-run — when it is woken (`resumeAgent` does at once).
 * This file reads where each call of the step stands from the log; the scheduler continues there.
 */
import { isRunnableCall, type EventOf, type LogEvent, type ToolCallBlock } from '../events/index.js'
import type { ApprovalsState } from '../reducers/approvals.js'
import type { LifecycleState } from '../reducers/lifecycle.js'
import type { RestoredCall } from '../tools/types.js'

export interface RestoredStep {
  turn: number
  step: number
  calls: RestoredCall[]
  /** A decision was logged after the last `step/parked` (a store decided while no agent ran). */
  decidedSinceParked: boolean
}

/** True when the log stands parked in its open step (resume restores it; repair leaves it alone). */
export function standsParked(lifecycle: LifecycleState, approvals: ApprovalsState): boolean {
  const w = approvals.waiting
  return w !== null && lifecycle.openTurn === w.turn && lifecycle.openStep === w.step
}

/** Where each call of the parked open step stands, from the log (O(step)). */
export function restoredStep(events: readonly LogEvent[], lifecycle: LifecycleState, approvals: ApprovalsState): RestoredStep {
  const turn = lifecycle.openTurn!
  const step = lifecycle.openStep!
  let start = events.length - 1
  while (start >= 0 && !(events[start]!.type === 'step/start' && (events[start] as EventOf<'step/start'>).data.step === step)) start--
  let blocks: ToolCallBlock[] = []
  const called = new Map<string, { seq: number; args: string }>()
  const answered = new Set<string>()
  for (let i = start + 1; i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'assistant/message' && e.surfaceOp === 'append' && !(e as EventOf<'assistant/message'>).data.interrupted) {
      blocks = (e as EventOf<'assistant/message'>).data.message.content.filter(isRunnableCall)
    } else if (e.type === 'tool/call') {
      const d = (e as EventOf<'tool/call'>).data
      called.set(d.callId, { seq: e.seq, args: d.arguments })
    } else if (e.type === 'tool/result' && e.surfaceOp === 'append') answered.add((e as EventOf<'tool/result'>).data.callId)
  }
  const byCall = new Map<string, RestoredCall['approval']>()
  let decidedSinceParked = false
  const parkedSeq = approvals.waiting!.parkedSeq
  for (const r of Object.values(approvals.byId)) {
    if (r.turn !== turn || r.step !== step) continue
    const ask = called.has(r.callId) && called.get(r.callId)!.seq < r.seq
    byCall.set(r.callId, {
      id: r.approvalId, ask,
      ...(r.expiresAt !== undefined ? { expiresAt: r.expiresAt } : {}),
      decided: r.decision === null ? null : { decision: r.decision.decision, by: r.decision.by },
    })
    if (r.decision !== null && r.decision.seq > parkedSeq) decidedSinceParked = true
  }
  const calls = blocks.map((block): RestoredCall => {
    const c = called.get(block.id)
    return {
      block,
      callSeq: c?.seq ?? null,
      calledArguments: c?.args ?? null,
      committed: answered.has(block.id),
      approval: byCall.get(block.id) ?? null,
    }
  })
  return { turn, step, calls, decidedSinceParked }
}
