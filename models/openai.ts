/**
 * An OpenAI-compatible streaming adapter: chat completions over SSE, with global `fetch` and
 * `eventsource-parser`. Works against OpenAI and the many servers that speak its wire format
 * (DeepSeek, vLLM, llama.cpp, Ollama, OpenRouter, …).
 *
 * Wire → chunk grammar:
 * - `delta.content` → a text block; `delta.reasoning_content` (DeepSeek) or `delta.reasoning`
 *   (OpenRouter, vLLM) → a reasoning block. A switch between the two closes the open block and
 *   starts a new one, so blocks never interleave.
 * - `delta.tool_calls[]` → one tool-call block per wire `index`; its `id` (sent once on the wire)
 *   is repeated on every delta; a call whose first delta lacks an id gets `call_<block index>`.
 *   Tool-call blocks stay open until the response ends.
 * - At the end: every open block ends (index order), then `usage`, then `finish`.
 *   `finish_reason` `stop` → `stop` (or `tool-calls` when tool calls streamed: some servers say
 *   `stop` there), `tool_calls`/`function_call` → `tool-calls`, `length` → `max-tokens`,
 *   `content_filter` → an in-band `error` finish with code `CONTENT_FILTER`.
 *   `[DONE]` without a `finish_reason` is a finish as `stop`/`tool-calls`; a body that ends
 *   before both is a broken connection (`TRANSPORT`).
 * - Usage (`stream_options.include_usage`): disjoint buckets, as the Usage schema says:
 *   `cacheReadTokens` = `prompt_tokens_details.cached_tokens` (or DeepSeek's
 *   `prompt_cache_hit_tokens`), `inputTokens` = `prompt_tokens` minus those;
 *   `reasoningTokens` = `completion_tokens_details.reasoning_tokens`, `outputTokens` =
 *   `completion_tokens` minus those.
 *
 * Errors are thrown as `ModelError` (so its code survives `checkedStream`):
 * HTTP 429 → `RATE_LIMIT` (`QUOTA` for `insufficient_quota`), with `retryAfterMs` from
 * `retry-after-ms` or `Retry-After` (seconds or an HTTP date); 5xx → `SERVER`; 401/403 →
 * `INVALID_CREDENTIAL`; 402 → `QUOTA`; 408 → `TIMEOUT`; 400/413/422 whose error says the context
 * is too long → `CONTEXT_WINDOW_EXCEEDED`; other statuses → `UNKNOWN`; every one carries `status`.
 * A refused or broken connection → `TRANSPORT`; an `error` payload inside the stream → `SERVER`
 * (or `CONTEXT_WINDOW_EXCEEDED`). An abort rethrows the abort error untouched.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import type { Block, Failure, ModelMessage, StreamChunk, Usage } from '../events/index.js'
import { ModelError, failureCodeForStatus, failureFromError } from './errors.js'
import type { ModelAdapter, ModelInfo, ModelRequest } from './types.js'

export interface OpenAICompatibleOptions {
  /** The API root; `/chat/completions` is appended. Default `https://api.openai.com/v1`. */
  baseURL?: string
  /** Sent as `Authorization: Bearer <apiKey>` when given. */
  apiKey?: string
  /** The model name; default: `request.config.model`. */
  model?: string
  /** Extra HTTP headers. */
  headers?: Record<string, string>
  /** Members merged into every request body (provider-specific knobs). */
  extraBody?: Record<string, unknown>
  /** Where `config.maxTokens` goes (newer OpenAI models want `max_completion_tokens`). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens'
  /** Send reasoning blocks back as `reasoning_content` on assistant messages (default false). */
  sendReasoning?: boolean
  /** Injectable fetch (default: the global one). */
  fetch?: typeof fetch
  /** Injectable clock for `Retry-After` HTTP dates. */
  now?: () => number
  info?: ModelInfo
}

