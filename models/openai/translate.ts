/**
 * The response side: chat-completions stream events → chunks in the chunk grammar.
 *
 * - `delta.content` → a text block. It may be a string or (Mistral's thinking models) an array of
 *   parts: `{type:'text', text}` → text, `{type:'thinking', thinking: [{type:'text', text}] | string}`
 *   → reasoning, in part order.
 * - `delta.reasoning_content` (DeepSeek, xAI) or `delta.reasoning` (OpenRouter, vLLM) → a
 *   reasoning block. A switch between text and reasoning closes the open block and starts a new
 *   one, so blocks never interleave.
 * - `delta.refusal` (OpenAI) → text, and the response finishes `refusal` (issue 23) where the wire
 *   says `stop`: a refusal is the model's answer, logged and seen by the next request like any
 *   text, but the log tells it from an answer; it is neither an `EMPTY_RESPONSE` nor retried.
 * - `delta.tool_calls[]` → one tool-call block per call; its `id` (sent once on the wire) is
 *   repeated on every delta; a call whose first delta lacks an id gets `call_<block index>`.
 *   Calls are told apart by their wire `index`; a delta without `index` (Gemini's endpoint sends
 *   each parallel call whole, without one) starts a new call when it names a function or carries
 *   an id other than the last call's, and otherwise continues the last index-less call.
 *   Tool-call blocks stay open until the response ends.
 * - At the end: every open block ends (index order), then `usage`, then `finish`.
 *   `finish_reason` `stop` → `stop` (or `tool-calls` when tool calls streamed: some servers say
 *   `stop` there), `tool_calls`/`function_call` → `tool-calls`, `length` → `max-tokens`,
 *   `content_filter` → an in-band `error` finish with code `CONTENT_FILTER`.
 *   `[DONE]` without a `finish_reason` is a finish as `stop`/`tool-calls`; a body that ends
 *   before both is a broken connection (`TRANSPORT`).
 */
import type { EventSourceMessage } from 'eventsource-parser'
import type { StreamChunk, Usage } from '../../events/index.js'
import { ModelError } from '../errors.js'
import { streamErrorFailure } from './errors.js'
import { isObject, toUsage } from './wire.js'

type OpenBlock = { index: number; kind: 'text' | 'reasoning' }
type Call = { index: number; id: string }

/** Turns wire events into chunks; O(1) state per block. */
export class Translator {
  #next = 0
  #open: OpenBlock | undefined
  /** wire tool index → our block */
  readonly #calls = new Map<number, Call>()
  /** index-less calls (in order) and the one the next index-less continuation belongs to */
  readonly #unindexed: Call[] = []
  #finishReason: string | undefined
  #usage: Usage | undefined
  /** whether a `delta.refusal` streamed (the finish is then `refusal`) */
  #refused = false
  sawDone = false

  onEvent(ev: EventSourceMessage, out: StreamChunk[]): void {
    let json: unknown
    try {
      json = JSON.parse(ev.data)
    } catch {
      throw new ModelError({ code: 'UNKNOWN', message: `malformed stream event: ${ev.data.slice(0, 200)}` })
    }
    if (!isObject(json)) return
    if (json.error !== undefined || ev.event === 'error') throw new ModelError(streamErrorFailure(json.error ?? json))
    if (isObject(json.usage)) {
      const u = toUsage(json.usage)
      if (u !== undefined) this.#usage = u
    }
    const choices = Array.isArray(json.choices) ? json.choices : []
    const choice = choices.find((c) => isObject(c) && (c.index === undefined || c.index === 0)) as Record<string, unknown> | undefined
    if (choice === undefined) return
    const delta = isObject(choice.delta) ? choice.delta : undefined
    if (delta !== undefined) {
      const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : delta.reasoning
      if (typeof reasoning === 'string' && reasoning !== '') this.#text('reasoning', reasoning, out)
      this.#content(delta.content, out)
      if (typeof delta.refusal === 'string' && delta.refusal !== '') {
        this.#refused = true
        this.#text('text', delta.refusal, out)
      }
      if (Array.isArray(delta.tool_calls)) {
        for (const tc of delta.tool_calls) if (isObject(tc)) this.#toolCall(tc, out)
      }
    }
    if (typeof choice.finish_reason === 'string') this.#finishReason = choice.finish_reason
  }

