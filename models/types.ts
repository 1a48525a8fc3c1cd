/**
 * The model seam (docs/spec/api.md "Models", docs/spec/events.md "Stream chunks").
 *
 * A model adapter turns one frozen request into a stream of chunks in the chunk grammar. It never
 * sees the log; the driver appends each chunk as `assistant/chunk` and assembles the message.
 */
import type { ModelMessage, RequestConfig, StreamChunk, ToolSpec } from '../events/index.js'

/** One model request: exactly what the model sees (docs/spec/lifecycle.md §4.3 "the request is frozen"). */
export interface ModelRequest {
  /** The model-visible history: the derived surface projected to messages. */
  readonly messages: readonly ModelMessage[]
  readonly system: string
  readonly tools: readonly ToolSpec[]
  readonly config: RequestConfig
  /** Why the request is made: an agent step (default) or a compaction summary. */
  readonly purpose?: 'turn' | 'compaction'
}

/** Static facts about a model, for the token meter and for display. */
export interface ModelInfo {
  contextWindow?: number
  name?: string
  /**
   * The provider, as the GenAI conventions name it (`openai`, `anthropic`, …): recorded in
   * `request/header` (issue 23), so spans exported from the log name it.
   */
  provider?: string
}

/**
 * Anything that streams chunks for a request. The stream should honour `signal`: stop yielding and
 * throw (an AbortError, or anything: the checked stream maps it to `ABORTED` once the signal is
 * aborted). Errors may be thrown (see `ModelError`) or reported in-band with a `finish` of reason
 * `error`.
 */
export interface ModelAdapter {
  /** One model call: the chunks of the answer to `request`, in the chunk grammar, until a `finish`. */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamChunk>
  info?: ModelInfo
}

/** The bare stream function (what an `llm/stream` hook wraps); `checkedStream` accepts either. */
export type StreamFn = (request: ModelRequest, signal: AbortSignal) => AsyncIterable<StreamChunk>
