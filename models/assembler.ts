/**
 * The incremental message assembler: folds stream chunks into the `AssistantMessage` they spell
 * (docs/spec/lifecycle.md §4.4–4.7). O(1) work per chunk; the blocks are ordered once, at `result()`.
 *
 * Decisions (the design is silent):
 * - Content blocks are ordered by their chunk `index`, not by when they started.
 * - Text and reasoning blocks whose concatenated text is empty are dropped: an empty block says
 *   nothing, is noise in the history, and some providers refuse empty text parts. Unless it carries
 *   `providerData` (from its `block-end`, issue 23): Claude's redacted thinking has no text and must
 *   be sent back. A tool-call
 *   block is kept even with empty arguments (a tool's empty arguments mean `{}`, docs/spec/lifecycle.md §5).
 * - A tool call's `id` and `name` are the first non-empty ones its deltas carry.
 * - `max-tokens`: every tool-call block is dropped (they are truncated; no tool runs, §4.5).
 *   Likewise under `refusal` (issue 23): a refusing model's calls are not run.
 * - `partial()` (cancel mid-stream, §4.7) keeps only text and reasoning, ended or still open;
 *   every tool call is dropped: nothing runs after a cancel, so a call in an interrupted message
 *   would be owed a result it never gets.
 *
 * The assembler expects chunks that already passed `StreamGrammar` (the checked stream does that);
 * a delta for a block it never saw start is a programming error and throws `INVALID_ARGUMENT`.
 */
import {
  TurnlogError,
  type AssistantMessage,
  type Block,
  type Failure,
  type FinishChunk,
  type ProviderData,
  type StreamChunk,
  type SuccessFinishReason,
  type Usage,
} from '../events/index.js'

type TextState = { type: 'text' | 'reasoning'; text: string; ended: boolean; providerData?: ProviderData; citations?: Record<string, unknown>[] }
type CallState = { type: 'tool-call'; id: string; name: string; arguments: string; ended: boolean; providerData?: ProviderData }
/** A block that arrived whole (a `block` chunk, issue 23): a source, a file, a provider-executed call or result. */
type WholeState = { type: 'whole'; block: Block; ended: true }
type BlockState = TextState | CallState | WholeState

/** A successful response, ready for `assistant/message`. */
export interface AssembledMessage {
  message: AssistantMessage
  usage?: Usage
  finish: SuccessFinishReason
  /** A refusal's explanation by the provider (issue 23). */
  explanation?: string
}

/** What a cancel mid-stream leaves (docs/spec/lifecycle.md §4.7). */
export interface PartialMessage {
  /** Visible text and reasoning only, in index order; no tool calls. */
  message: AssistantMessage
  /** True when some non-empty text or reasoning streamed: then an interrupted message is owed. */
  streamedVisible: boolean
}

export class MessageAssembler {
  readonly #blocks = new Map<number, BlockState>()
  #usage: Usage | undefined
  #finish: FinishChunk | undefined
  #streamedVisible = false
  #chunks = 0