  /** `delta.content`: a string, or an array of text and thinking parts (Mistral). */
  #content(content: unknown, out: StreamChunk[]): void {
    if (typeof content === 'string') {
      if (content !== '') this.#text('text', content, out)
      return
    }
    if (!Array.isArray(content)) return
    for (const part of content) {
      if (typeof part === 'string') {
        if (part !== '') this.#text('text', part, out)
      } else if (isObject(part)) {
        if (part.type === 'text' && typeof part.text === 'string' && part.text !== '') this.#text('text', part.text, out)
        else if (part.type === 'thinking') {
          const thinking = typeof part.thinking === 'string' ? [part.thinking] : Array.isArray(part.thinking) ? part.thinking : []
          for (const t of thinking) {
            const text = typeof t === 'string' ? t : isObject(t) && typeof t.text === 'string' ? t.text : ''
            if (text !== '') this.#text('reasoning', text, out)
          }
        }
      }
    }
  }

  #text(kind: 'text' | 'reasoning', text: string, out: StreamChunk[]): void {
    if (this.#open?.kind !== kind) {
      this.#closeText(out)
      this.#open = { index: this.#next++, kind }
      out.push({ type: 'block-start', index: this.#open.index, blockType: kind })
    }
    const index = this.#open.index
    out.push(kind === 'text' ? { type: 'text-delta', index, text } : { type: 'reasoning-delta', index, text })
  }

  #closeText(out: StreamChunk[]): void {
    if (this.#open !== undefined) out.push({ type: 'block-end', index: this.#open.index })
    this.#open = undefined
  }

  #start(id: unknown, out: StreamChunk[]): Call {
    this.#closeText(out)
    const index = this.#next++
    out.push({ type: 'block-start', index, blockType: 'tool-call' })
    return { index, id: typeof id === 'string' && id !== '' ? id : `call_${index}` }
  }

  #toolCall(tc: Record<string, unknown>, out: StreamChunk[]): void {
    const fn = isObject(tc.function) ? tc.function : {}
    const name = typeof fn.name === 'string' && fn.name !== '' ? fn.name : undefined
    const args = typeof fn.arguments === 'string' ? fn.arguments : ''
    let call: Call | undefined
    let fresh = false
    if (typeof tc.index === 'number') {
      call = this.#calls.get(tc.index)
      if (call === undefined) {
        call = this.#start(tc.id, out)
        this.#calls.set(tc.index, call)
        fresh = true
      }
    } else {
      const last = this.#unindexed.at(-1)
      const otherId = typeof tc.id === 'string' && tc.id !== '' && tc.id !== last?.id
      if (last === undefined || name !== undefined || otherId) {
        call = this.#start(tc.id, out)
        this.#unindexed.push(call)
        fresh = true
      } else {
        call = last
      }
    }
    if (!fresh && name === undefined && args === '') return
    const chunk: StreamChunk = { type: 'tool-call-delta', index: call.index, id: call.id, argumentsDelta: args }
    if (name !== undefined) chunk.name = name
    out.push(chunk)
  }

  get #callCount(): number {
    return this.#calls.size + this.#unindexed.length
  }

  /** The closing chunks: open blocks end, usage, finish. Throws TRANSPORT for a cut stream. */
  end(): StreamChunk[] {
    if (this.#finishReason === undefined && !this.sawDone) {
      throw new ModelError({ code: 'TRANSPORT', message: 'the connection closed before the response finished' })
    }
    const out: StreamChunk[] = []
    this.#closeText(out)
    const open = [...this.#calls.values(), ...this.#unindexed].map((c) => c.index).sort((a, b) => a - b)
    for (const index of open) out.push({ type: 'block-end', index })
    if (this.#usage !== undefined) out.push({ type: 'usage', usage: this.#usage })
    switch (this.#finishReason) {
      case 'length':
        out.push({ type: 'finish', reason: 'max-tokens' })
        break
      case 'content_filter':
        out.push({
          type: 'finish',
          reason: 'error',
          failure: { code: 'CONTENT_FILTER', message: 'the provider stopped the response (content_filter)' },
        })
        break
      case 'tool_calls':
      case 'function_call':
        out.push({ type: 'finish', reason: 'tool-calls' })
        break
      default:
        out.push(this.#refused ? { type: 'finish', reason: 'refusal' } : { type: 'finish', reason: this.#callCount > 0 ? 'tool-calls' : 'stop' })
    }
    return out
  }
}
