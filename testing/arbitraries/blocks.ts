/**
 * Building-block arbitraries: message blocks, user messages, usage, failures, stream chunks.
 * Every value is lossless JSON (no `undefined` members, no `-0`, no lone surrogates), so it can be
 * appended to a `Session` as is.
 *
 * Streams carry what real providers send besides deltas (issue 23): provider data on a block's
 * `block-end` (Claude's thinking signature, redacted thinking as an empty reasoning block with its
 * data, citations on text, Gemini's thought signature on a call), whole-block chunks (sources,
 * files, a provider-executed call and its result) and refusals.
 */
import fc from 'fast-check'
import type { StreamChunk } from '../../events/chunks.js'
import {
  FAILURE_CODES, type Block, type Failure, type MessageSource, type ProviderData, type ToolCallBlock, type Usage, type UserMessage,
} from '../../events/messages.js'

/** Short text: mostly printable ASCII, sometimes any grapheme (never a lone surrogate). */
export function arbText(maxLength = 24): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: Math.max(1, maxLength >> 1) }) },
  )
}

/** The tool names the generated logs use; `nope` is never in a header (an unknown tool). */
export const TOOL_NAMES = ['weather', 'search', 'read_file', 'nope'] as const

/** Raw tool-call arguments: mostly a JSON object, sometimes `""` or a string that is not JSON. */
export function arbToolArguments(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.dictionary(fc.constantFrom('city', 'q', 'path', 'n'), fc.oneof(arbText(12), fc.nat(1000)), { maxKeys: 3 }).map((o) => JSON.stringify(o)) },
    { weight: 1, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.constantFrom('{"city":', 'not json', '{"a":1}}') },
  )
}

export interface ArbBlockOptions {
  /** Block types to draw from. Default: text, reasoning, image, tool-call. */
  types?: ReadonlyArray<Block['type']>
}

/** One message block (`text`, `reasoning`, `image` or `tool-call`). */
export function arbBlock(opts: ArbBlockOptions = {}): fc.Arbitrary<Block> {
  const types = new Set(opts.types ?? ['text', 'reasoning', 'image', 'tool-call'])
  const arbs: fc.Arbitrary<Block>[] = []
  if (types.has('text')) arbs.push(arbText().map((text) => ({ type: 'text' as const, text })))
  if (types.has('reasoning')) arbs.push(arbText().map((text) => ({ type: 'reasoning' as const, text })))
  if (types.has('image')) {
    arbs.push(
      fc.record({ mediaType: fc.constantFrom('image/png', 'image/jpeg'), data: fc.base64String({ minLength: 4, maxLength: 16 }) })
        .map(({ mediaType, data }) => ({ type: 'image' as const, mediaType, data })),
    )
  }
  if (types.has('tool-call')) {
    arbs.push(
      fc.record({ n: fc.nat(99), name: fc.constantFrom(...TOOL_NAMES), args: arbToolArguments() })
        .map(({ n, name, args }): ToolCallBlock => ({ type: 'tool-call', id: `call_${n}`, name, arguments: args })),
    )
  }
  return fc.oneof(...arbs)
}

export interface ArbUserMessageOptions {
  /** Fixed source; default: mostly `{kind: 'user'}`, sometimes a hook. */
  source?: MessageSource
  /** The id; default a short generated one. Log builders override ids to keep them unique. */
  id?: string
}

/** A `UserMessage`: 1–3 text or image blocks. */
export function arbUserMessage(opts: ArbUserMessageOptions = {}): fc.Arbitrary<UserMessage> {
  const source: fc.Arbitrary<MessageSource> = opts.source
    ? fc.constant(opts.source)
    : fc.oneof(
        { weight: 5, arbitrary: fc.constant({ kind: 'user' as const }) },
        { weight: 1, arbitrary: fc.constantFrom('steerer', 'memory').map((name) => ({ kind: 'hook' as const, name })) },
      )
  return fc.record({
    id: opts.id !== undefined ? fc.constant(opts.id) : fc.nat(9999).map((n) => `u${n}`),
    content: fc.array(
      fc.oneof({ weight: 6, arbitrary: arbBlock({ types: ['text'] }) }, { weight: 1, arbitrary: arbBlock({ types: ['image'] }) }),
      { minLength: 1, maxLength: 3 },
    ),
    source,
  }).map(({ id, content, source }) => ({ id, role: 'user' as const, content, source }))
}

