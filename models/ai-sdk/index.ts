/**
 * `turnlog/models/ai-sdk`: any Vercel AI SDK language model (specification v2, v3 or v4: the
 * providers of AI SDK 5, 6 and 7, e.g. `createAnthropic()('claude-…')`,
 * `createOpenAICompatible({...})('…')`) as a `ModelAdapter`.
 *
 * `@ai-sdk/provider` (3 or 4) is an optional peer dependency used for types only: this module
 * loads no AI SDK code itself; the provider package the user passes a model from does the HTTP
 * work. The v4 model type is written out structurally here (`LanguageModelV4Like`), so these
 * declarations read the same with either major of `@ai-sdk/provider` installed.
 *
 * - Request: the system prompt, the history (text, images as files, reasoning, tool calls with
 *   parsed arguments, tool results as text or error-text), function tools (JSON Schema), and the
 *   config members `maxTokens`, `temperature`, `topP`, `topK`, `seed`, `presencePenalty`,
 *   `frequencyPenalty`, `stop`, `toolChoice`; `providerOptions` and `headers` from the options.
 * - Stream: see stream.ts (parts → chunk grammar, usage buckets, finish reasons).
 * - Errors: see errors.ts (`APICallError` status → failure code, `Retry-After` → retryAfterMs).
 * - Abort: the signal is the call's `abortSignal`, so it reaches the provider's `fetch`; a consumer
 *   that stops reading (the driver after a cancel) cancels the part stream, which the provider
 *   passes down to the response body: the connection closes.
 */
