/**
 * `turnlog replay`'s lines for what a step waited for (docs/spec/lifecycle.md §9, §10, §11), from the transcript's
 * `approvals`, `inputs`, `parked` and `children` (reducers/transcript-waits.ts): each request, each decision
 * (who, when, edited arguments, reason, how long it waited), each input round (what it asked: keys
 * and kinds) and its answer (accepted, declined or cancelled, by whom, after how long), each parked time, each child session
 * with where to read it. Every line keeps its seq so print.ts merges them with the step's messages
 * in log order.
 */
import type { TranscriptStep } from '../reducers/index.js'
import { decidedByText, durationText, inputActionText } from '../replay/labels.js'
import { inline } from './escape.js'
import type { Colors } from './io.js'

/** One line to merge into a step's printout at `seq`. */
export interface SeqLine {
  seq: number
  line: string
}

/** Where a child session can be read (a JSONL path beside the parent, a postgres URL), if known. */
export type ChildLink = (childId: string) => string | undefined

const iso = (t: number): string => (Number.isFinite(t) ? new Date(t).toISOString() : '?')

/** The step's wait lines, in seq order. */
export function waitLines(s: TranscriptStep, c: Colors, indent: string, one: (s: string, max?: number) => string, childLink?: ChildLink): SeqLine[] {
  const out: SeqLine[] = []
  for (const a of s.approvals ?? []) {
    const expires = a.expiresAt !== undefined ? c.dim(` expires ${iso(a.expiresAt)}`) : ''
    const question = a.question !== undefined ? ` “${one(a.question, 300)}”` : ''
    out.push({
      seq: a.seq,
      line: `${indent}${c.yellow(`? approval ${one(a.approvalId, 120)} asked for ${one(a.name || '?', 120)}(${one(a.arguments)})`)} ${c.dim(one(a.callId, 120))}${question}${expires} ${c.dim(`#${a.seq}`)}`,
    })
    const d = a.decision
    if (d === null) continue
    const who = decidedByText(d.by)
    const waited = c.dim(` after ${durationText(d.time - a.time)}, at ${iso(d.time)}`)
    const text = d.kind === 'approve'
      ? c.green(`✓ approval ${one(a.approvalId, 120)} approved by ${inline(who)}${d.arguments !== undefined ? ` with edited arguments ${one(d.arguments)}` : ''}`)
      : c.red(`✗ approval ${one(a.approvalId, 120)} denied by ${inline(who)}${d.reason !== undefined ? `: ${one(d.reason, 300)}` : ''}`)
    out.push({ seq: d.seq, line: `${indent}${text}${waited} ${c.dim(`#${d.seq}`)}` })
  }
  for (const r of s.inputs ?? []) {
    const expires = r.expiresAt !== undefined ? c.dim(` expires ${iso(r.expiresAt)}`) : ''
    const call = `${one(r.name || '?', 120)}(${one(r.arguments)})`
    const asked = r.asked.some((q) => q.kind === 'client')
      ? `? input ${one(r.requestId, 120)}: client tool ${call} waits for the client`
      : `? input ${one(r.requestId, 120)} round ${r.round} asked by ${call}: ${r.asked.map((q) => `${one(q.key, 80)} (${q.kind})`).join(', ')}`
    out.push({ seq: r.seq, line: `${indent}${c.yellow(asked)} ${c.dim(one(r.callId, 120))}${expires} ${c.dim(`#${r.seq}`)}` })
    const a = r.answer
    if (a === null) continue
    const waited = c.dim(` after ${durationText(a.time - r.time)}, at ${iso(a.time)}`)
    const how = `input ${one(r.requestId, 120)} ${inputActionText(a.action)} by ${inline(decidedByText(a.by))}`
    out.push({ seq: a.seq, line: `${indent}${a.action === 'accept' ? c.green(`✓ ${how}`) : c.red(`✗ ${how}`)}${waited} ${c.dim(`#${a.seq}`)}` })
  }
  for (const p of s.parked ?? []) {
    const how = p.end !== null ? `${durationText(p.end.time - p.time)} (until #${p.end.seq})` : 'still parked: the log ends here'
    out.push({ seq: p.seq, line: `${indent}${c.magenta(`⏸ parked, waiting for ${p.approvals.map((x) => one(x, 120)).join(', ')} · ${how}`)} ${c.dim(`#${p.seq}`)}` })
  }
  for (const k of s.children ?? []) {
    const where = childLink?.(k.child)
    out.push({
      seq: k.seq,
      line: `${indent}${c.cyan(`↳ child session ${one(k.child, 200)}`)} ${c.dim(`(call ${one(k.callId, 120)})`)}${where !== undefined ? c.dim(` · turnlog replay ${inline(where)}`) : ''} ${c.dim(`#${k.seq}`)}`,
    })
  }
  return out.sort((x, y) => x.seq - y.seq)
}