/** Token usage with disjoint buckets; the optional buckets are absent (never `undefined`). */
export function arbUsage(): fc.Arbitrary<Usage> {
  return fc.record(
    {
      inputTokens: fc.nat(200_000),
      outputTokens: fc.nat(8_000),
      cacheReadTokens: fc.nat(100_000),
      cacheWriteTokens: fc.nat(10_000),
      reasoningTokens: fc.nat(4_000),
    },
    { requiredKeys: ['inputTokens', 'outputTokens'] },
  )
}

export const TRANSIENT_FAILURE_CODES = ['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE'] as const

export interface ArbFailureOptions {
  /** Codes to draw from. Default: every code of FAILURE_CODES but `HOOK_ERROR`. */
  codes?: readonly string[]
}

/** A request failure `{code, message, status?, retryAfterMs?}`. */
export function arbFailure(opts: ArbFailureOptions = {}): fc.Arbitrary<Failure> {
  const codes = opts.codes ?? FAILURE_CODES.filter((c) => c !== 'HOOK_ERROR')
  return fc.record(
    {
      code: fc.constantFrom(...codes),
      message: arbText(30),
      status: fc.constantFrom(400, 408, 429, 500, 503),
      retryAfterMs: fc.nat(30_000),
    },
    { requiredKeys: ['code', 'message'] },
  )
}

// ---------------------------------------------------------------------------------------------
// Streams

/** A block as the model streams it: the delta texts (for a tool call: of its arguments). */
export interface BlockPlan {
  /** `whole`: blocks that arrive whole, one `block` chunk each (`blocks`). */
  type: 'text' | 'reasoning' | 'tool-call' | 'whole'
  parts: string[]
  /** Tool name (tool-call blocks). */
  name: string
  /** Tool-call id; log builders override it to keep ids unique. */
  id: string
  /** The provider data its `block-end` carries (absent: none). */
  providerData?: ProviderData
  /** `whole` plans only: the blocks (a source, a file, or a provider-executed call and its result). */
  blocks?: Block[]
}

/** Everything needed to render one model response as chunks. */
export interface StreamPlan {
  blocks: BlockPlan[]
  /** When the response finishes `stop`, it refuses instead (with the provider's explanation, if any). */
  refusal?: { explanation?: string } | null
  /** Picks that interleave the blocks' chunks (`[]`: one block after the other). */
  interleave: number[]
  usage: Usage | null
  /** Where the usage chunk goes among the block chunks (modulo their count + 1). */
  usageAt: number
  /** Where a partial stream stops (failures, aborts, crashes), modulo the chunk count. */
  cut: number
}

function splitInto(s: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => (s.length === 0 ? 0 : c % (s.length + 1))))].sort((a, b) => a - b)
  const parts: string[] = []
  let prev = 0
  for (const p of points) {
    if (p > prev) {
      // Do not split a surrogate pair: a lone surrogate is not lossless.
      const code = s.charCodeAt(p - 1)
      if (code >= 0xd800 && code <= 0xdbff) continue
      parts.push(s.slice(prev, p))
      prev = p
    }
  }
  parts.push(s.slice(prev))
  return parts
}

export interface ArbBlockPlanOptions {
  types?: ReadonlyArray<BlockPlan['type']>
}

/** An opaque provider token (a signature, redacted data): base64 text. */
const arbOpaque = (): fc.Arbitrary<string> => fc.base64String({ minLength: 8, maxLength: 48 })