/** Known camelCase config members and their wire names. Other config members are not sent. */
const CONFIG_FIELDS: Record<string, string> = {
  temperature: 'temperature',
  topP: 'top_p',
  seed: 'seed',
  stop: 'stop',
  presencePenalty: 'presence_penalty',
  frequencyPenalty: 'frequency_penalty',
  reasoningEffort: 'reasoning_effort',
  toolChoice: 'tool_choice',
  parallelToolCalls: 'parallel_tool_calls',
  user: 'user',
}

export function openaiCompatibleModel(opts: OpenAICompatibleOptions = {}): ModelAdapter {
  const base = (opts.baseURL ?? 'https://api.openai.com/v1').replace(/\/+$/, '')
  const url = `${base}/chat/completions`
  const doFetch = opts.fetch ?? globalThis.fetch
  const now = opts.now ?? Date.now

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<StreamChunk> {
    const body = requestBody(request, opts)
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...opts.headers,
    }
    if (opts.apiKey !== undefined) headers.authorization = `Bearer ${opts.apiKey}`

    let res: Response
    try {
      res = await doFetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal })
    } catch (e) {
      throw wrap(e, signal)
    }
    if (!res.ok) {
      let text = ''
      try {
        text = await res.text()
      } catch (e) {
        if (signal.aborted) throw e
      }
      throw new ModelError(httpFailure(res.status, res.headers, text, now))
    }
    if (res.body === null) throw new ModelError({ code: 'TRANSPORT', message: 'the response has no body' })

    const t = new Translator()
    const events: EventSourceMessage[] = []
    const parser = createParser({ onEvent: (ev) => events.push(ev) })
    const reader = res.body.getReader()
    const decoder = new TextDecoder()
    let done = false
    try {
      while (!done) {
        let r: { done: true; value?: undefined } | { done: false; value: Uint8Array }
        try {
          r = await reader.read()
        } catch (e) {
          throw wrap(e, signal)
        }
        if (r.done) {
          parser.feed(decoder.decode())
          parser.reset({ consume: true })
        } else {
          parser.feed(decoder.decode(r.value, { stream: true }))
        }
        const out: StreamChunk[] = []
        for (const ev of events) {
          if (ev.data === '[DONE]') {
            done = true
            t.sawDone = true
            break
          }
          t.onEvent(ev, out)
        }
        events.length = 0
        for (const c of out) yield c
        if (r.done) break
      }
      if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError')
      for (const c of t.end()) yield c
    } finally {
      reader.cancel().catch(() => {})
    }
  }

  return { stream, info: { name: opts.model ?? 'openai-compatible', ...opts.info } }
}

function wrap(e: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return e
  return new ModelError(failureFromError(e), { cause: e })
}

// ---------------------------------------------------------------------------------------------
// request

function requestBody(request: ModelRequest, opts: OpenAICompatibleOptions): Record<string, unknown> {
  const config = request.config as Record<string, unknown>
  const body: Record<string, unknown> = {
    model: opts.model ?? request.config.model,
    messages: toWireMessages(request, opts.sendReasoning === true),
    stream: true,
    stream_options: { include_usage: true },
  }
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }))
  }
  for (const [key, wire] of Object.entries(CONFIG_FIELDS)) {
    if (config[key] !== undefined) body[wire] = config[key]
  }
  if (request.config.maxTokens !== undefined) body[opts.maxTokensField ?? 'max_tokens'] = request.config.maxTokens
  return { ...body, ...opts.extraBody }
}

/** The request's system prompt and history in the chat-completions message format. */
export function toWireMessages(request: Pick<ModelRequest, 'system' | 'messages'>, sendReasoning = false): unknown[] {
  const out: unknown[] = []
  if (request.system !== '') out.push({ role: 'system', content: request.system })
  for (const m of request.messages) out.push(toWireMessage(m, sendReasoning))
  return out
}

