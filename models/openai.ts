/**
 * An OpenAI-compatible streaming adapter: chat completions over SSE, with global `fetch` and
 * `eventsource-parser`. Works against OpenAI and the many servers that speak its wire format
 * (DeepSeek, vLLM, llama.cpp, Ollama, OpenRouter, …).
 *
 * Wire → chunk grammar: see `openai/translate.ts` (text, reasoning, content parts, refusals, tool
 * calls with or without `index`, finish); usage: `toUsage` in `openai/wire.ts` (disjoint buckets;
 * reasoning above the completion count means the completion count is the visible output alone).
 * Request: `openai/request.ts`; `sendReasoning` defaults by host (`openai/options.ts`).
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
import type { StreamChunk } from '../events/index.js'
import { ModelError, failureFromError } from './errors.js'
import { httpFailure } from './openai/errors.js'
import { DEFAULT_BASE_URL, type OpenAICompatibleOptions } from './openai/options.js'
import { requestBody } from './openai/request.js'
import { Translator } from './openai/translate.js'
import type { ModelAdapter, ModelRequest } from './types.js'

export type { OpenAICompatibleOptions } from './openai/options.js'
export { toWireMessages } from './openai/request.js'
export { toUsage } from './openai/wire.js'
export { httpFailure, parseRetryAfter } from './openai/errors.js'

/** A `ModelAdapter` for any server that speaks OpenAI's chat completions with SSE streaming. */
export function openaiCompatibleModel(opts: OpenAICompatibleOptions = {}): ModelAdapter {
  const base = (opts.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, '')
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

  const provider = providerOfHost(base)
  return { stream, info: { name: opts.model ?? 'openai-compatible', ...(provider !== undefined ? { provider } : {}), ...opts.info } }
}

/** Well-known hosts → `gen_ai.provider.name` (issue 23); behind a proxy, `info.provider` says it. */
const HOST_PROVIDERS: Record<string, string> = {
  'api.openai.com': 'openai', 'api.deepseek.com': 'deepseek', 'api.groq.com': 'groq', 'api.mistral.ai': 'mistral_ai',
  'api.x.ai': 'x_ai', 'api.perplexity.ai': 'perplexity',
}

function providerOfHost(base: string): string | undefined {
  try {
    return HOST_PROVIDERS[new URL(base).hostname]
  } catch {
    return undefined
  }
}

function wrap(e: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return e
  return new ModelError(failureFromError(e), { cause: e })
}