/**
 * Blocks a provider sends whole: a citation, a generated file, or a provider-executed call (web
 * search…) with its result. `n` makes the ids.
 */
export function arbWholeBlocks(): fc.Arbitrary<Block[]> {
  const source = fc.record({ n: fc.nat(999), url: fc.constantFrom('https://example.com/a', 'https://example.org/b?q=1'), title: fc.option(arbText(16), { nil: undefined }) })
    .map(({ n, url, title }): Block[] => [{ type: 'source', sourceType: 'url', id: `src_${n}`, url, ...(title !== undefined ? { title } : {}) }])
  const file = fc.record({ mediaType: fc.constantFrom('image/png', 'application/pdf'), data: fc.base64String({ minLength: 4, maxLength: 24 }) })
    .map(({ mediaType, data }): Block[] => [{ type: 'file', mediaType, data }])
  const server = fc.record({ n: fc.nat(999), q: arbText(12), isError: fc.boolean(), hits: fc.nat(3) })
    .map(({ n, q, isError, hits }): Block[] => [
      { type: 'tool-call', id: `srvtoolu_${n}`, name: 'web_search', arguments: JSON.stringify({ query: q }), providerExecuted: true },
      isError
        ? { type: 'tool-result', id: `srvtoolu_${n}`, name: 'web_search', result: { errorCode: 'max_uses_exceeded' }, isError: true }
        : { type: 'tool-result', id: `srvtoolu_${n}`, name: 'web_search', result: Array.from({ length: hits }, (_, i) => ({ url: `https://example.com/${i}`, title: q })) },
    ])
  return fc.oneof(source, file, server)
}

/** Provider data for a streamed block of this type, or none (mostly none). */
function arbProviderData(type: BlockPlan['type']): fc.Arbitrary<ProviderData | undefined> {
  const none = { weight: 3, arbitrary: fc.constant(undefined) }
  if (type === 'reasoning') return fc.oneof(none, { weight: 2, arbitrary: arbOpaque().map((signature) => ({ anthropic: { signature } })) })
  if (type === 'text') return fc.oneof(none, { weight: 1, arbitrary: fc.constant({ anthropic: { citations: [{ type: 'web_search_result_location', url: 'https://example.com/0' }] } }) })
  if (type === 'tool-call') return fc.oneof(none, { weight: 1, arbitrary: arbOpaque().map((thoughtSignature) => ({ google: { thoughtSignature } })) })
  return fc.constant(undefined)
}

const TYPE_WEIGHTS: Record<BlockPlan['type'], number> = { text: 3, reasoning: 2, 'tool-call': 3, whole: 1 }

export function arbBlockPlan(opts: ArbBlockPlanOptions = {}): fc.Arbitrary<BlockPlan> {
  const types = opts.types ?? ['text', 'reasoning', 'tool-call', 'whole']
  return fc.oneof(...types.map((t) => ({ weight: TYPE_WEIGHTS[t], arbitrary: fc.constant(t) }))).chain((type) => {
    if (type === 'whole') return arbWholeBlocks().map((blocks): BlockPlan => ({ type, parts: [], name: '', id: '', blocks }))
    return fc.record({
      text: arbText(40),
      args: arbToolArguments(),
      cuts: fc.array(fc.nat(60), { maxLength: 3 }),
      name: fc.constantFrom(...TOOL_NAMES),
      n: fc.nat(99),
      providerData: arbProviderData(type),
      // Claude's redacted thinking: an empty reasoning block that carries only its data
      redacted: type === 'reasoning' ? fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arbOpaque() }) : fc.constant(null),
    }).map(({ text, args, cuts, name, n, providerData, redacted }): BlockPlan => {
      if (redacted !== null) return { type, parts: [''], name, id: `call_${n}`, providerData: { anthropic: { redactedData: redacted } } }
      return {
        type,
        parts: splitInto(type === 'tool-call' ? args : text, cuts),
        name,
        id: `call_${n}`,
        ...(providerData !== undefined ? { providerData } : {}),
      }
    })
  })
}

