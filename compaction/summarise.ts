/**
 * The summariser (docs/spec/lifecycle.md §7): replaces the oldest surface range by one summary message.
 *
 * **The range** starts at the head of the surface and ends at a cut. The cut first keeps the
 * longest recent tail whose estimate fits `retainTokens` (`retainRatio` × window; 0 on overflow),
 * but always keeps at least the newest indivisible unit; then it moves **towards the head** until
 * it separates no tool call (its `assistant/message`) from its results: the tail is never cut
 * short to make the range bigger. A range under `minRangeTokens`, or empty, is declined (nothing
 * is written).
 *
 * **The call**: one request through the model seam (`purpose: 'compaction'`), with the last
 * logged header's system prompt, tools and configuration, the range's visible messages and a
 * summary instruction as a final user message; the stream is assembled by `checkedStream`.
 * The summary is the text of the response (reasoning and tool calls are ignored).
 *
 * **The bracket** (L14): `compaction/start {compactionId, turn}`, the call, then either
 * `compaction/summary {compactionId, summary, shadowedSeqs, usage?}` directly followed by the
 * replacing `user/message` (source `compaction`, `surfaceOp: replace` of the range,
 * `sourceEventSeqs` = every hidden seq) and `compaction/end {compactionId}`; or, when the call
 * failed, the response was empty, the summary is not smaller than the range (estimated with the
 * meter's tokenizer), or the surface changed meanwhile, `compaction/end {compactionId, error}`.
 */
import type { ModelMessage, ToolErrorInfo, UserMessage } from '../events/index.js'
import { visibleMessage } from '../reducers/history.js'
import { collectOutcome, type ModelAdapter, type ModelRequest } from '../models/index.js'
import type { CompactionHost } from './host.js'
import { estimateMessage, type ContextMeter, type Tokenizer } from './meter.js'

export const DEFAULT_SUMMARY_INSTRUCTION =
  'Summarise the conversation above so that you can continue the work from the summary alone. ' +
  'Keep: the user\'s goals, instructions and constraints; decisions made and why; facts learned ' +
  'from tools, with the exact names, identifiers, paths, numbers and values that matter; what is ' +
  'done and what remains. Write plain text. Do not call tools.'

/** The text of the replacing user message: this prefix, then the summary. */
export const SUMMARY_PREFIX = '[Summary of the earlier conversation, written by compaction]\n\n'

export interface RangeOptions {
  /** Estimated tokens the recent tail may keep (0: only the newest indivisible unit). */
  retainTokens: number
  /** A range whose estimate is below this is declined. */
  minRangeTokens: number
}

export type RangeChoice =
  | { kind: 'range'; seqs: number[]; tokens: number; messages: number }
  | { kind: 'declined'; reason: string }

/**
 * Picks the range. O(surface): it runs only when compaction is due. `cutOk[c]` tells whether a
 * cut before surface index `c` separates no call from its results (a difference array over the
 * spans from each call's assistant message to its last result).
 */
export function chooseRange(meter: ContextMeter, opts: RangeOptions): RangeChoice {
  const seqs = meter.seqs
  const n = seqs.length
  if (n < 2) return { kind: 'declined', reason: 'the surface has fewer than two messages' }
  const spans = new Int32Array(n + 2)
  const open = new Map<string, number>()
  const lastResult = new Map<number, number>() // assistant index → index of its last result
  for (let i = 0; i < n; i++) {
    const node = meter.node(seqs[i]!)!
    if (node.callIds) for (const id of node.callIds) open.set(id, i)
    else if (node.callId !== undefined) {
      const a = open.get(node.callId)
      if (a !== undefined) {
        open.delete(node.callId)
        lastResult.set(a, Math.max(lastResult.get(a) ?? i, i))
      }
    }
  }
  for (const [a, r] of lastResult) {
    spans[a + 1]! += 1
    spans[r + 1]! -= 1
  }
  const cutOk = new Uint8Array(n + 1)
  let depth = 0
  for (let c = 0; c <= n; c++) {
    depth += spans[c]!
    cutOk[c] = depth === 0 ? 1 : 0
  }
  // The newest indivisible unit starts at the last valid cut before n.
  let unit = n - 1
  while (unit > 0 && !cutOk[unit]) unit--
  // The longest tail that fits the retention budget.
  let cut = n
  let tail = 0
  while (cut > 0) {
    const t = meter.node(seqs[cut - 1]!)!.tokens
    if (tail + t > opts.retainTokens) break
    tail += t
    cut--
  }
  cut = Math.min(cut, unit)
  while (cut > 0 && !cutOk[cut]) cut--
  if (cut === 0) return { kind: 'declined', reason: 'nothing older than the retained tail' }
  let tokens = 0
  let messages = 0
  for (let i = 0; i < cut; i++) {
    const node = meter.node(seqs[i]!)!
    tokens += node.tokens
    if (node.visible) messages++
  }
  if (messages === 0 || tokens < opts.minRangeTokens) {
    return { kind: 'declined', reason: `the range is too small (${tokens} estimated tokens, ${messages} messages)` }
  }
  return { kind: 'range', seqs: seqs.slice(0, cut), tokens, messages }
}