import type { LanguageModelV2, LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider'
import type { StreamChunk } from '../../events/index.js'
import { ModelError } from '../errors.js'
import type { ModelAdapter, ModelInfo, ModelRequest } from '../types.js'
import { aiSdkFailure } from './errors.js'
import { callOptions, type SpecVersion } from './prompt.js'
import { PartTranslator, StreamGrammarError, StreamPartError } from './stream.js'

export { usageFromAiSdk } from './stream.js'

/** Options of `fromAiSdk`. */
export interface FromAiSdkOptions {
  /** Passed through on every call (provider-specific knobs, e.g. `{ anthropic: { thinking } }`). */
  providerOptions?: LanguageModelV3CallOptions['providerOptions']
  /**
   * Provider-defined tools sent with every call (e.g. Anthropic's web search,
   * `{type: 'provider', id: 'anthropic.web_search_20250305', name: 'web_search', args: {}}`). The
   * provider runs them: their calls and results are logged and re-sent, never run by turnlog.
   */
  providerTools?: Extract<NonNullable<LanguageModelV3CallOptions['tools']>[number], { type: 'provider' }>[]
  /** Extra HTTP headers on every call. */
  headers?: Record<string, string>
  /** Static facts for the token meter and display; `name` defaults to the model id. */
  info?: ModelInfo
  /** Injectable clock for `Retry-After` HTTP dates. */
  now?: () => number
}

/**
 * An AI SDK 7 (specification v4) language model, as far as turnlog uses it: `LanguageModelV4` of
 * `@ai-sdk/provider` 4 is assignable to it. Written structurally so that a project on
 * `@ai-sdk/provider` 3 (which has no v4 types) compiles these declarations too.
 */
export interface LanguageModelV4Like {
  readonly specificationVersion: 'v4'
  readonly provider: string
  readonly modelId: string
  // the call options are v4's; `never` lets any v4 model's method stand here
  doStream(options: never): PromiseLike<{ stream: ReadableStream<unknown> }>
}

/** Any AI SDK language model the adapter accepts: specification v2 (AI SDK 5), v3 (6) or v4 (7). */
export type AiSdkLanguageModel = LanguageModelV2 | LanguageModelV3 | LanguageModelV4Like

/**
 * Wraps an AI SDK language model as a `ModelAdapter`. Throws `INVALID_ARGUMENT`-style `TypeError`
 * at once for anything that is not a v2, v3 or v4 language model (a model id string, a V1 model).
 */
export function fromAiSdk(model: AiSdkLanguageModel, opts: FromAiSdkOptions = {}): ModelAdapter {
  const spec = (model as { specificationVersion?: unknown } | null)?.specificationVersion
  if ((spec !== 'v2' && spec !== 'v3' && spec !== 'v4') || typeof (model as { doStream?: unknown }).doStream !== 'function') {
    throw new TypeError(`fromAiSdk: expected an AI SDK language model (specification v2, v3 or v4), got ${spec === undefined ? typeof model : `specification ${String(spec)}`}`)
  }
  const now = opts.now ?? Date.now
  // raw chunks carry what a V2 provider leaves out of its parts (an OpenAI refusal, issue 23)
  const extra: Partial<LanguageModelV3CallOptions> = { includeRawChunks: true }
  if (opts.providerOptions !== undefined) extra.providerOptions = opts.providerOptions
  if (opts.headers !== undefined) extra.headers = opts.headers

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<StreamChunk> {
    let result: { stream: ReadableStream<unknown> }
    try {
      // the v2, v3 and v4 call options agree on every member turnlog sends but file data (prompt.ts)
      result = (await (model as LanguageModelV3).doStream(callOptions(request, signal, extra, opts.providerTools, spec as SpecVersion))) as { stream: ReadableStream<unknown> }
    } catch (e) {
      throw wrap(e, signal, now)
    }
    const reader = result.stream.getReader()
    const t = new PartTranslator()
    // a provider that ignores the abort signal would hold the read open until its next part:
    // cancel the part stream at once (a pending read then resolves as done)
    const onAbort = (): void => {
      reader.cancel(signal.reason).catch(() => {})
    }
    signal.addEventListener('abort', onAbort, { once: true })
    try {
      while (!t.finished) {
        let r: { done: boolean; value?: unknown }
        try {
          r = await reader.read()
        } catch (e) {
          throw wrap(e, signal, now)
        }
        if (r.done) break
        const out: StreamChunk[] = []
        try {
          t.onPart(r.value, out)
        } catch (e) {
          if (e instanceof StreamPartError) throw wrap(e.payload, signal, now)
          if (e instanceof StreamGrammarError) throw new ModelError({ code: 'STREAM_GRAMMAR', message: e.message })
          throw e
        }
        for (const c of out) yield c
      }
      if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError')
      if (!t.finished) throw new ModelError({ code: 'TRANSPORT', message: 'the stream ended before the response finished' })
    } finally {
      signal.removeEventListener('abort', onAbort)
      // a consumer that stopped early (cancel) closes the provider's response body
      reader.cancel().catch(() => {})
    }
  }

  const provider = conventionProvider((model as { provider?: unknown }).provider)
  return { stream, info: { name: model.modelId, ...(provider !== undefined ? { provider } : {}), ...opts.info } }
}

/** AI SDK provider ids (the part of `model.provider` before the dot) → GenAI `gen_ai.provider.name` values. */
const PROVIDER_NAMES: Record<string, string> = {
  anthropic: 'anthropic', openai: 'openai', azure: 'azure.ai.openai', google: 'gcp.gemini', vertex: 'gcp.vertex_ai',
  'amazon-bedrock': 'aws.bedrock', bedrock: 'aws.bedrock', mistral: 'mistral_ai', xai: 'x_ai', groq: 'groq',
  deepseek: 'deepseek', perplexity: 'perplexity', cohere: 'cohere',
}

/** The provider as the conventions name it (issue 23): a known id mapped, another kept as is. */
function conventionProvider(p: unknown): string | undefined {
  if (typeof p !== 'string' || p === '') return undefined
  const id = p.split('.')[0]!
  return PROVIDER_NAMES[id] ?? id
}

function wrap(e: unknown, signal: AbortSignal, now: () => number): unknown {
  if (signal.aborted) return e
  if (ModelError.is(e)) return e
  return new ModelError(aiSdkFailure(e, signal, now), { cause: e })
}