export interface ArbStreamPlanOptions {
  maxBlocks?: number
  types?: ReadonlyArray<BlockPlan['type']>
}

export function arbStreamPlan(opts: ArbStreamPlanOptions = {}): fc.Arbitrary<StreamPlan> {
  return fc.record({
    blocks: fc.array(arbBlockPlan({ types: opts.types }), { maxLength: opts.maxBlocks ?? 3 }),
    interleave: fc.oneof({ weight: 3, arbitrary: fc.constant<number[]>([]) }, { weight: 1, arbitrary: fc.array(fc.nat(7), { maxLength: 12 }) }),
    usage: fc.option(arbUsage(), { freq: 6, nil: null }),
    usageAt: fc.nat(30),
    cut: fc.nat(40),
    refusal: fc.oneof(
      { weight: 8, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: arbText(30).map((explanation) => ({ explanation })) },
    ),
  })
}

/** The chunks of the blocks, without usage and finish. A `whole` plan takes one index per block. */
export function blockChunks(blocks: readonly BlockPlan[], interleave: readonly number[] = []): StreamChunk[] {
  let next = 0
  const seqs: StreamChunk[][] = blocks.map((b) => {
    if (b.type === 'whole') return (b.blocks ?? []).map((block): StreamChunk => ({ type: 'block', index: next++, block }))
    const index = next++
    const out: StreamChunk[] = [{ type: 'block-start', index, blockType: b.type }]
    b.parts.forEach((p, i) => {
      if (b.type === 'text') out.push({ type: 'text-delta', index, text: p })
      else if (b.type === 'reasoning') out.push({ type: 'reasoning-delta', index, text: p })
      else out.push(i === 0 ? { type: 'tool-call-delta', index, id: b.id, name: b.name, argumentsDelta: p } : { type: 'tool-call-delta', index, id: b.id, argumentsDelta: p })
    })
    out.push(b.providerData !== undefined ? { type: 'block-end', index, providerData: b.providerData } : { type: 'block-end', index })
    return out
  })
  const out: StreamChunk[] = []
  if (interleave.length === 0) {
    for (const s of seqs) out.push(...s)
    return out
  }
  const pos = seqs.map(() => 0)
  let k = 0
  for (;;) {
    const live = seqs.map((s, i) => i).filter((i) => pos[i]! < seqs[i]!.length)
    if (live.length === 0) break
    const pick = live[(interleave[k++ % interleave.length] ?? 0) % live.length]!
    out.push(seqs[pick]![pos[pick]!]!)
    pos[pick]!++
  }
  return out
}

/** A complete stream: block chunks, usage (if any) and `finish` (a `refusal` takes the plan's explanation). */
export function renderStream(plan: StreamPlan, finish: 'stop' | 'tool-calls' | 'max-tokens' | 'refusal'): StreamChunk[] {
  const chunks = blockChunks(plan.blocks, plan.interleave)
  if (plan.usage) chunks.splice(plan.usageAt % (chunks.length + 1), 0, { type: 'usage', usage: plan.usage })
  if (finish === 'refusal') {
    const explanation = plan.refusal?.explanation
    chunks.push(explanation !== undefined ? { type: 'finish', reason: 'refusal', explanation } : { type: 'finish', reason: 'refusal' })
  } else {
    chunks.push({ type: 'finish', reason: finish })
  }
  return chunks
}

/**
 * A stream cut before its finish (a failure, an abort, a crash): the first `cut mod (n + 1)`
 * chunks of the complete stream without its finish. With `closeWith`, open blocks are ended and the
 * stream ends with that in-band `error`/`aborted` finish (the grammar wants no open block at finish).
 */
