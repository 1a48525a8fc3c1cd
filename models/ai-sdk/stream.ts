/**
 * AI SDK stream parts (specifications v2, v3 and v4) → chunks in the chunk grammar. Every part type
 * the v4 specification defines is in `PART_TYPES` and has a case below (test/models names the
 * types the provider package declares and checks them against this list).
 *
 * - `text-start/-delta/-end` and `reasoning-start/-delta/-end` → text and reasoning blocks; a
 *   delta whose start never came opens its block (lenient to loose providers).
 * - `tool-input-start {id, toolName}` opens a tool-call block (the first delta carries the name),
 *   `tool-input-delta` streams its arguments; the block ends at the `tool-call` part with the same
 *   id (which, when no input streamed, supplies the whole input) or, failing that, at `finish`.
 *   A `tool-call` without streamed input is a whole block. Provider-executed calls (server-side
 *   web search and the like) are not turnlog's to run: their input parts are skipped and the call
 *   is logged whole (`block` chunk, `providerExecuted: true`), as is its `tool-result` (issue 23).
 * - `source` → a whole `source` block; `file` → a whole `file` block (base64, or v4's `{type: 'url'}`
 *   data as `url`); v4's `reasoning-file` → a `file` block marked `reasoning`; v4's `custom` → a
 *   `custom` block (kind and provider data, re-sent); v4's `text-end` `citations` → the text
 *   block's `citations`; `stream-start`'s warnings → `warning` chunks; `response-metadata` → a
 *   `response-metadata` chunk (id, model); `ping` → nothing.
 * - v4 `tool-input-start` with `inputEncoding: 'text'` streams raw text, not JSON: its deltas are
 *   not arguments, the `tool-call` part's (JSON) input is. v4 `tool-result` with `preliminary`
 *   is a preview the final result replaces: only the final one is logged (as in `streamText`).
 * - `finish` → every open block ends, then `usage`, then `finish`: `stop` → stop (tool-calls when
 *   calls streamed), `tool-calls` → tool-calls, `length` → max-tokens, `content-filter` → stop when the
 *   model refused (raw reason `refusal`, Anthropic; or text over a raw `stop`, OpenAI's `refusal`
 *   deltas; or a refusal in the raw chunks, which V2 providers leave out of their parts) →
 *   `refusal` with the provider's explanation, else (a filter cut the output) an in-band error
 *   finish `CONTENT_FILTER` naming the raw reason (not among the retried codes), `error` → an
 *   in-band error finish `SERVER`, v4's `interrupted` (the provider's stream ended without its
 *   completion signal) → an in-band error finish `TRANSPORT`, `other`/`unknown` → stop/tool-calls.
 *   A refusal is recognised the same way in every version: the raw reason `refusal`, or
 *   Anthropic's `stopDetails` of type `refusal` in the finish's provider metadata (v2 carries no
 *   raw reason; issue 38 item 29).
 * - an `error` part → thrown as a `ModelError` with the mapped failure (see errors.ts).
 * - `raw` (the adapter asks for raw chunks): read for an OpenAI `delta.refusal` only.
 * - `tool-approval-request {approvalId, toolCallId}` (a provider asks a person to approve one of its
 *   own calls): the provider-executed call's block carries `approvalId`, so the agent asks and
 *   logs the decision as that call's `tool/call` + `tool/result` (tools/provider-approval.ts);
 *   provider-executed calls are held until the response ends or their request comes for that.
 *   A request for a call that is not a provider-executed call of the response is `STREAM_GRAMMAR`.
 */
import type { Block, ProviderData, StreamChunk, ToolCallBlock } from '../../events/index.js'
import { fileOf, isObject, jsonCopy, providerDataOf, refusalDetails, str, usageFromAiSdk, warningText } from './part-values.js'

export { providerDataOf, usageFromAiSdk } from './part-values.js'

type Kind = 'text' | 'reasoning' | 'tool-call'

/**
 * Every stream part type of the AI SDK's language model specification v4 (a superset of v2's and
 * v3's), each handled by `PartTranslator.onPart`. A type missing here fails test/models'
 * exhaustiveness check against the provider package's `LanguageModelV4StreamPart`.
 */
