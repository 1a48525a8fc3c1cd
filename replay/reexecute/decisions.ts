/**
 * Approval decisions, re-issued at their recorded positions (docs/spec/lifecycle.md §9 "Re-execution and
 * fuzzing"; P4: decisions are recorded input). A person's decision (`by: user`) is given to the
 * agent as recorded (the decision exactly as logged, edited arguments as their recorded JSON
 * text); an expiry (`by: expired`) fires the step's expiry timer, which then reads the recorded
 * clock; `superseded` and `canceled` decisions are not issued: they follow from the recorded
 * steer and cancel (inputs.ts, cancels.ts), which the agent turns into them itself.
 */
import { applyDecision } from '../../agent/approvals.js'
import { applyAnswer } from '../../agent/inputs.js'
import { diverge } from './compare.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import type { Host } from './state.js'

/** A decision or an answer from outside the agent's own run (a person's, an expiry): an input the pump issues. */
export function decisionInput(next: LogEvent): boolean {
  if (next.type !== 'tool/approval-decided' && next.type !== 'tool/input-provided') return false
  const k = (next as EventOf<'tool/approval-decided'>).data.by.kind
  return k === 'user' || k === 'expired'
}

/**
 * Issues the recorded answer `next` to an input round (docs/spec/lifecycle.md §11 "Re-execution
 * and fuzzing": answers are external input), right after the matching `tool/input-requested`: a
 * person's through `agent.answer`'s checks (a refusal is a divergence naming the field the answer
 * no longer fits), an expiry by firing the expiry timer. True when it did (or is doing: an answer
 * is checked asynchronously, and is issued once).
 */
export function issueAnswer(rx: Host, next: LogEvent): boolean {
  if (next.type !== 'tool/input-provided') return false
  const d = (next as EventOf<'tool/input-provided'>).data
  if (d.by.kind === 'expired') return fireExpiry(rx)
  if (d.by.kind !== 'user') return false
  if (rx.answered.has(next.seq)) return true
  rx.answered.add(next.seq)
  rx.opts.trace?.(`answer ${d.answer.action} of ${d.requestId} at seq ${rx.len}`)
  applyAnswer(rx.agent, d.requestId, d.answer, d.by).then(() => rx.schedule(), (err: unknown) => {
    const e = err as { code?: unknown; field?: unknown; message?: unknown }
    diverge(rx, {
      seq: next.seq, expected: next, actual: null, kind: 'missing',
      waiting: `refused the recorded answer to input request ${d.requestId} (round ${d.round} of call ${d.callId}): ${String(e?.code ?? 'ERROR')}${typeof e?.field === 'string' ? ` at ${e.field}` : ''}: ${String(e?.message ?? err)}`,
    })
  })
  return true
}

function fireExpiry(rx: Host): boolean {
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
  if (d.by.kind === 'expired') return fireExpiry(rx)
  return false
}
