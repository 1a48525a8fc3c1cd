/**
 * The span fold's vocabulary (split from fold.ts, unchanged): the span actions it emits, its
 * options, and the pieces of the GenAI mapping that are plain tables and functions (finish
 * reasons, the placeholder model, usage attributes).
 */
import { ATTR, type SemconvMode } from './attributes.js'

export type AttrValue = string | number | boolean | string[]
export type Attributes = Record<string, AttrValue>

/** A link to an earlier span (by key), e.g. a retry's link to the attempt it retries. */
export interface SpanLink {
  key: string
  attributes?: Attributes
}

/** A span in the mapping's terms (no OpenTelemetry types): `key` is unique within the session. */
export interface SpanStart {
  key: string
  parentKey?: string
  name: string
  kind: 'internal' | 'client'
  startTime: number
  attributes: Attributes
  /** Earlier spans this one follows from (a retry: the failed attempt's turn and chat spans). */
  links?: SpanLink[]
}
export interface SpanEnd {
  key: string
  endTime: number
  attributes: Attributes
  status: { code: 'ok' | 'error' | 'unset'; message?: string }
}
export type SpanAction = ({ op: 'start' } & SpanStart) | ({ op: 'end' } & SpanEnd)

export interface SpanFoldOptions {
  /** The session id (`gen_ai.conversation.id`). */
  sessionId: string
  /** `gen_ai.provider.name` / `gen_ai.system` (e.g. `openai`, `anthropic`). Default: the provider
   * the last `request/header` recorded, else `_OTHER`. */
  provider?: string
  /** `gen_ai.agent.name`; also names the turn span `invoke_agent {agentName}`. */
  agentName?: string
  /** Record message content on spans. Default false. */
  includeContent?: boolean
  /**
   * Which GenAI attribute names come out; when absent, from `OTEL_SEMCONV_STABILITY_OPT_IN`.
   * GenAI attribute names: the current conventions' by default (`gen_ai.provider.name`).
   * `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` (the conventions' own opt-in value)
   * selects the same names; `gen_ai/dup` in that comma-separated list also emits the v1.36
   * `gen_ai.system`; no other value changes them. The `semconv` option (`--semconv` of `turnlog
   * export`), when given, wins over the variable: `latest`, `dup` (both names) or `v1.36`
   * (`gen_ai.system` only).
   */
  semconv?: SemconvMode
}

/** turnlog's finish → `gen_ai.response.finish_reasons` (provider-style values). */
export const FINISH_REASONS: Record<string, string> = { stop: 'stop', 'tool-calls': 'tool_calls', 'max-tokens': 'length', refusal: 'content_filter' }

/** The model the agent names when its adapter gave none: no model known (issue 23). */
export const PLACEHOLDER_MODEL = 'model'

/** Usage → the convention's attributes (inclusive totals plus details). */
export function usageAttributes(u: Record<string, any> | undefined): Attributes {
  if (u === undefined || u === null || typeof u !== 'object') return {}
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0)
  const out: Attributes = {
    [ATTR.inputTokens]: n(u.inputTokens) + n(u.cacheReadTokens) + n(u.cacheWriteTokens),
    [ATTR.outputTokens]: n(u.outputTokens) + n(u.reasoningTokens),
  }
  if (n(u.cacheReadTokens) > 0) out[ATTR.cacheRead] = n(u.cacheReadTokens)
  if (n(u.cacheWriteTokens) > 0) out[ATTR.cacheCreation] = n(u.cacheWriteTokens)
  if (n(u.reasoningTokens) > 0) out[ATTR.reasoning] = n(u.reasoningTokens)
  return out
}
