/** The options of `openaiCompatibleModel`, and the defaults that depend on them. */
import type { ModelInfo } from '../types.js'

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
  /**
   * Send reasoning blocks back as `reasoning_content` on assistant messages.
   *
   * **Default: true when the base URL's host is `api.deepseek.com`, false everywhere else.**
   * DeepSeek's thinking models (V3.1 and later) want the reasoning of an assistant turn that made
   * tool calls sent back within the same user turn; OpenAI and most servers ignore or reject the
   * unknown member. Behind a proxy or gateway the host does not say which model answers: set this
   * explicitly (true for DeepSeek thinking models, and for other servers that document
   * `reasoning_content` on input).
   */
  sendReasoning?: boolean
  /** Injectable fetch (default: the global one). */
  fetch?: typeof fetch
  /** Injectable clock for `Retry-After` HTTP dates. */
  now?: () => number
  info?: ModelInfo
}

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1'

/** Hosts whose models want `reasoning_content` sent back by default (see `sendReasoning`). */
const SEND_REASONING_HOSTS = new Set(['api.deepseek.com'])

/** Whether assistant reasoning goes back on the wire (`sendReasoning`, else by the base URL's host). */
export function sendsReasoning(opts: OpenAICompatibleOptions): boolean {
  if (opts.sendReasoning !== undefined) return opts.sendReasoning
  try {
    return SEND_REASONING_HOSTS.has(new URL(opts.baseURL ?? DEFAULT_BASE_URL).hostname)
  } catch {
    return false
  }
}
