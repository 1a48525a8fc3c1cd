/**
 * Small readers of the chat-completions wire format shared by the request, response and error
 * modules, and the usage mapping.
 */
import type { Usage } from '../../events/index.js'

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined
}

/**
 * Wire usage → disjoint buckets (the Usage schema): `cacheReadTokens` =
 * `prompt_tokens_details.cached_tokens` (or DeepSeek's `prompt_cache_hit_tokens`), `inputTokens`
 * = `prompt_tokens` minus those; `reasoningTokens` = `completion_tokens_details.reasoning_tokens`,
 * `outputTokens` = `completion_tokens` minus those.
 *
 * Some providers (xAI) count `completion_tokens` without the reasoning tokens. This is read from
 * the data, never from the base URL (users reach providers through proxies): reasoning above the
 * completion count can only mean the completion count is the visible output alone, so then
 * `outputTokens` = `completion_tokens` and `reasoningTokens` is kept whole. (When reasoning ≤
 * completion the two conventions cannot be told apart; the OpenAI one, inclusive, is assumed.)
 */
export function toUsage(u: Record<string, unknown>): Usage | undefined {
  const prompt = count(u.prompt_tokens)
  const completion = count(u.completion_tokens)
  if (prompt === undefined && completion === undefined) return undefined
  const promptDetails = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {}
  const completionDetails = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {}
  const cached = Math.min(count(promptDetails.cached_tokens) ?? count(u.prompt_cache_hit_tokens) ?? 0, prompt ?? 0)
  const reasoning = count(completionDetails.reasoning_tokens) ?? 0
  const exclusive = reasoning > (completion ?? 0)
  const usage: Usage = {
    inputTokens: (prompt ?? 0) - cached,
    outputTokens: exclusive ? (completion ?? 0) : (completion ?? 0) - reasoning,
  }
  if (cached > 0) usage.cacheReadTokens = cached
  if (reasoning > 0) usage.reasoningTokens = reasoning
  return usage
}
