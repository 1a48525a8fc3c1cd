/**
 * The transcript as `turnlog replay` prints it, one line per item, from the transcript reducer's
 * state (reducers/transcript.ts): turns, steps, messages (user, assistant text, thinking, tool
 * calls with arguments, tool results, errors, replaced/compacted), retries, compactions, prunes;
 * what the AI SDK bridge logs besides (issue 23): signed and redacted thinking, provider-executed
 * calls and their results, sources, files, refusals.
 * Every line carries the seq it came from, which links it to the timeline and the scrubber.
 */
import type { ModelMessage } from '../../events/index.js'
import type { TopItem, TranscriptMessage, TranscriptState, TurnItem } from '../../reducers/transcript.js'
import { oneLine } from './dom.js'
import { str } from '../../replay/timeline.js'
import { budgetText, decidedByText, durationText, inputActionText } from '../../replay/labels.js'
import type { TranscriptStep } from '../../reducers/transcript.js'

export interface Line { seq: number; depth: number; kind: string; text: string }

export function transcriptLines(t: TranscriptState): Line[] {
  const out: Line[] = []
  for (const item of (t as { items: TopItem[] }).items) top(item, out)
  return out
}

function top(item: TopItem, out: Line[]): void {
  switch (item.kind) {
    case 'turn': {
      const cause = item.cause ? ` (retry of turn ${str((item.cause as { of?: unknown }).of)}: ${str(item.cause.kind)})` : ''
      out.push({ seq: item.seq, depth: 0, kind: 'turn', text: `Turn ${item.turn}${cause}` })
      for (const it of item.items) turnItem(it, out, 1)
      if (item.end) out.push({ seq: item.end.seq, depth: 0, kind: `end ${item.end.reason.kind}`, text: `turn ${item.turn} ended: ${reason(item.end.reason)}` })
      break
    }
    case 'seed-end':
      out.push({ seq: item.seq, depth: 0, kind: 'seed', text: '— end of seed (inherited prefix) —' })
      break
    default:
      turnItem(item, out, 0)
  }
}

function reason(r: { kind: string }): string {
  const x = r as { kind: string; failure?: { message?: string }; cause?: { kind?: string } }
  if (x.kind === 'budget') return budgetText(x as Record<string, unknown>)
  if (x.failure) return `${x.kind}: ${oneLine(str(x.failure.message))}`
  if (x.cause) return `${x.kind} (${str(x.cause.kind)})`
  return x.kind
}

function turnItem(it: TurnItem, out: Line[], depth: number): void {
  switch (it.kind) {
    case 'step': {
      const u = it.usage ? ` · ${it.usage.inputTokens} in / ${it.usage.outputTokens} out` : ''
      out.push({ seq: it.seq, depth, kind: 'step', text: `Step ${it.turn}.${it.step}${u}` })
      // approvals, parked time, children (docs/spec/lifecycle.md §9, §10), merged with the messages by seq
      const waits = waitLines(it, depth + 1)
      let w = 0
      for (const m of it.messages) {
        for (; w < waits.length && waits[w]!.seq < m.seq; w++) out.push(waits[w]!)
        message(m, out, depth + 1)
      }
      for (; w < waits.length; w++) out.push(waits[w]!)
      if (it.end && it.end.outcome.kind !== 'tools' && it.end.outcome.kind !== 'stop') {
        out.push({ seq: it.end.seq, depth: depth + 1, kind: `outcome ${it.end.outcome.kind}`, text: `step ended: ${reason(it.end.outcome)}` })
      }
      break
    }
    case 'message':
      message(it, out, depth)
      break
    case 'retry':
      out.push({ seq: it.seq, depth, kind: 'retry', text: `request retry ${it.attempt} after ${it.delayMs} ms: ${oneLine(str(it.failure.message))}` })
      break
    case 'prune':
      out.push({ seq: it.seq, depth, kind: 'prune', text: `pruned tool result ${it.callId} (seq ${it.shadowedSeq}, ${it.originalChars} chars)` })
      break
    case 'compaction': {
      const sum = it.summary ? `: ${oneLine(it.summary.summary, 200)}` : ''
      out.push({ seq: it.seq, depth, kind: 'compaction', text: `Compaction ${it.compactionId}${sum}` })
      for (const m of it.items) if (m.kind === 'message') message(m, out, depth + 1)
      if (it.end?.error) out.push({ seq: it.end.seq, depth: depth + 1, kind: 'error', text: `compaction failed: ${oneLine(str(it.end.error.message))}` })
      break
    }
  }
}

function message(m: TranscriptMessage, out: Line[], depth: number): void {
  const role = m.message.role
  const flags = m.replaced ? ` [${m.replacedAs ?? 'replaced'}]` : m.surfaceOp === 'replace' ? ' [replacement]' : ''
  const blocks = contentLines(m.message)
  if (m.type === 'tool/result') {
    out.push({ seq: m.seq, depth, kind: m.error ? 'tool-error' : 'tool-result', text: `${m.callId ?? '?'} → ${oneLine(blocks.join(' '), 300)}${m.error ? ` (error: ${oneLine(str(m.error.message))})` : ''}${flags}` })
    return
  }
  const msg = m.message as ModelMessage & { content: unknown }
  const content = Array.isArray(msg.content) ? (msg.content as Array<Record<string, unknown>>) : []
  if (content.length === 0) out.push({ seq: m.seq, depth, kind: role, text: `(empty)${flags}` })
  for (const b of content) out.push(blockLine(b, m.seq, depth, role, flags))
  // issue 23: a refusal is the model's answer, marked apart from an ordinary one
  if (m.finish === 'refusal') {
    out.push({ seq: m.seq, depth, kind: 'refusal', text: m.explanation !== undefined ? `refused: ${oneLine(m.explanation, 400)}` : 'refused' })
  }
}

