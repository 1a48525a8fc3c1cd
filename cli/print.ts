/**
 * The human printer shared by `turnlog replay` and `turnlog demo`: the transcript (the reducers'
 * `transcript` fold, walked top-down), a summary, and the state as of a seq. Pure functions from
 * events and state to lines; colours come in as a picocolors instance (plain when disabled).
 */
import type { Block, ModelMessage, StepOutcome, TurnEndReason, Usage, UserMessage } from '../events/index.js'
import type {
  ReplayState, TopItem, TranscriptCompaction, TranscriptMessage, TranscriptStep, TranscriptTurn, TurnItem, UsageTotals,
} from '../reducers/index.js'
import type { LogHeader } from '../events/jsonl.js'
import { inline, text } from './escape.js'
import type { Colors } from './io.js'
import { PrintFold } from './print-fold.js'
import { budgetText } from '../replay/labels.js'
import { waitLines, type ChildLink } from './print-waits.js'

export { PrintFold, type LogCounts } from './print-fold.js'

/** Longest tool argument or tool result shown in full; longer ones are cut with a note. */
export const MAX_INLINE_CHARS = 600

export interface PrintContext {
  c: Colors
  /** Tool names by call id (from the `tool/call` events). */
  toolNames: ReadonlyMap<string, string>
  /** The prompt(s) each turn claimed from next-turn, by the turn's `turn/start` seq (shown for turns with no step). */
  claimed: ReadonlyMap<number, UserMessage[]>
  /** Where each child session can be read (shown after its `child/spawned`), when known. */
  childLink?: ChildLink
}

/** The printer's context from a fold. */
export function printContext(fold: PrintFold, c: Colors, childLink?: ChildLink): PrintContext {
  return { c, toolNames: fold.toolNames, claimed: fold.claimed, ...(childLink !== undefined ? { childLink } : {}) }
}

// ---------------------------------------------------------------------------------------------
// Small formatters

