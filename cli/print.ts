/**
 * The human printer shared by `turnlog replay` and `turnlog demo`: the transcript (the reducers'
 * `transcript` fold, walked top-down), a summary, and the state as of a seq. Pure functions from
 * events and state to lines; colours come in as a picocolors instance (plain when disabled).
 */
import type { Block, LogEvent, ModelMessage, StepOutcome, TurnEndReason, Usage, UserMessage } from '../events/index.js'
import type {
  ReplayState, TopItem, TranscriptCompaction, TranscriptMessage, TranscriptStep, TranscriptTurn, TurnItem, UsageTotals,
} from '../reducers/index.js'
import type { LogHeader } from '../events/jsonl.js'
import type { Colors } from './io.js'

/** Longest tool argument or tool result shown in full; longer ones are cut with a note. */
export const MAX_INLINE_CHARS = 600

export interface PrintContext {
  c: Colors
  /** Tool names by call id (from the assistant messages' tool-call blocks). */
  toolNames: Map<string, string>
  /** The prompt(s) each turn claimed from next-turn, by the turn's `turn/start` seq (shown for turns with no step). */
  claimed: Map<number, UserMessage[]>
}

/** Facts the transcript alone does not hold, gathered in one pass over the events. */
export function printContext(events: readonly LogEvent[], c: Colors): PrintContext {
  const toolNames = new Map<string, string>()
  const claimed = new Map<number, UserMessage[]>()
  const lists: Record<string, UserMessage[]> = { 'next-turn': [], 'next-step': [] }
  let turnSeq: number | null = null
  for (const e of events) {
    const d = e.data as Record<string, unknown>
    switch (e.type) {
      case 'tool/call':
        toolNames.set(d.callId as string, d.name as string)
        break
      case 'turn/start':
        turnSeq = e.seq
        break
      case 'turn/end':
        turnSeq = null
        break
      case 'agent/inbox/spliced': {
        const list = lists[d.target as string]
        if (!list) break
        const start = d.start as number
        const removed = list.splice(start, (d.removedCount as number | undefined) ?? 0, ...(d.inserted as UserMessage[]))
        // a claim: no outcome, removes from next-turn inside a turn
        if (d.outcome === undefined && removed.length > 0 && d.target === 'next-turn' && turnSeq !== null) {
          const got = claimed.get(turnSeq) ?? []
          got.push(...removed)
          claimed.set(turnSeq, got)
        }
        break
      }
    }
  }
  return { c, toolNames, claimed }
}

// ---------------------------------------------------------------------------------------------
// Small formatters