export const PART_TYPES = [
  'text-start', 'text-delta', 'text-end', 'reasoning-start', 'reasoning-delta', 'reasoning-end',
  'tool-input-start', 'tool-input-delta', 'tool-input-end', 'tool-approval-request', 'tool-call',
  'tool-result', 'custom', 'file', 'reasoning-file', 'source', 'stream-start', 'response-metadata',
  'finish', 'ping', 'raw', 'error',
] as const
export type PartType = (typeof PART_TYPES)[number]
const KNOWN: ReadonlySet<string> = new Set(PART_TYPES)

/** Turns stream parts into chunks; O(1) state per block. */
export class PartTranslator {
  #next = 0
  /** `${kind}:${id}` → block index, for blocks still open */
  readonly #open = new Map<string, number>()
  /** block index → the latest provider data seen on its parts (the last one wins, as in `streamText`) */
  readonly #data = new Map<number, ProviderData>()
  /** tool-call id → streamed argument length, for open tool-call blocks */
  readonly #streamed = new Map<string, number>()
  readonly #skipped = new Set<string>()
  /** v4 tool calls whose input deltas are raw text (`inputEncoding: 'text'`), not JSON arguments */
  readonly #rawInput = new Set<string>()
  /** text block index → its v4 citations (JSON), given on `text-end` */
  readonly #citations = new Map<number, Record<string, unknown>[]>()
  /** provider-executed calls not yet emitted (an approval request for one may follow), by call id */
  readonly #held = new Map<string, { index: number; block: ToolCallBlock }>()
  #calls = 0
  /** `${kind}:${id}` of text and reasoning blocks that ended (a later delta for one is refused) */
  readonly #ended = new Set<string>()
  /** whether visible text streamed (a written-out refusal) */
  #text = false
  /** OpenAI refusal text seen in raw chunks (a V2 provider drops `delta.refusal` from its parts) */
  #rawRefusal = ''
  finished = false

