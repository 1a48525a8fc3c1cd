/**
 * Approval decisions, re-issued at their recorded positions (docs/spec/lifecycle.md §9 "Re-execution and
 * fuzzing"; P4: decisions are recorded input). A person's decision (`by: user`) is given to the
 * agent as recorded (the decision exactly as logged, edited arguments as their recorded JSON
 * text); an expiry (`by: expired`) fires the step's expiry timer, which then reads the recorded
 * clock; `superseded` and `canceled` decisions are not issued: they follow from the recorded
 * steer and cancel (inputs.ts, cancels.ts), which the agent turns into them itself.
 */
import { applyDecision } from '../../agent/approvals.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import type { Host } from './state.js'

/** A decision from outside the agent's own run (a person's, an expiry): an input the pump issues. */
export function decisionInput(next: LogEvent): boolean {
  if (next.type !== 'tool/approval-decided') return false
  const k = (next as EventOf<'tool/approval-decided'>).data.by.kind
  return k === 'user' || k === 'expired'
}

/** Issues the decision `next` records, when it is one we issue. True when it did. Throws (a
 * divergence, see run.ts) when the agent refuses it. */
export function issueDecision(rx: Host, next: LogEvent): boolean {
  if (next.type !== 'tool/approval-decided') return false
  const d = (next as EventOf<'tool/approval-decided'>).data
  if (d.by.kind === 'user') {
    rx.opts.trace?.(`decision ${d.decision.kind} of ${d.approvalId} at seq ${rx.len}`)
    applyDecision(rx.agent, d.approvalId, d.decision, d.by)
    return true
  }
  if (d.by.kind === 'expired') {
    let fired = false
    for (const t of rx.expiryTimers) {
      if (t.cleared) continue
      t.cleared = true
      rx.expiryTimers.delete(t)
      rx.opts.trace?.(`expiry timer fired at seq ${rx.len}`)
      t.fn()
      fired = true
    }
    return fired
  }
  return false
}