export function renderPartialStream(plan: StreamPlan, closeWith?: { reason: 'error' | 'aborted'; failure: Failure }): StreamChunk[] {
  const full = renderStream(plan, 'stop')
  full.pop()
  const chunks = full.slice(0, plan.cut % (full.length + 1))
  if (closeWith) {
    const open = new Set<number>()
    for (const c of chunks) {
      if (c.type === 'block-start') open.add(c.index)
      else if (c.type === 'block-end') open.delete(c.index)
    }
    for (const index of open) chunks.push({ type: 'block-end', index })
    chunks.push({ type: 'finish', reason: closeWith.reason, failure: closeWith.failure })
  }
  return chunks
}

/**
 * The message content the chunks assemble to, blocks in index order (the rules of
 * models/assembler.ts). `dropToolCalls` for a `max-tokens` or `refusal` response: streamed calls
 * are dropped (a provider-executed one, whole, stays). `visibleOnly` for an interrupted message:
 * only text that streamed some text, and reasoning that did or that carries provider data (Claude
 * wants redacted thinking back).
 */
export function assembleContent(chunks: readonly StreamChunk[], opts: { dropToolCalls?: boolean; visibleOnly?: boolean } = {}): Block[] {
  type Streamed = { type: 'text' | 'reasoning' | 'tool-call'; text: string; id: string; name: string; ended: boolean; providerData?: ProviderData }
  const blocks = new Map<number, Streamed | { type: 'whole'; block: Block }>()
  const streamed = (index: number) => blocks.get(index) as Streamed
  for (const c of chunks) {
    switch (c.type) {
      case 'block-start':
        blocks.set(c.index, { type: c.blockType, text: '', id: '', name: '', ended: false })
        break
      case 'block':
        blocks.set(c.index, { type: 'whole', block: c.block })
        break
      case 'text-delta':
      case 'reasoning-delta':
        streamed(c.index).text += c.text
        break
      case 'tool-call-delta': {
        const b = streamed(c.index)
        b.id = c.id
        if (c.name !== undefined) b.name = c.name
        b.text += c.argumentsDelta
        break
      }
      case 'block-end': {
        const b = streamed(c.index)
        b.ended = true
        if (c.providerData !== undefined) b.providerData = c.providerData
        break
      }
      default:
        break
    }
  }
  const out: Block[] = []
  for (const [, b] of [...blocks].sort((x, y) => x[0] - y[0])) {
    if (b.type === 'whole') {
      if (!opts.visibleOnly) out.push(b.block)
      continue
    }
    const pd = b.providerData !== undefined ? { providerData: b.providerData } : {}
    if (b.type === 'tool-call') {
      if (opts.dropToolCalls || opts.visibleOnly) continue
      out.push({ type: 'tool-call', id: b.id, name: b.name, arguments: b.text, ...pd })
    } else {
      if (b.text === '' && !(b.type === 'reasoning' && b.providerData !== undefined)) continue
      out.push({ type: b.type, text: b.text, ...pd })
    }
  }
  return out
}

/** Whether visible text or reasoning has streamed (a cancel then writes an interrupted message). */
export function hasVisibleText(chunks: readonly StreamChunk[]): boolean {
  return chunks.some((c) => (c.type === 'text-delta' || c.type === 'reasoning-delta') && c.text !== '')
}

/** A grammatical, complete chunk stream (blocks, optional usage, a success finish; a plan that refuses finishes `refusal`). */
export function arbStreamChunks(opts: ArbStreamPlanOptions & { finish?: 'stop' | 'tool-calls' | 'max-tokens' | 'refusal' } = {}): fc.Arbitrary<StreamChunk[]> {
  return arbStreamPlan(opts).map((p) => {
    const finish = opts.finish ?? (p.blocks.some((b) => b.type === 'tool-call') ? 'tool-calls' : p.refusal ? 'refusal' : 'stop')
    return renderStream(p, finish)
  })
}