function clip(s: string, max = MAX_INLINE_CHARS): string {
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more chars)`
}

/** One line of log text, escaped and clipped. */
export function one(s: string, max = MAX_INLINE_CHARS): string {
  return inline(clip(s, max))
}

/** Indents every line after the first so multi-line text stays in its column. */
function hang(text: string, indent: string): string {
  return text.replace(/\r?\n/g, `\n${indent}`)
}

export function formatUsage(u: Usage | UsageTotals | null | undefined): string {
  if (!u) return ''
  const parts = [`${u.inputTokens} in`, `${u.outputTokens} out`]
  if (u.cacheReadTokens) parts.push(`${u.cacheReadTokens} cache-read`)
  if (u.cacheWriteTokens) parts.push(`${u.cacheWriteTokens} cache-write`)
  if (u.reasoningTokens) parts.push(`${u.reasoningTokens} reasoning`)
  return parts.join(' / ')
}

function failureText(f: { code: string; message: string; status?: number; retryAfterMs?: number }): string {
  const extra: string[] = []
  if (f.status !== undefined) extra.push(`status ${f.status}`)
  if (f.retryAfterMs !== undefined) extra.push(`retry-after ${f.retryAfterMs} ms`)
  return `${inline(f.code)}${f.message ? `: ${one(f.message)}` : ''}${extra.length ? ` (${extra.join(', ')})` : ''}`
}

export function turnEndText(r: TurnEndReason): string {
  switch (r.kind) {
    case 'aborted':
      return `aborted (${r.cause.kind === 'hook' ? `hook: ${one(r.cause.reason)}` : r.cause.kind})`
    case 'error':
      return `error ${inline(r.failure.code)}`
    case 'blocked':
      return 'blocked (agent/pre-step rejected the prompt)'
    case 'budget':
      return inline(budgetText(r as unknown as Record<string, unknown>))
    default:
      return r.kind
  }
}

export function stepEndText(o: StepOutcome): string {
  return o.kind === 'failed' ? `failed ${failureText(o.failure)}` : o.kind
}

function blockLines(b: Block, c: Colors, indent: string): string[] {
  switch (b.type) {
    case 'text':
      return [hang(text(b.text), indent)]
    case 'reasoning': {
      // provider data is for the provider (issue 23): say it is there, never print it
      const pd = Object.values(b.providerData ?? {})
      if (b.text === '' && pd.some((v) => v?.redactedData !== undefined)) return [c.dim(c.italic('thinking: [redacted, kept for the provider]'))]
      const signed = pd.some((v) => v?.signature !== undefined) ? ' [signed]' : ''
      return [c.dim(c.italic(`thinking: ${hang(text(b.text), indent + '          ')}${signed}`))]
    }
    case 'image':
      return [c.dim(`[image ${one(b.mediaType, 80)}, ${b.data.length} base64 chars]`)]
    case 'tool-call':
      return [c.cyan(`${b.providerExecuted === true ? '⇢ (provider) ' : '→ '}${one(b.name, 120)}(${one(b.arguments)})`) + c.dim(`  ${one(b.id, 120)}`)]
    // issue 23: what the AI SDK bridge logs besides text and calls
    case 'source':
      return [c.dim(`[source ${one(b.title ?? b.filename ?? '', 120)} ${one(b.url ?? b.mediaType ?? '', 200)}]`)]
    case 'file':
      return [c.dim(`[${b.reasoning === true ? 'reasoning ' : ''}file ${one(b.mediaType, 80)}, ${b.data !== undefined ? `${b.data.length} base64 chars` : one(b.url ?? '', 200)}]`)]
    case 'custom': // provider content for the provider: say it is there, never print it
      return [c.dim(`[${one(b.kind, 80)}, kept for the provider]`)]
    case 'tool-result':
      return [c.dim(`⇠ (provider) ${one(b.name, 120)}${b.isError === true ? ' error' : ''}: ${one(JSON.stringify(b.result) ?? '')}`)]
  }
}

function sourceLabel(m: UserMessage): string {
  switch (m.source.kind) {
    case 'user':
      return 'user'
    case 'hook':
      return `user (hook ${one(m.source.name, 120)})`
    case 'tool':
      return `user (tool ${one(m.source.callId, 120)})`
    case 'compaction':
      return 'summary'
    case 'resume':
      return `user (re-sent by resume, was ${m.source.of})`
    case 'schedule':
      return `user (wakeup ${one(m.source.scheduleId, 120)})`
  }
}

function marks(m: TranscriptMessage, c: Colors): string {
  const out: string[] = []
  if (m.replaces && m.replaces.length) out.push(c.yellow(`[replaces seq ${m.replaces.join(', ')}]`))
  if (m.replaced) {
    const how = m.replacedAs ?? 'replaced'
    out.push(c.yellow(`[${how}${m.replacedBy !== undefined ? ` by seq ${m.replacedBy}` : ''}]`))
  }
  if (m.interrupted) out.push(c.yellow('[interrupted]'))
  return out.length ? ' ' + out.join(' ') : ''
}

const LABEL_WIDTH = 10

function label(text: string, paint: (s: string) => string): string {
  return paint(text.padEnd(LABEL_WIDTH))
}

/** One transcript message: `role  content…` with the continuation lines under the content. */
export function messageLines(m: TranscriptMessage, ctx: PrintContext, indent: string): string[] {
  const { c } = ctx
  const msg = m.message as ModelMessage
  const pad = indent + ' '.repeat(LABEL_WIDTH + 1)
  const out: string[] = []
  const seq = c.dim(`#${m.seq}`)
  if (m.type === 'user/message') {
    const u = msg as UserMessage
    const head = `${indent}${label(sourceLabel(u), u.source.kind === 'compaction' ? c.magenta : c.green)} `
    const body = bodyLines(u.content, c, pad)
    out.push(`${head}${body[0] ?? c.dim('(empty)')}${marks(m, c)} ${c.dim(one(u.id, 120))} ${seq}`)
    for (let i = 1; i < body.length; i++) out.push(pad + body[i])
    return out
  }
  if (m.type === 'assistant/message') {
    const head = `${indent}${label('assistant', c.blue)} `
    const body = bodyLines(msg.content, c, pad)
    // an interrupted message has no finish of the provider's (the log's `finish` is a placeholder
    // there): its [interrupted] mark says how it ended (issue 38.17)
    const facts = m.interrupted ? '' : m.finish === 'refusal' && m.explanation !== undefined ? `refusal: ${one(m.explanation, 400)}` : m.finish ?? ''
    const tail = `${facts !== '' ? ` ${c.dim(facts)}` : ''} ${seq}`
    out.push(`${head}${body[0] ?? c.dim('(no content)')}${body.length <= 1 ? marks(m, c) + tail : ''}`)
    for (let i = 1; i < body.length; i++) out.push(pad + body[i] + (i === body.length - 1 ? marks(m, c) + tail : ''))
    return out
  }
  // tool/result
  const name = m.callId !== undefined ? ctx.toolNames.get(m.callId) : undefined
  const head = `${indent}${label('tool', c.cyan)} `
  const who = c.cyan(`${name !== undefined ? one(name, 120) : '?'} ${c.dim(one(m.callId ?? '', 120))} ← `)
  if (m.error) {
    out.push(`${head}${who}${c.red(`✗ ${one(m.error.code, 120)}: ${hang(text(clip(m.error.message)), pad)}`)}${marks(m, c)} ${seq}`)
  } else {
    const shown: string[] = []
    let size = 0
    // only what is shown is joined: a result may hold a million blocks
    for (let i = 0; i < msg.content.length && size <= MAX_INLINE_CHARS; i++) {
      const b = msg.content[i]!
      const t = b.type === 'text' ? b.text : b.type === 'image' ? `[image ${b.mediaType}]` : JSON.stringify(b)
      shown.push(t)
      size += t.length + 1
    }
    const more = msg.content.length - shown.length
    const body = shown.join('\n') + (more > 0 ? `\n… (${more} more blocks)` : '')
    out.push(`${head}${who}${hang(text(clip(body)), pad)}${marks(m, c)} ${seq}`)
  }
  return out
}

