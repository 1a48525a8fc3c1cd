/**
 * `turnlog replay --at SEQ`: the state as of a seq (lifecycle position, pending calls, inbox,
 * surface, usage), printed from a fold that stopped right after it. Split from print.ts, which
 * prints the transcript and the summary.
 */
import type { UserMessage } from '../events/index.js'
import { openApprovals } from '../reducers/approvals.js'
import { inline } from './escape.js'
import type { Colors } from './io.js'
import type { PrintFold } from './print-fold.js'
import { formatUsage, one, promptText, stepEndText, turnEndText } from './print.js'

function preview(m: UserMessage): string {
  return one(promptText(m, 80).replace(/\s+/g, ' '), 80)
}

/**
 * `turnlog replay --at SEQ`: the state as of SEQ, from a fold that stopped right after it
 * (`fold.last` is the event at SEQ; the rest of the log was not read).
 */
export function stateAtLines(fold: PrintFold, seq: number, c: Colors): string[] {
  const e = fold.last!
  const state = fold.state
  const l = state.lifecycle
  const where = l.openTurn === null
    ? 'idle (no turn open)'
    : `in turn ${l.openTurn}${l.openTurnCause ? ` (${l.openTurnCause.kind} of turn ${l.openTurnCause.of})` : ''}, ` +
      (l.openStep === null ? `between steps (last step ${l.lastStep})` : `step ${l.openStep}${l.streaming ? ', streaming' : ''}`)
  const out = [
    c.bold(`State as of seq ${seq}`) + c.dim(` · ${inline(e.type)}`),
    `  position     ${where}`,
    `  turns        ${l.lastTurn} started${l.lastTurnEndReason ? ` · last ended: ${turnEndText(l.lastTurnEndReason)}` : ''}`,
  ]
  if (l.lastStepOutcome) out.push(`  last step    ${stepEndText(l.lastStepOutcome)}`)
  if (l.pendingToolCalls.length) {
    out.push(`  pending tool calls (${l.pendingToolCalls.length})`)
    for (const p of l.pendingToolCalls) out.push(`    ${c.cyan(`${one(p.name, 120)}(${one(p.arguments, 120)})`)} ${c.dim(`${one(p.callId, 120)} #${p.seq}`)}`)
  } else {
    out.push('  pending tool calls  none')
  }
  if (l.openCompaction !== null) out.push(`  compaction   ${c.magenta(`bracket ${one(l.openCompaction, 120)} open`)}`)
  for (const [name, list] of [['next-turn', state.inbox.nextTurn], ['next-step', state.inbox.nextStep]] as const) {
    out.push(`  inbox ${name.padEnd(9)} ${list.length} pending`)
    for (const m of list) out.push(`    ${c.dim(one(m.id, 120))} ${preview(m)}`)
  }
  // docs/spec/lifecycle.md §9, §10: what the session owes people and what it will wake up for
  const open = openApprovals(state.approvals)
  if (open.length > 0) {
    const w = state.approvals.waiting
    out.push(`  approvals    ${open.length} open${w ? c.yellow(` · parked since seq ${w.parkedSeq}`) : ''}`)
    for (const a of open) out.push(`    ${one(a.approvalId, 120)} ${c.cyan(`${one(a.name || '?', 120)}(${one(a.arguments, 120)})`)} ${c.dim(`${one(a.callId, 120)} #${a.seq}`)}`)
  }
  const pending = state.schedules.pending
  if (pending.length > 0) {
    out.push(`  wakeups      ${pending.length} pending`)
    for (const p of pending) out.push(`    ${one(p.scheduleId, 120)} due ${new Date(p.due).toISOString()}${p.every !== undefined ? ` every ${p.every} ms` : ''} ${c.dim(`${p.deliver}, when busy ${p.whenBusy}`)}`)
  }
  out.push(
    `  surface      ${state.surface.seqs.length} seq(s) · ${state.surface.generation} replacement(s)`,
    `  history      ${state.history.messages.length} message(s)`,
    `  header       ${l.headerSeq !== null ? `seq ${l.headerSeq} (${typeof l.header?.config.model === 'string' ? one(l.header.config.model, 120) : '?'})` : 'none yet'}`,
    `  usage        ${state.usage.total.requests} request(s) · ${formatUsage(state.usage.total)}`,
  )
  return out
}