function toWireMessage(m: ModelMessage, sendReasoning: boolean): Record<string, unknown> {
  switch (m.role) {
    case 'user':
      return { role: 'user', content: userContent(m.content) }
    case 'assistant': {
      let text = ''
      let reasoning = ''
      const calls: unknown[] = []
      for (const b of m.content) {
        if (b.type === 'text') text += b.text
        else if (b.type === 'reasoning') reasoning += b.text
        else if (b.type === 'tool-call') {
          calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: b.arguments } })
        }
      }
      const msg: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text }
      if (calls.length > 0) msg.tool_calls = calls
      if (sendReasoning && reasoning !== '') msg.reasoning_content = reasoning
      return msg
    }
    case 'tool':
      return { role: 'tool', tool_call_id: m.callId, content: plainText(m.content) }
  }
}

function userContent(blocks: readonly Block[]): string | unknown[] {
  const parts: unknown[] = []
  let onlyText = true
  for (const b of blocks) {
    if (b.type === 'text') parts.push({ type: 'text', text: b.text })
    else if (b.type === 'image') {
      onlyText = false
      parts.push({ type: 'image_url', image_url: { url: `data:${b.mediaType};base64,${b.data}` } })
    }
    // reasoning and tool-call blocks have no place in a user message on this wire
  }
  if (onlyText && parts.length <= 1) return blocks.length === 0 ? '' : plainText(blocks)
  return parts
}

function plainText(blocks: readonly Block[]): string {
  const texts: string[] = []
  for (const b of blocks) {
    if (b.type === 'text') texts.push(b.text)
    else if (b.type === 'image') texts.push(`[image: ${b.mediaType}]`)
  }
  return texts.join('\n')
}

// ---------------------------------------------------------------------------------------------
// response

type OpenBlock = { index: number; kind: 'text' | 'reasoning' }