/** The lines of a message's blocks (a loop, not flatMap/spread: a message may hold a million blocks). */
function bodyLines(content: readonly Block[], c: Colors, pad: string): string[] {
  const out: string[] = []
  for (let i = 0; i < content.length; i++) {
    const ls = blockLines(content[i]!, c, pad)
    for (let k = 0; k < ls.length; k++) out.push(ls[k]!)
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// The transcript

export function transcriptLines(state: ReplayState, ctx: PrintContext): string[] {
  const out: string[] = []
  writeTranscript(state, ctx, (lines) => {
    for (let i = 0; i < lines.length; i++) out.push(lines[i]!)
  })
  return out
}

/** The transcript, handed to `write` in pieces (a long log's page is never one array of lines). */
export function writeTranscript(state: ReplayState, ctx: PrintContext, write: (lines: string[]) => void): void {
  let out: string[] = []
  for (const item of state.transcript.items) {
    topItemLines(item, ctx, out)
    if (out.length >= 4096) {
      write(out)
      out = []
    }
  }
  if (out.length) write(out)
}

function topItemLines(item: TopItem, ctx: PrintContext, out: string[]): void {
  const { c } = ctx
  switch (item.kind) {
    case 'turn':
      turnLines(item, ctx, out)
      return
    case 'seed-end':
      out.push(c.dim(`── end of the inherited prefix (seq ${item.seq}) ──`), '')
      return
    default:
      turnItemLines(item, ctx, '', out)
      if (item.kind === 'compaction') out.push('')
  }
}

function turnLines(t: TranscriptTurn, ctx: PrintContext, out: string[]): void {
  const { c } = ctx
  const cause = t.cause ? c.yellow(` (${t.cause.kind} of turn ${t.cause.of})`) : ''
  out.push(c.bold(`Turn ${t.turn}`) + cause + ' ' + c.dim(`#${t.seq}`))
  const steps = t.items.filter((i) => i.kind === 'step').length
  const claimed = ctx.claimed.get(t.seq) ?? []
  if (steps === 0 && claimed.length > 0) {
    // the prompt never entered a step (blocked, aborted before the first step): show what was claimed
    for (const m of claimed) {
      out.push(`  ${label('prompt', c.dim)} ${c.strikethrough(hang(text(promptText(m)), '             '))} ${c.dim(one(m.id, 120))}`)
    }
  }
  for (const i of t.items) turnItemLines(i, ctx, '  ', out)
  if (t.end) {
    const r = t.end.reason
    const paint = r.kind === 'completed' ? c.green : r.kind === 'error' ? c.red : c.yellow
    out.push(`  ${paint(`■ turn ${t.turn} ended: ${turnEndText(r)}`)} ${c.dim(`#${t.end.seq}`)}`)
  } else {
    out.push(`  ${c.yellow(`… turn ${t.turn} is still open`)}`)
  }
  out.push('')
}

function turnItemLines(item: TurnItem, ctx: PrintContext, indent: string, out: string[]): void {
  const { c } = ctx
  switch (item.kind) {
    case 'step':
      stepLines(item, ctx, indent, out)
      return
    case 'message': {
      const ls = messageLines(item, ctx, indent)
      for (let i = 0; i < ls.length; i++) out.push(ls[i]!)
      return
    }
    case 'retry':
      out.push(`${indent}${c.yellow(`↻ retry ${item.attempt} of step ${item.turn}.${item.step} after ${item.delayMs} ms (${one(item.failure.code, 120)})`)} ${c.dim(`#${item.seq}`)}`)
      return
    case 'prune':
      out.push(`${indent}${c.magenta(`✂ pruned the result of ${one(item.callId, 120)} (seq ${item.shadowedSeq}, ${item.originalChars} chars)`)} ${c.dim(`#${item.seq}`)}`)
      return
    case 'compaction':
      compactionLines(item, ctx, indent, out)
      return
  }
}

function stepLines(s: TranscriptStep, ctx: PrintContext, indent: string, out: string[]): void {
  const { c } = ctx
  out.push(`${indent}${c.bold(`Step ${s.step}`)} ${c.dim(`#${s.seq}`)}`)
  const inner = indent + '  '
  // approvals, parked time and children, merged with the messages in seq order
  const waits = s.approvals || s.parked || s.children ? waitLines(s, c, inner, one, ctx.childLink) : []
  let w = 0
  for (const m of s.messages) {
    for (; w < waits.length && waits[w]!.seq < m.seq; w++) out.push(waits[w]!.line)
    const ls = messageLines(m, ctx, inner)
    for (let i = 0; i < ls.length; i++) out.push(ls[i]!)
  }
  for (; w < waits.length; w++) out.push(waits[w]!.line)
  if (s.end) {
    const o = s.end.outcome
    const paint = o.kind === 'failed' ? c.red : o.kind === 'aborted' || o.kind === 'max-tokens' ? c.yellow : c.dim
    const usage = s.usage ? ` · ${formatUsage(s.usage)}` : ''
    out.push(`${inner}${paint(`└ step ${s.step}: ${stepEndText(o)}`)}${c.dim(usage)} ${c.dim(`#${s.end.seq}`)}`)
  } else {
    out.push(`${inner}${c.yellow('… step still open')}`)
  }
}

function compactionLines(k: TranscriptCompaction, ctx: PrintContext, indent: string, out: string[]): void {
  const { c } = ctx
  out.push(`${indent}${c.magenta(`⟲ compaction ${one(k.compactionId, 120)}`)} ${c.dim(`#${k.seq}`)}`)
  const inner = indent + '  '
  if (k.summary) {
    out.push(`${inner}${c.magenta(`summary of ${k.summary.shadowedSeqs.length} event(s)`)}${k.summary.usage ? c.dim(` · ${formatUsage(k.summary.usage)}`) : ''} ${c.dim(`#${k.summary.seq}`)}`)
  }
  for (const i of k.items) turnItemLines(i, ctx, inner, out)
  if (k.end) {
    out.push(`${inner}${k.end.error ? c.red(`└ compaction failed: ${one(k.end.error.code, 120)}: ${one(k.end.error.message)}`) : c.magenta('└ compaction done')} ${c.dim(`#${k.end.seq}`)}`)
  } else {
    out.push(`${inner}${c.yellow('… compaction still open')}`)
  }
}

/** The title line of `turnlog replay`. */
export function titleLine(fold: PrintFold, c: Colors, source: { header?: LogHeader; file?: string } = {}): string {
  const h = source.header
  return c.dim([
    h ? `session ${inline(h.id)}` : 'session',
    `${fold.counts.events} events`,
    source.file !== undefined ? inline(source.file) : undefined,
    h?.parent ? parentText(h.parent) : undefined,
  ].filter(Boolean).join(' · '))
}

/** A header's parent: a child session names its parent's call (docs/spec/lifecycle.md §10), a fork its seq. */
function parentText(p: { session: string; seq: number; callId?: string }): string {
  return p.callId !== undefined
    ? `child of session ${inline(p.session)} (call ${inline(p.callId)}, seq ${p.seq})`
    : `forked from ${inline(p.session)} at seq ${p.seq}`
}

/** A prompt's text on one line (its first blocks only: a message may hold a million). */
export function promptText(m: UserMessage, max = MAX_INLINE_CHARS): string {
  let t = ''
  for (let i = 0; i < m.content.length && t.length <= max; i++) {
    const b = m.content[i]!
    t += (i > 0 ? ' ' : '') + (b.type === 'text' ? b.text : `[${b.type}]`)
  }
  return t
}