/**
 * One content block as a line. Provider data (a thinking signature, redacted thinking's data) is
 * for the provider: the line says it is there, never what it is (issue 23).
 */
function blockLine(b: Record<string, unknown>, seq: number, depth: number, role: string, flags: string): Line {
  const t = String(b.type)
  const pd = b.providerData !== null && typeof b.providerData === 'object' ? (b.providerData as Record<string, Record<string, unknown> | undefined>) : undefined
  const ofAny = (key: string) => pd !== undefined && Object.values(pd).some((v) => v !== null && typeof v === 'object' && v[key] !== undefined)
  switch (t) {
    case 'reasoning': {
      if (str(b.text) === '' && ofAny('redactedData')) return { seq, depth, kind: 'thinking', text: `[redacted thinking, kept for the provider]${flags}` }
      return { seq, depth, kind: 'thinking', text: `${oneLine(str(b.text), 300)}${ofAny('signature') ? ' [signed]' : ''}${flags}` }
    }
    case 'tool-call':
      if (b.providerExecuted === true) return { seq, depth, kind: 'provider call', text: `${str(b.name)}(${oneLine(str(b.arguments), 300)}) ${str(b.id)} [ran at the provider]${flags}` }
      return { seq, depth, kind: 'tool-call', text: `${str(b.name)}(${oneLine(str(b.arguments), 300)}) ${str(b.id)}${flags}` }
    case 'tool-result':
      return { seq, depth, kind: b.isError === true ? 'provider error' : 'provider result', text: `${str(b.id)} ${str(b.name)} → ${oneLine(JSON.stringify(b.result) ?? '', 300)}${flags}` }
    case 'text':
      return { seq, depth, kind: role, text: oneLine(str(b.text), 400) + flags }
    // citations and generated files reach the report
    case 'source': {
      const title = b.title ?? b.filename
      return { seq, depth, kind: 'source', text: `${title !== undefined ? `${oneLine(str(title), 200)} ` : ''}${oneLine(str(b.url ?? b.mediaType ?? ''), 300)}${flags}` }
    }
    case 'file':
      return { seq, depth, kind: 'file', text: `${oneLine(str(b.mediaType), 80)}, ${typeof b.data === 'string' ? `${b.data.length} base64 chars` : oneLine(str(b.url), 300)}${flags}` }
    case 'image':
      return { seq, depth, kind: role, text: `[image ${oneLine(str(b.mediaType), 80)}]${flags}` }
    default:
      return { seq, depth, kind: role, text: `[${oneLine(t, 40)}]${flags}` }
  }
}

/** The text of a message's blocks (text, reasoning, tool calls), for one-line display. */
export function contentLines(m: unknown): string[] {
  const c = (m as { content?: unknown })?.content
  if (typeof c === 'string') return [c]
  if (!Array.isArray(c)) return []
  return c.map((b: Record<string, unknown>) =>
    b.type === 'tool-call' ? `${str(b.name)}(${str(b.arguments)})` : typeof b.text === 'string' ? b.text : `[${str(b.type)}]`)
}

/** A step's approval requests, decisions, input rounds and their answers, parked times and child sessions as lines, in seq order. */
function waitLines(s: TranscriptStep, depth: number): Line[] {
  const out: Line[] = []
  for (const a of s.approvals ?? []) {
    const q = a.question !== undefined ? ` “${oneLine(a.question, 200)}”` : ''
    out.push({ seq: a.seq, depth, kind: 'approval', text: `${a.approvalId}: ${a.name || '?'}(${oneLine(a.arguments, 200)}) ${a.callId}${q}` })
    const d = a.decision
    if (d === null) continue
    const how = d.kind === 'approve'
      ? `approved by ${decidedByText(d.by)}${d.arguments !== undefined ? ` with edited arguments ${oneLine(d.arguments, 200)}` : ''}`
      : `denied by ${decidedByText(d.by)}${d.reason !== undefined ? `: ${oneLine(d.reason, 200)}` : ''}`
    out.push({ seq: d.seq, depth, kind: 'decision', text: `${a.approvalId} ${how} after ${durationText(d.time - a.time)}` })
  }
  for (const r of s.inputs ?? []) {
    const call = `${r.name || '?'}(${oneLine(r.arguments, 200)})`
    const asked = r.asked.some((q) => q.kind === 'client')
      ? `${r.requestId}: client tool ${call} ${r.callId} waits for the client`
      : `${r.requestId}: round ${r.round} of ${call} ${r.callId} asks ${r.asked.map((q) => `${q.key} (${q.kind})`).join(', ')}`
    out.push({ seq: r.seq, depth, kind: 'input', text: asked })
    const a = r.answer
    if (a !== null) out.push({ seq: a.seq, depth, kind: 'answer', text: `${r.requestId} ${inputActionText(a.action)} by ${decidedByText(a.by)} after ${durationText(a.time - r.time)}` })
  }
  for (const p of s.parked ?? []) {
    out.push({ seq: p.seq, depth, kind: 'parked', text: `waiting for ${p.approvals.join(', ')} · ${p.end !== null ? durationText(p.end.time - p.time) : 'still parked'}` })
  }
  for (const k of s.children ?? []) out.push({ seq: k.seq, depth, kind: 'child', text: `child session ${k.child} (call ${k.callId})` })
  return out.sort((x, y) => x.seq - y.seq)
}