  /** Folds one chunk in. */
  push(chunk: StreamChunk): void {
    this.#chunks++
    switch (chunk.type) {
      case 'block-start':
        this.#blocks.set(
          chunk.index,
          chunk.blockType === 'tool-call'
            ? { type: 'tool-call', id: '', name: '', arguments: '', ended: false }
            : { type: chunk.blockType, text: '', ended: false },
        )
        return
      case 'text-delta':
      case 'reasoning-delta': {
        const b = this.#block(chunk.index, chunk.type)
        if (b.type === 'tool-call' || b.type === 'whole') throw misuse(`${chunk.type} for ${b.type} block ${chunk.index}`)
        b.text += chunk.text
        if (chunk.text.length > 0) this.#streamedVisible = true
        return
      }
      case 'tool-call-delta': {
        const b = this.#block(chunk.index, chunk.type)
        if (b.type !== 'tool-call') throw misuse(`tool-call-delta for ${b.type} block ${chunk.index}`)
        if (b.id === '' && chunk.id !== '') b.id = chunk.id
        if (b.name === '' && chunk.name !== undefined && chunk.name !== '') b.name = chunk.name
        b.arguments += chunk.argumentsDelta
        return
      }
      case 'block-end': {
        const b = this.#block(chunk.index, chunk.type)
        b.ended = true
        if (chunk.providerData !== undefined && b.type !== 'whole') b.providerData = chunk.providerData
        if (chunk.citations !== undefined && b.type === 'text') b.citations = chunk.citations
        return
      }
      case 'block':
        this.#blocks.set(chunk.index, { type: 'whole', block: chunk.block, ended: true })
        return
      case 'response-metadata':
      case 'warning':
        return // logged as chunks; not part of the message
      case 'usage':
        this.#usage = chunk.usage
        return
      case 'finish':
        this.#finish = chunk
        return
    }
  }

  /**
   * The tool-call rules the chunk grammar leaves out, which the log needs (L5: unique call ids):
   * checked before `push`. Returns null when the chunk is fine, else what it breaks:
   * a tool-call delta may not switch to another non-empty id; a tool-call block must have a
   * non-empty id and name when it ends, and its id must differ from every earlier ended call's.
   */
  violation(chunk: StreamChunk): string | null {
    if (chunk.type === 'tool-call-delta') {
      const b = this.#blocks.get(chunk.index)
      if (b?.type === 'tool-call' && b.id !== '' && chunk.id !== '' && chunk.id !== b.id) {
        return `tool call ${chunk.index} changed its id from ${JSON.stringify(b.id)} to ${JSON.stringify(chunk.id)}`
      }
      return null
    }
    if (chunk.type === 'block-end') {
      const b = this.#blocks.get(chunk.index)
      if (b?.type !== 'tool-call') return null
      if (b.id === '') return `tool call ${chunk.index} ended without an id`
      if (b.name === '') return `tool call ${chunk.index} ended without a name`
      for (const [i, other] of this.#blocks) {
        if (i !== chunk.index && other.type === 'tool-call' && other.ended && other.id === b.id) {
          return `tool calls ${i} and ${chunk.index} share the id ${JSON.stringify(b.id)}`
        }
      }
    }
    return null
  }

  /** The number of chunks pushed so far. */
  get chunkCount(): number {
    return this.#chunks
  }

  /** The `finish` chunk, once seen. */
  get finish(): FinishChunk | undefined {
    return this.#finish
  }

  /** The usage chunk, once seen (also for failed requests: their usage is recorded by the chunk). */
  get usage(): Usage | undefined {
    return this.#usage
  }

  /** The in-band failure of an `error` or `aborted` finish. */
  get failure(): Failure | undefined {
    const f = this.#finish
    return f !== undefined && 'failure' in f ? f.failure : undefined
  }

  /** True once some non-empty text or reasoning delta was pushed. */
  get streamedVisible(): boolean {
    return this.#streamedVisible
  }

  /** True when a success finish was seen. */
  get succeeded(): boolean {
    const r = this.#finish?.reason
    return r === 'stop' || r === 'tool-calls' || r === 'max-tokens' || r === 'refusal'
  }

  /** The message of a successful response. Throws `INVALID_ARGUMENT` before a success finish. */
  result(): AssembledMessage {
    const f = this.#finish
    if (f === undefined || !(f.reason === 'stop' || f.reason === 'tool-calls' || f.reason === 'max-tokens' || f.reason === 'refusal')) {
      throw misuse(f === undefined ? 'result() before finish' : `result() after a finish of reason ${f.reason}`)
    }
    // truncated calls never run (§4.5); nor does anything the model asked for while refusing
    const dropCalls = f.reason === 'max-tokens' || f.reason === 'refusal'
    const content = this.#content((b) => b.type !== 'tool-call' || (!dropCalls && b.ended))
    // (whole blocks stay: a provider-executed call already ran at the provider)
    const out: AssembledMessage = { message: { role: 'assistant', content }, finish: f.reason }
    if (f.reason === 'refusal' && f.explanation !== undefined) out.explanation = f.explanation
    if (this.#usage !== undefined) out.usage = this.#usage
    return out
  }

  /** What a cancel mid-stream keeps: visible text and reasoning only (see the module comment). */
  partial(): PartialMessage {
    return {
      message: { role: 'assistant', content: this.#content((b) => b.type === 'text' || b.type === 'reasoning') },
      streamedVisible: this.#streamedVisible,
    }
  }

  #block(index: number, what: string): BlockState {
    const b = this.#blocks.get(index)
    if (b === undefined) throw misuse(`${what} for block ${index}, which never started`)
    return b
  }

  #content(keep: (b: BlockState) => boolean): Block[] {
    const indexes = [...this.#blocks.keys()].sort((a, b) => a - b)
    const content: Block[] = []
    for (const i of indexes) {
      const b = this.#blocks.get(i)!
      if (!keep(b)) continue
      if (b.type === 'whole') content.push(b.block)
      else if (b.type === 'tool-call') {
        const call: Block = { type: 'tool-call', id: b.id, name: b.name, arguments: b.arguments }
        if (b.providerData !== undefined) call.providerData = b.providerData
        content.push(call)
      } else if (b.type === 'reasoning' && b.providerData !== undefined) {
        // an empty reasoning block with provider data (Claude's redacted thinking) is content:
        // the provider wants it back
        content.push({ type: b.type, text: b.text, providerData: b.providerData })
      } else if (b.text !== '') {
        const block: Block = b.providerData === undefined ? { type: b.type, text: b.text } : { type: b.type, text: b.text, providerData: b.providerData }
        if (b.citations !== undefined && block.type === 'text') block.citations = b.citations
        content.push(block)
      }
    }
    return content
  }
}

function misuse(message: string): TurnlogError {
  return new TurnlogError('INVALID_ARGUMENT', `MessageAssembler: ${message} (feed it grammatical chunks)`)
}