function clip(s: string, max = MAX_INLINE_CHARS): string {
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more chars)`
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
  return `${f.code}${f.message ? `: ${f.message}` : ''}${extra.length ? ` (${extra.join(', ')})` : ''}`
}

export function turnEndText(r: TurnEndReason): string {
  switch (r.kind) {
    case 'aborted':
      return `aborted (${r.cause.kind === 'hook' ? `hook: ${r.cause.reason}` : r.cause.kind})`
    case 'error':
      return `error ${r.failure.code}`
    case 'blocked':
      return 'blocked (agent/pre-step rejected the prompt)'
    default:
      return r.kind
  }
}

function stepEndText(o: StepOutcome): string {
  return o.kind === 'failed' ? `failed ${failureText(o.failure)}` : o.kind
}

function blockLines(b: Block, c: Colors, indent: string): string[] {
  switch (b.type) {
    case 'text':
      return [hang(b.text, indent)]
    case 'reasoning':
      return [c.dim(c.italic(`thinking: ${hang(b.text, indent + '          ')}`))]
    case 'image':
      return [c.dim(`[image ${b.mediaType}, ${b.data.length} base64 chars]`)]
    case 'tool-call':
      return [c.cyan(`→ ${b.name}(${clip(b.arguments)})`) + c.dim(`  ${b.id}`)]
  }
}

function sourceLabel(m: UserMessage): string {
  switch (m.source.kind) {
    case 'user':
      return 'user'
    case 'hook':
      return `user (hook ${m.source.name})`
    case 'tool':
      return `user (tool ${m.source.callId})`
    case 'compaction':
      return 'summary'
    case 'resume':
      return `user (re-sent by resume, was ${m.source.of})`
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
    const body = u.content.flatMap((b) => blockLines(b, c, pad))
    out.push(`${head}${body[0] ?? c.dim('(empty)')}${marks(m, c)} ${c.dim(u.id)} ${seq}`)
    for (const l of body.slice(1)) out.push(pad + l)
    return out
  }
  if (m.type === 'assistant/message') {
    const head = `${indent}${label('assistant', c.blue)} `
    const body = msg.content.flatMap((b) => blockLines(b, c, pad))
    const facts = m.finish ?? ''
    out.push(`${head}${body[0] ?? c.dim('(no content)')}${body.length <= 1 ? marks(m, c) : ''}${body.length <= 1 ? ` ${c.dim(facts)} ${seq}` : ''}`)
    const rest = body.slice(1)
    rest.forEach((l, i) => out.push(pad + l + (i === rest.length - 1 ? `${marks(m, c)} ${c.dim(facts)} ${seq}` : '')))
    return out
  }
  // tool/result
  const name = m.callId !== undefined ? ctx.toolNames.get(m.callId) : undefined
  const head = `${indent}${label('tool', c.cyan)} `
  const who = c.cyan(`${name ?? '?'} ${c.dim(m.callId ?? '')} ← `)
  const text = msg.content.map((b) => (b.type === 'text' ? b.text : b.type === 'image' ? `[image ${b.mediaType}]` : JSON.stringify(b))).join('\n')
  if (m.error) {
    out.push(`${head}${who}${c.red(`✗ ${m.error.code}: ${hang(clip(m.error.message), pad)}`)}${marks(m, c)} ${seq}`)
  } else {
    out.push(`${head}${who}${hang(clip(text), pad)}${marks(m, c)} ${seq}`)
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// The transcript

export function transcriptLines(state: ReplayState, ctx: PrintContext): string[] {
  const out: string[] = []
  for (const item of state.transcript.items) topItemLines(item, ctx, out)
  return out
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
      const text = m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join(' ')
      out.push(`  ${label('prompt', c.dim)} ${c.strikethrough(hang(text, '             '))} ${c.dim(m.id)}`)
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
    case 'message':
      out.push(...messageLines(item, ctx, indent))
      return
    case 'retry':
      out.push(`${indent}${c.yellow(`↻ retry ${item.attempt} of step ${item.turn}.${item.step} after ${item.delayMs} ms (${item.failure.code})`)} ${c.dim(`#${item.seq}`)}`)
      return
    case 'prune':
      out.push(`${indent}${c.magenta(`✂ pruned the result of ${item.callId} (seq ${item.shadowedSeq}, ${item.originalChars} chars)`)} ${c.dim(`#${item.seq}`)}`)
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
  for (const m of s.messages) out.push(...messageLines(m, ctx, inner))
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
  out.push(`${indent}${c.magenta(`⟲ compaction ${k.compactionId}`)} ${c.dim(`#${k.seq}`)}`)
  const inner = indent + '  '
  if (k.summary) {
    out.push(`${inner}${c.magenta(`summary of ${k.summary.shadowedSeqs.length} event(s)`)}${k.summary.usage ? c.dim(` · ${formatUsage(k.summary.usage)}`) : ''} ${c.dim(`#${k.summary.seq}`)}`)
  }
  for (const i of k.items) turnItemLines(i, ctx, inner, out)
  if (k.end) {
    out.push(`${inner}${k.end.error ? c.red(`└ compaction failed: ${k.end.error.code}: ${k.end.error.message}`) : c.magenta('└ compaction done')} ${c.dim(`#${k.end.seq}`)}`)
  } else {
    out.push(`${inner}${c.yellow('… compaction still open')}`)
  }
}

// ---------------------------------------------------------------------------------------------
// The summary

export interface LogCounts {
  events: number
  turns: number
  turnsByEnd: Record<string, number>
  steps: number
  toolCalls: number
  toolErrors: number
  failures: number
  retries: number
  compactions: number
  replaced: number
}

export function countEvents(events: readonly LogEvent[]): LogCounts {
  const n: LogCounts = {
    events: events.length, turns: 0, turnsByEnd: {}, steps: 0, toolCalls: 0, toolErrors: 0, failures: 0, retries: 0,
    compactions: 0, replaced: 0,
  }
  for (const e of events) {
    const d = e.data as Record<string, any>
    switch (e.type) {
      case 'turn/start': n.turns++; break
      case 'turn/end': n.turnsByEnd[d.reason.kind] = (n.turnsByEnd[d.reason.kind] ?? 0) + 1; break
      case 'step/start': n.steps++; break
      case 'step/end': if (d.outcome.kind === 'failed') n.failures++; break
      case 'tool/call': n.toolCalls++; break
      case 'tool/result': if (e.surfaceOp === 'append' && d.error) n.toolErrors++; break
      case 'llm/retry': n.retries++; break
      case 'compaction/start': n.compactions++; break
    }
    if (typeof e.surfaceOp === 'object') n.replaced++
  }
  return n
}

export function summaryLines(events: readonly LogEvent[], state: ReplayState, c: Colors): string[] {
  const n = countEvents(events)
  const ends = Object.entries(n.turnsByEnd).map(([k, v]) => `${v} ${k}`).join(', ')
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
  ]
}

/** The whole `turnlog replay` page: a title, the transcript, the summary. */
export function replayLines(
  events: readonly LogEvent[], state: ReplayState, c: Colors, source: { header?: LogHeader; file?: string } = {},
): string[] {
  const title = [
    source.header ? `session ${source.header.id}` : 'session',
    `${events.length} events`,
    source.file,
    source.header?.parent ? `forked from ${source.header.parent.session} at seq ${source.header.parent.seq}` : undefined,
  ].filter(Boolean).join(' · ')
  const ctx = printContext(events, c)
  return [c.dim(title), '', ...transcriptLines(state, ctx), ...summaryLines(events, state, c)]
}

// ---------------------------------------------------------------------------------------------
// The state as of a seq

function preview(m: UserMessage): string {
  const text = m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join(' ').replace(/\s+/g, ' ')
  return clip(text, 80)
}

export function stateAtLines(events: readonly LogEvent[], seq: number, state: ReplayState, c: Colors): string[] {
  const e = events[seq]!
  const l = state.lifecycle
  const where = l.openTurn === null
    ? 'idle (no turn open)'
    : `in turn ${l.openTurn}${l.openTurnCause ? ` (${l.openTurnCause.kind} of turn ${l.openTurnCause.of})` : ''}, ` +
      (l.openStep === null ? `between steps (last step ${l.lastStep})` : `step ${l.openStep}${l.streaming ? ', streaming' : ''}`)
  const out = [
    c.bold(`State as of seq ${seq}`) + c.dim(` of ${events.length - 1} · ${e.type}`),
    `  position     ${where}`,
    `  turns        ${l.lastTurn} started${l.lastTurnEndReason ? ` · last ended: ${turnEndText(l.lastTurnEndReason)}` : ''}`,
  ]
  if (l.lastStepOutcome) out.push(`  last step    ${stepEndText(l.lastStepOutcome)}`)
  if (l.pendingToolCalls.length) {
    out.push(`  pending tool calls (${l.pendingToolCalls.length})`)
    for (const p of l.pendingToolCalls) out.push(`    ${c.cyan(`${p.name}(${clip(p.arguments, 120)})`)} ${c.dim(`${p.callId} #${p.seq}`)}`)
  } else {
    out.push('  pending tool calls  none')
  }
  if (l.openCompaction !== null) out.push(`  compaction   ${c.magenta(`bracket ${l.openCompaction} open`)}`)
  for (const [name, list] of [['next-turn', state.inbox.nextTurn], ['next-step', state.inbox.nextStep]] as const) {
    out.push(`  inbox ${name.padEnd(9)} ${list.length} pending`)
    for (const m of list) out.push(`    ${c.dim(m.id)} ${preview(m)}`)
  }
  out.push(
    `  surface      ${state.surface.seqs.length} seq(s) · ${state.surface.generation} replacement(s)`,
    `  history      ${state.history.messages.length} message(s)`,
    `  header       ${l.headerSeq !== null ? `seq ${l.headerSeq} (${l.header?.config.model ?? '?'})` : 'none yet'}`,
    `  usage        ${state.usage.total.requests} request(s) · ${formatUsage(state.usage.total)}`,
  )
  return out
}