/** Turns wire events into chunks; O(1) state per block. */
class Translator {
  #next = 0
  #open: OpenBlock | undefined
  /** wire tool index → our block */
  readonly #calls = new Map<number, { index: number; id: string }>()
  #finishReason: string | undefined
  #usage: Usage | undefined
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
      if (typeof delta.content === 'string' && delta.content !== '') this.#text('text', delta.content, out)
      if (Array.isArray(delta.tool_calls)) {
        delta.tool_calls.forEach((tc, position) => {
          if (isObject(tc)) this.#toolCall(tc, position, out)
        })
      }
    }
    if (typeof choice.finish_reason === 'string') this.#finishReason = choice.finish_reason
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

  #toolCall(tc: Record<string, unknown>, position: number, out: StreamChunk[]): void {
    const wireIndex = typeof tc.index === 'number' ? tc.index : position
    const fn = isObject(tc.function) ? tc.function : {}
    const name = typeof fn.name === 'string' && fn.name !== '' ? fn.name : undefined
    const args = typeof fn.arguments === 'string' ? fn.arguments : ''
    let call = this.#calls.get(wireIndex)
    if (call === undefined) {
      this.#closeText(out)
      const index = this.#next++
      call = { index, id: typeof tc.id === 'string' && tc.id !== '' ? tc.id : `call_${index}` }
      this.#calls.set(wireIndex, call)
      out.push({ type: 'block-start', index, blockType: 'tool-call' })
    } else if (name === undefined && args === '') {
      return
    }
    const chunk: StreamChunk = { type: 'tool-call-delta', index: call.index, id: call.id, argumentsDelta: args }
    if (name !== undefined) chunk.name = name
    out.push(chunk)
  }

  /** The closing chunks: open blocks end, usage, finish. Throws TRANSPORT for a cut stream. */
  end(): StreamChunk[] {
    if (this.#finishReason === undefined && !this.sawDone) {
      throw new ModelError({ code: 'TRANSPORT', message: 'the connection closed before the response finished' })
    }
    const out: StreamChunk[] = []
    this.#closeText(out)
    for (const index of [...this.#calls.values()].map((c) => c.index).sort((a, b) => a - b)) {
      out.push({ type: 'block-end', index })
    }
    if (this.#usage !== undefined) out.push({ type: 'usage', usage: this.#usage })
    const hasCalls = this.#calls.size > 0
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
        out.push({ type: 'finish', reason: hasCalls ? 'tool-calls' : 'stop' })
    }
    return out
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined
}

/** Wire usage → disjoint buckets (see the module comment). */
export function toUsage(u: Record<string, unknown>): Usage | undefined {
  const prompt = count(u.prompt_tokens)
  const completion = count(u.completion_tokens)
  if (prompt === undefined && completion === undefined) return undefined
  const promptDetails = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {}
  const completionDetails = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {}
  const cached = Math.min(count(promptDetails.cached_tokens) ?? count(u.prompt_cache_hit_tokens) ?? 0, prompt ?? 0)
  const reasoning = Math.min(count(completionDetails.reasoning_tokens) ?? 0, completion ?? 0)
  const usage: Usage = { inputTokens: (prompt ?? 0) - cached, outputTokens: (completion ?? 0) - reasoning }
  if (cached > 0) usage.cacheReadTokens = cached
  if (reasoning > 0) usage.reasoningTokens = reasoning
  return usage
}

const CONTEXT_OVERFLOW =
  /context[_ -]?length|context[_ -]?window|maximum context|prompt is too long|too many tokens|input (is )?too long|reduce the length of the messages/i

function errorFields(payload: unknown, fallback: string): { message: string; code?: string; type?: string } {
  if (isObject(payload)) {
    const inner = isObject(payload.error) ? payload.error : payload
    const out: { message: string; code?: string; type?: string } = {
      message: typeof inner.message === 'string' ? inner.message : typeof payload.error === 'string' ? payload.error : fallback,
    }
    if (typeof inner.code === 'string') out.code = inner.code
    if (typeof inner.type === 'string') out.type = inner.type
    return out
  }
  return { message: typeof payload === 'string' && payload !== '' ? payload : fallback }
}

function isOverflow(f: { message: string; code?: string }): boolean {
  return f.code === 'context_length_exceeded' || CONTEXT_OVERFLOW.test(f.message)
}

/** An HTTP error response → a failure (see the module comment). */
export function httpFailure(status: number, headers: Headers, bodyText: string, now: () => number = Date.now): Failure {
  let payload: unknown = bodyText
  try {
    payload = JSON.parse(bodyText)
  } catch {
    // a plain-text body
  }
  const fields = errorFields(payload, bodyText.slice(0, 500) || `HTTP ${status}`)
  let code: string = failureCodeForStatus(status)
  if ((status === 400 || status === 413 || status === 422) && isOverflow(fields)) code = 'CONTEXT_WINDOW_EXCEEDED'
  else if (status === 429 && (fields.code === 'insufficient_quota' || fields.type === 'insufficient_quota')) code = 'QUOTA'
  const failure: Failure = { code, message: `HTTP ${status}: ${fields.message.slice(0, 1000)}`, status }
  const retryAfterMs = parseRetryAfter(headers, now)
  if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs
  return failure
}

function streamErrorFailure(payload: unknown): Failure {
  const fields = errorFields(payload, 'the provider reported an error mid-stream')
  return { code: isOverflow(fields) ? 'CONTEXT_WINDOW_EXCEEDED' : 'SERVER', message: fields.message.slice(0, 1000) }
}

/** `retry-after-ms` (ms), else `Retry-After` as seconds or an HTTP date; undefined if absent or bad. */
export function parseRetryAfter(headers: Headers, now: () => number = Date.now): number | undefined {
  const ms = headers.get('retry-after-ms')
  if (ms !== null && ms.trim() !== '') {
    const v = Number(ms)
    if (Number.isFinite(v) && v >= 0) return v
  }
  const ra = headers.get('retry-after')
  if (ra === null || ra.trim() === '') return undefined
  const seconds = Number(ra)
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined
  const date = Date.parse(ra)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, date - now())
}