export interface SummariseOptions extends RangeOptions {
  model: ModelAdapter
  instruction: string
  tokenizer: Tokenizer
  signal: AbortSignal
}

export type SummariseResult =
  | { kind: 'declined'; reason: string }
  | { kind: 'compacted'; compactionId: string; hidden: number[]; rangeTokens: number; summaryTokens: number }
  | { kind: 'failed'; compactionId: string; error: ToolErrorInfo }

/** Chooses a range and, unless declined, runs one summary bracket. */
export async function summarise(host: CompactionHost, meter: ContextMeter, opts: SummariseOptions): Promise<SummariseResult> {
  const choice = chooseRange(meter, opts)
  if (choice.kind === 'declined') return choice
  const range = choice.seqs
  const l = host.lifecycle
  const compactionId = host.newId()
  host.append({ type: 'compaction/start', data: { compactionId, turn: l.openTurn ?? l.lastTurn } })
  const fail = (error: ToolErrorInfo): SummariseResult => {
    host.append({ type: 'compaction/end', data: { compactionId, error } })
    return { kind: 'failed', compactionId, error }
  }
  let outcome: Awaited<ReturnType<typeof collectOutcome>>['outcome']
  try {
    const header = l.header ?? { system: host.options.system ?? '', tools: host.toolSpecs, config: host.baseConfig }
    const messages: ModelMessage[] = []
    for (const seq of range) {
      const m = visibleMessage(host.events[seq]!)
      if (m !== null) messages.push(m)
    }
    messages.push({
      id: `${compactionId}-instruction`, role: 'user', content: [{ type: 'text', text: opts.instruction }], source: { kind: 'compaction' },
    })
    const request: ModelRequest = Object.freeze({
      messages: Object.freeze(messages), system: header.system, tools: header.tools, config: header.config, purpose: 'compaction' as const,
    })
    outcome = (await collectOutcome(opts.model, request, opts.signal)).outcome
    // the turn ended meanwhile and closed the bracket for us (agent/turn-driver.ts, L14): nothing more is ours to log
    if (host.lifecycle.openCompaction !== compactionId) return { kind: 'failed', compactionId, error: { code: 'ABORTED', message: 'the compaction was closed with its turn' } }
  } catch (err) {
    // collectOutcome never throws; this is a defect in building the request.
    return fail({ code: 'SUMMARISER_ERROR', message: err instanceof Error ? err.message : String(err) })
  }
  if (outcome.kind === 'failure') return fail({ code: outcome.failure.code, message: outcome.failure.message })
  const summary = outcome.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n').trim()
  if (summary === '') return fail({ code: 'EMPTY_SUMMARY', message: 'the summariser returned no text' })
  const message: UserMessage = {
    id: host.newId(), role: 'user', content: [{ type: 'text', text: SUMMARY_PREFIX + summary }], source: { kind: 'compaction' },
  }
  const summaryTokens = estimateMessage(message, opts.tokenizer)
  if (summaryTokens >= choice.tokens) {
    return fail({
      code: 'SUMMARY_NOT_SMALLER',
      message: `the summary (${summaryTokens} estimated tokens) is not smaller than the range it replaces (${choice.tokens})`,
    })
  }
  // The surface may have changed while the model was answering (it should not: compaction runs
  // between steps or in maintenance). Only a range that is still the head of the surface is replaced.
  const now = meter.seqs
  for (let i = 0; i < range.length; i++) {
    if (now[i] !== range[i]) return fail({ code: 'SURFACE_CHANGED', message: 'the surface changed during the summary call' })
  }
  host.append({
    type: 'compaction/summary',
    data: { compactionId, summary, shadowedSeqs: range, ...(outcome.usage !== undefined ? { usage: outcome.usage } : {}) },
  })
  host.append({
    type: 'user/message',
    data: { message },
    surfaceOp: { op: 'replace', start: range[0]!, end: range[range.length - 1]! },
    sourceEventSeqs: range,
  })
  host.append({ type: 'compaction/end', data: { compactionId } })
  return { kind: 'compacted', compactionId, hidden: range, rangeTokens: choice.tokens, summaryTokens }
}