  #start(kind: Kind, id: string, out: StreamChunk[]): number {
    const index = this.#next++
    this.#open.set(`${kind}:${id}`, index)
    out.push({ type: 'block-start', index, blockType: kind })
    return index
  }

  #end(kind: Kind, id: string, out: StreamChunk[]): void {
    const index = this.#open.get(`${kind}:${id}`)
    if (index === undefined) return
    this.#open.delete(`${kind}:${id}`)
    if (kind !== 'tool-call') this.#ended.add(`${kind}:${id}`)
    out.push(this.#blockEnd(index))
  }

  #blockEnd(index: number): StreamChunk {
    const data = this.#data.get(index)
    this.#data.delete(index)
    const citations = this.#citations.get(index)
    this.#citations.delete(index)
    const chunk: StreamChunk = data === undefined ? { type: 'block-end', index } : { type: 'block-end', index, providerData: data }
    if (citations !== undefined) chunk.citations = citations
    return chunk
  }

  /** Remembers a part's provider data for the open block `kind:id`. */
  #note(kind: Kind, id: string, part: Record<string, unknown>): void {
    if (part.providerMetadata === undefined) return
    const index = this.#open.get(`${kind}:${id}`)
    const data = providerDataOf(part.providerMetadata)
    if (index !== undefined && data !== undefined) this.#data.set(index, data)
  }

  /** Chunks for one part. Throws the `error` part's payload (the caller maps it). */
  onPart(part: unknown, out: StreamChunk[]): void {
    if (!isObject(part) || typeof part.type !== 'string' || !KNOWN.has(part.type)) return
    const id = typeof part.id === 'string' ? part.id : ''
    const type = part.type as PartType
    switch (type) {
      case 'text-start':
      case 'reasoning-start': {
        const kind = part.type === 'text-start' ? 'text' : 'reasoning'
        if (!this.#open.has(`${kind}:${id}`)) this.#start(kind, id, out)
        this.#note(kind, id, part)
        return
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const kind = part.type === 'text-delta' ? 'text' : 'reasoning'
        // V2 and V3 name the member `delta`; very early V2 builds used `textDelta`
        const text = typeof part.delta === 'string' ? part.delta : typeof part.textDelta === 'string' ? part.textDelta : ''
        if (this.#ended.has(`${kind}:${id}`)) throw new StreamGrammarError(`${part.type} for ${kind} block ${JSON.stringify(id)} after it ended`)
        this.#note(kind, id, part) // Claude's signature comes on an empty reasoning delta
        if (text === '') return
        const index = this.#open.get(`${kind}:${id}`) ?? this.#start(kind, id, out)
        if (kind === 'text') this.#text = true
        out.push(kind === 'text' ? { type: 'text-delta', index, text } : { type: 'reasoning-delta', index, text })
        return
      }
      case 'text-end': {
        this.#note('text', id, part)
        const index = this.#open.get(`text:${id}`)
        const citations = Array.isArray(part.citations) ? (jsonCopy(part.citations) as unknown[] | undefined)?.filter(isObject) : undefined
        if (index !== undefined && citations !== undefined && citations.length > 0) this.#citations.set(index, citations)
        return this.#end('text', id, out)
      }
      case 'reasoning-end':
        this.#note('reasoning', id, part)
        return this.#end('reasoning', id, out)
      case 'tool-input-start': {
        if (part.providerExecuted === true) {
          this.#skipped.add(id)
          return
        }
        if (this.#open.has(`tool-call:${id}`)) return
        if (part.inputEncoding === 'text') this.#rawInput.add(id)
        const index = this.#start('tool-call', id, out)
        this.#streamed.set(id, 0)
        this.#calls++
        const name = typeof part.toolName === 'string' ? part.toolName : ''
        out.push({ type: 'tool-call-delta', index, id, name, argumentsDelta: '' })
        this.#note('tool-call', id, part)
        return
      }
      case 'tool-input-delta': {
        const index = this.#open.get(`tool-call:${id}`)
        const delta = typeof part.delta === 'string' ? part.delta : ''
        if (index === undefined || delta === '' || this.#rawInput.has(id)) return
        this.#streamed.set(id, (this.#streamed.get(id) ?? 0) + delta.length)
        out.push({ type: 'tool-call-delta', index, id, argumentsDelta: delta })
        return
      }
      case 'tool-input-end':
        return // the block ends at its tool-call part (which may still supply the input)
      case 'tool-call': {
        const callId = typeof part.toolCallId === 'string' ? part.toolCallId : ''
        if (part.providerExecuted === true || this.#skipped.has(callId)) {
          // the provider runs it (web search…): recorded whole, re-sent, never run by turnlog. Held
          // back (its index taken now, so the content keeps the stream's order) until the response
          // ends or the provider asks for its approval, which the block then carries
          const input = typeof part.input === 'string' ? part.input : ''
          const block: ToolCallBlock = { type: 'tool-call', id: callId, name: str(part.toolName), arguments: input, providerExecuted: true }
          const data = providerDataOf(part.providerMetadata)
          if (data !== undefined) block.providerData = data
          this.#flushHeld(callId, out) // a second call with the same id: the first goes out as it is
          this.#held.set(callId, { index: this.#next++, block })
          return
        }
        const input = typeof part.input === 'string' ? part.input : typeof part.args === 'string' ? part.args : ''
        let index = this.#open.get(`tool-call:${callId}`)
        if (index === undefined) {
          index = this.#start('tool-call', callId, out)
          this.#calls++
          const name = typeof part.toolName === 'string' ? part.toolName : ''
          out.push({ type: 'tool-call-delta', index, id: callId, name, argumentsDelta: input })
        } else if ((this.#streamed.get(callId) ?? 0) === 0 && input !== '') {
          out.push({ type: 'tool-call-delta', index, id: callId, argumentsDelta: input })
        }
        this.#streamed.delete(callId)
        this.#rawInput.delete(callId)
        this.#note('tool-call', callId, part)
        this.#end('tool-call', callId, out)
        return
      }
      case 'tool-approval-request': {
        // the provider asks a person to approve one of its own calls (an MCP tool, say): the call
        // becomes one turnlog asks about (docs/spec/lifecycle.md §9); the decision goes back with the next request
        const callId = str(part.toolCallId)
        const approvalId = str(part.approvalId)
        const held = this.#held.get(callId)
        if (held === undefined || approvalId === '' || held.block.approvalId !== undefined) {
          // streamText fails the same way (ToolCallNotFoundForApprovalError) for a call it never saw
          throw new StreamGrammarError(`tool-approval-request ${JSON.stringify(approvalId)} for ${JSON.stringify(callId)}, which is no provider-executed call of this response awaiting approval`)
        }
        held.block.approvalId = approvalId
        this.#flushHeld(callId, out)
        return
      }
      case 'tool-result': {
        // a provider-executed call's result (turnlog's own calls never stream results); a v4
        // preliminary one is a preview the final result replaces (streamText keeps only the final)
        if (part.preliminary === true) return
        const block: Block = { type: 'tool-result', id: str(part.toolCallId), name: str(part.toolName), result: jsonCopy(part.result) ?? null }
        if (part.isError === true) block.isError = true
        this.#whole(block, part, out)
        return
      }
      case 'source': {
        const block: Block = { type: 'source', sourceType: part.sourceType === 'document' ? 'document' : 'url', id }
        for (const k of ['url', 'title', 'mediaType', 'filename'] as const) if (typeof part[k] === 'string') block[k] = part[k] as string
        this.#whole(block, part, out)
        return
      }
      case 'file':
      case 'reasoning-file': {
        const file = fileOf(part.data)
        if (file === undefined) return
        this.#whole({ type: 'file', mediaType: str(part.mediaType), ...file, ...(type === 'reasoning-file' ? { reasoning: true as const } : {}) }, part, out)
        return
      }
      case 'custom':
        // provider content without a standard shape (v4): kept with its provider data, re-sent
        if (typeof part.kind === 'string' && part.kind !== '') this.#whole({ type: 'custom', kind: part.kind }, part, out)
        return
      case 'ping':
        return // a keep-alive
      case 'stream-start':
        if (Array.isArray(part.warnings)) for (const w of part.warnings) out.push({ type: 'warning', message: warningText(w) })
        return
      case 'response-metadata': {
        const chunk: StreamChunk = { type: 'response-metadata' }
        if (typeof part.id === 'string') chunk.id = part.id
        if (typeof part.modelId === 'string') chunk.model = part.modelId
        if (chunk.id !== undefined || chunk.model !== undefined) out.push(chunk)
        return
      }
      case 'finish':
        this.#finish(part, out)
        return
      case 'raw':
        this.#raw(part.rawValue)
        return
      case 'error':
        throw new StreamPartError(part.error)
      default: {
        const unhandled: never = type
        return unhandled
      }
    }
  }

  /** Emits the held provider-executed call `callId` (every held one when undefined). */
  #flushHeld(callId: string | undefined, out: StreamChunk[]): void {
    for (const [id, held] of [...this.#held]) {
      if (callId !== undefined && id !== callId) continue
      this.#held.delete(id)
      out.push({ type: 'block', index: held.index, block: held.block })
    }
  }

  /** A whole block (with the part's provider data) in one chunk. */
  #whole(block: Block, part: Record<string, unknown>, out: StreamChunk[]): void {
    const data = providerDataOf(part.providerMetadata)
    if (data !== undefined) block.providerData = data
    out.push({ type: 'block', index: this.#next++, block })
  }

  /** Reads what the parts leave out from a raw wire chunk: an OpenAI `delta.refusal`. */
  #raw(v: unknown): void {
    if (!isObject(v) || !Array.isArray(v.choices)) return
    const choice = v.choices.find((c) => isObject(c) && (c.index === undefined || c.index === 0)) as Record<string, unknown> | undefined
    const delta = choice !== undefined && isObject(choice.delta) ? choice.delta : undefined
    if (delta !== undefined && typeof delta.refusal === 'string') this.#rawRefusal += delta.refusal
  }

  #finish(part: Record<string, unknown>, out: StreamChunk[]): void {
    this.#flushHeld(undefined, out)
    // a call whose input streamed but whose `tool-call` part never came is no call (streamText
    // makes none of it): it must not run, and the step is not what the model meant either
    const orphans = [...this.#streamed.keys()]
    if (orphans.length > 0) {
      for (const index of [...this.#open.values()].sort((a, b) => a - b)) out.push(this.#blockEnd(index))
      this.#open.clear()
      out.push({ type: 'finish', reason: 'error', failure: { code: 'STREAM_GRAMMAR', message: `tool input streamed for ${orphans.map((o) => JSON.stringify(o)).join(', ')} without a tool-call part: not run` } })
      this.finished = true
      return
    }
    // a refusal the parts dropped (V2) is still the model's answer: write it out as text
    if (this.#rawRefusal !== '' && !this.#text) {
      const index = this.#next++
      out.push({ type: 'block-start', index, blockType: 'text' }, { type: 'text-delta', index, text: this.#rawRefusal }, { type: 'block-end', index })
      this.#text = true
    }
    for (const index of [...this.#open.values()].sort((a, b) => a - b)) out.push(this.#blockEnd(index))
    this.#open.clear()
    const usage = usageFromAiSdk(part.usage, part.providerMetadata)
    if (usage !== undefined) out.push({ type: 'usage', usage })
    const fr = part.finishReason
    const reason = typeof fr === 'string' ? fr : isObject(fr) && typeof fr.unified === 'string' ? fr.unified : 'other'
    const raw = isObject(fr) && typeof fr.raw === 'string' ? fr.raw : reason
    switch (reason) {
      case 'length':
        out.push({ type: 'finish', reason: 'max-tokens' })
        break
      case 'tool-calls':
        out.push({ type: 'finish', reason: 'tool-calls' })
        break
      case 'content-filter':
        // a refusal is the model's answer (issue 23): OpenAI's `refusal` deltas arrive as text
        // and the SDK reports content-filter over a raw `stop`; Anthropic's raw reason is
        // `refusal` (its explanation in the finish's provider metadata). Anything else is the
        // provider filtering its own output.
        if (raw === 'refusal' || refusalDetails(part.providerMetadata) || (this.#text && raw === 'stop') || this.#rawRefusal !== '') {
          out.push(this.#refusal(part))
          break
        }
        out.push({ type: 'finish', reason: 'error', failure: { code: 'CONTENT_FILTER', message: `the provider stopped the response (${raw})` } })
        break
      case 'error':
        out.push({ type: 'finish', reason: 'error', failure: { code: 'SERVER', message: `the provider reported an error (${raw})` } })
        break
      case 'interrupted':
        // v4: the provider's stream ended without its completion signal; the output may be cut
        out.push({ type: 'finish', reason: 'error', failure: { code: 'TRANSPORT', message: `the provider's stream ended without completing${raw !== reason ? ` (${raw})` : ''}` } })
        break
      default:
        out.push(this.#rawRefusal !== '' ? this.#refusal(part) : { type: 'finish', reason: this.#calls > 0 ? 'tool-calls' : 'stop' })
    }
    this.finished = true
  }

  /** A refusal finish, with the provider's explanation when it gave one (Anthropic's stop_details). */
  #refusal(part: Record<string, unknown>): StreamChunk {
    const meta = isObject(part.providerMetadata) ? part.providerMetadata : {}
    for (const provider of Object.values(meta)) {
      const details = isObject(provider) && isObject(provider.stopDetails) ? provider.stopDetails : undefined
      if (details !== undefined && typeof details.explanation === 'string') return { type: 'finish', reason: 'refusal', explanation: details.explanation }
    }
    return { type: 'finish', reason: 'refusal' }
  }
}

/** A part sequence the AI SDK itself refuses (issue 23): the adapter reports `STREAM_GRAMMAR`. */
export class StreamGrammarError extends Error {}

/** An `error` stream part, carried to the adapter, which maps its payload to a failure. */
export class StreamPartError extends Error {
  constructor(readonly payload: unknown) {
    super('error part')
  }
}
