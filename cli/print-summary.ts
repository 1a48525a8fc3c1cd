/**
 * The summary under `turnlog replay`'s transcript: counts of turns, steps, calls, failures, usage;
 * approvals (asked, decided, open, parked time), input rounds (asked, answered how, open, the
 * time they waited), children and wakeups when the log has them;
 * resume's give-ups. Split from print.ts.
 */
import { durationText } from '../replay/labels.js'
import { givenUpText, str } from '../replay/timeline.js'
import { inline } from './escape.js'
import type { Colors } from './io.js'
import type { PrintFold } from './print-fold.js'
import type { LogHeader } from '../events/jsonl.js'
import { formatUsage, one, printContext, titleLine, transcriptLines } from './print.js'

export function summaryLines(fold: PrintFold, c: Colors): string[] {
  const n = fold.counts
  const state = fold.state
  const ends = Object.entries(n.turnsByEnd).map(([k, v]) => `${v} ${inline(k)}`).join(', ')
  const u = state.usage.total
  const open = state.lifecycle.openTurn !== null ? c.yellow(` · turn ${state.lifecycle.openTurn} still open`) : ''
  return [
    c.bold('Summary'),
    `  turns        ${n.turns}${ends ? c.dim(` (${ends})`) : ''}${open}`,
    `  steps        ${n.steps}`,
    `  tool calls   ${n.toolCalls}${n.toolErrors ? c.red(` (${n.toolErrors} failed)`) : ''}`,
    `  failures     ${n.failures ? c.red(String(n.failures)) : '0'}`,
    `  retries      ${n.retries ? c.yellow(String(n.retries)) : '0'}`,
    `  compactions  ${n.compactions}${n.replaced ? c.dim(` (${n.replaced} replacement(s))`) : ''}`,
    `  usage        ${u.requests} request(s) · ${formatUsage(u)}${state.usage.failed.requests ? c.dim(` (failed requests: ${state.usage.failed.requests})`) : ''}`,
    `  events       ${n.events} · surface ${state.surface.seqs.length} · history ${state.history.messages.length} message(s)`,
    ...waitSummaryLines(fold, c),
    ...givenUpLines(fold, c),
  ]
}

/** Approvals, input rounds, children and wakeups in the summary: only for a log that has them. */
function waitSummaryLines(fold: PrintFold, c: Colors): string[] {
  const out: string[] = []
  const all = Object.values(fold.state.approvals.byId)
  if (all.length > 0) {
    const approved = all.filter((a) => a.decision?.decision.kind === 'approve').length
    const denied = all.filter((a) => a.decision?.decision.kind === 'deny').length
    const open = all.length - approved - denied
    let parkedMs = 0
    for (const t of fold.state.transcript.items) {
      if (t.kind !== 'turn') continue
      for (const s of t.items) if (s.kind === 'step') for (const p of s.parked ?? []) if (p.end !== null) parkedMs += p.end.time - p.time
    }
    out.push(`  approvals    ${all.length} asked · ${approved} approved, ${denied} denied${open ? c.yellow(`, ${open} open`) : ''} · parked ${durationText(parkedMs)}${fold.state.approvals.waiting ? c.yellow(' · parked now') : ''}`)
  }
  const rounds = Object.values(fold.state.inputs.byId)
  if (rounds.length > 0) {
    const by = (action: string): number => rounds.filter((r) => r.answer?.answer.action === action).length
    const open = rounds.filter((r) => r.answer === null).length
    let waitedMs = 0
    for (const r of rounds) if (r.answer !== null) waitedMs += r.answer.time - r.time
    out.push(`  inputs       ${rounds.length} round(s) asked · ${by('accept')} accepted, ${by('decline')} declined, ${by('cancel')} cancelled${open ? c.yellow(`, ${open} open`) : ''} · answered after ${durationText(waitedMs)} in all`)
  }
  const kids = fold.counts.children
  if (kids.length > 0) out.push(`  children     ${kids.length} (${kids.slice(0, 5).map((k) => one(k, 120)).join(', ')}${kids.length > 5 ? ', …' : ''})`)
  const w = fold.counts.schedules
  if (w.created > 0) {
    const pending = fold.state.schedules.pending
    const next = pending.length > 0 ? c.dim(` (next ${one(pending.reduce((a, b) => (b.due < a.due ? b : a)).scheduleId, 120)} at ${new Date(Math.min(...pending.map((p) => p.due))).toISOString()})`) : ''
    out.push(`  wakeups      ${w.created} set · ${w.fired} fired · ${w.canceled} canceled · ${pending.length} pending${next}`)
  }
  return out
}

/** Resume's give-ups (docs/spec/lifecycle.md §8): each names the acknowledged messages left unanswered. */
function givenUpLines(fold: PrintFold, c: Colors): string[] {
  return fold.givenUp.map(({ seq, data }) => {
    const msgs = Array.isArray(data.messages) ? data.messages.map((m) => inline(str(m))) : []
    return c.red(`  given up     ${inline(givenUpText(data))} (seq ${seq}): ${msgs.length} message(s) unanswered: ${msgs.join(', ')}`)
  })
}

/** The whole `turnlog replay` page: a title, the transcript, the summary. */
export function replayLines(fold: PrintFold, c: Colors, source: { header?: LogHeader; file?: string } = {}): string[] {
  return [titleLine(fold, c, source), '', ...transcriptLines(fold.state, printContext(fold, c)), ...summaryLines(fold, c)]
}
