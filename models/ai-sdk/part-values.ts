/**
 * Reading the values inside AI SDK stream parts (v2, v3 and v4): provider data, usage (per provider's
 * convention), warnings, plain JSON copies. Split from stream.ts, which translates the part
 * sequence; everything here is a pure function of one part's value.
 */
import type { ProviderData, Usage } from '../../events/index.js'

export function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * A part's `providerMetadata` as log data: a JSON copy (provider code may leave `undefined`
 * members or class instances in it; the log takes lossless JSON only), kept only when it is an
 * object of per-provider objects. Anything else reads as absent.
 */
export function providerDataOf(v: unknown): ProviderData | undefined {
  if (!isObject(v)) return undefined
  let copy: unknown
  try {
    copy = JSON.parse(JSON.stringify(v)) as unknown
  } catch {
    return undefined // a cycle, a BigInt, a throwing toJSON: not data the log can hold
  }
  if (!isObject(copy)) return undefined
  const out: ProviderData = {}
  for (const [k, inner] of Object.entries(copy)) if (isObject(inner)) out[k] = inner
  return Object.keys(out).length > 0 ? out : undefined
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : ''
}

/** A JSON copy of provider data (undefined when it is not JSON). */
export function jsonCopy(v: unknown): unknown {
  try {
    const s = JSON.stringify(v)
    return s === undefined ? undefined : (JSON.parse(s) as unknown)
  } catch {
    return undefined
  }
}

/** One line for a call warning (V2 `unsupported-setting`/`unsupported-tool`, V3 `unsupported`/`compatibility`, `other`). */
export function warningText(w: unknown): string {
  if (!isObject(w)) return String(w)
  const type = str(w.type) || 'warning'
  const tool = isObject(w.tool) ? str(w.tool.name) : ''
  const what = str(w.setting) || str(w.feature) || tool
  const detail = str(w.details) || str(w.message)
  return `${type}${what !== '' ? ` ${what}` : ''}${detail !== '' ? `: ${detail}` : ''}`
}

/**
 * AI SDK usage → disjoint buckets. V3: `inputTokens.noCache` (else total − cacheRead − cacheWrite),
 * `cacheRead`, `cacheWrite`; `outputTokens.text` (else total − reasoning) and `reasoning`. When
 * reasoning exceeds the output total the provider counted the total without it (xAI through
 * openai-compatible): the total is then the visible output. V2: `outputTokens` − `reasoningTokens`
 * under the same rule; V2's `inputTokens` is provider-defined (issue 23), so it is read per
 * provider, from the data where possible: with `anthropic` provider metadata (@ai-sdk/anthropic@2)
 * it excludes cache reads and the cache write is `providerMetadata.anthropic.cacheCreationInputTokens`;
 * cache reads above the input count can only mean the count excludes them; otherwise (OpenAI's
 * convention) it includes them and the uncached input is `inputTokens` − `cachedInputTokens`.
 * V2 reasoning without `reasoningTokens` (@ai-sdk/anthropic@2) is read from the wire usage in
 * `providerMetadata.anthropic.usage` (`output_tokens_details.thinking_tokens`).
 */
export function usageFromAiSdk(u: unknown, providerMetadata?: unknown): Usage | undefined {
  if (!isObject(u)) return undefined
  if (isObject(u.inputTokens) || isObject(u.outputTokens)) {
    const input = isObject(u.inputTokens) ? u.inputTokens : {}
    const output = isObject(u.outputTokens) ? u.outputTokens : {}
    const cacheRead = count(input.cacheRead) ?? 0
    const cacheWrite = count(input.cacheWrite) ?? 0
    const inTotal = count(input.total)
    const noCache = count(input.noCache) ?? (inTotal === undefined ? undefined : Math.max(0, inTotal - cacheRead - cacheWrite))
    const outTotal = count(output.total)
    const reasoning = count(output.reasoning) ?? 0
    const text = outTotal !== undefined && reasoning > outTotal ? outTotal : count(output.text) ?? (outTotal === undefined ? undefined : outTotal - reasoning)
    if (noCache === undefined && text === undefined && cacheRead === 0 && reasoning === 0) return undefined
    const usage: Usage = { inputTokens: noCache ?? 0, outputTokens: text ?? 0 }
    if (cacheRead > 0) usage.cacheReadTokens = cacheRead
    if (cacheWrite > 0) usage.cacheWriteTokens = cacheWrite
    if (reasoning > 0) usage.reasoningTokens = reasoning
    return usage
  }
  const inTotal = count(u.inputTokens)
  const outTotal = count(u.outputTokens)
  if (inTotal === undefined && outTotal === undefined) return undefined
  const anthropic = isObject(providerMetadata) && isObject(providerMetadata.anthropic) ? providerMetadata.anthropic : undefined
  const cachedRaw = count(u.cachedInputTokens) ?? 0
  const exclusive = anthropic !== undefined || cachedRaw > (inTotal ?? 0)
  const cached = exclusive ? cachedRaw : Math.min(cachedRaw, inTotal ?? 0)
  const cacheWrite = anthropic !== undefined ? count(anthropic.cacheCreationInputTokens) ?? 0 : 0
  // @ai-sdk/anthropic@2 counts thinking inside `outputTokens` and reports no `reasoningTokens`;
  // its finish metadata holds the wire usage, whose `output_tokens_details.thinking_tokens` says
  // how much of the output was thinking (issue 38 item 29: the same buckets as through v3 and v4)
  const wire = anthropic !== undefined && isObject(anthropic.usage) ? anthropic.usage : undefined
  const thinking = wire !== undefined && isObject(wire.output_tokens_details) ? count(wire.output_tokens_details.thinking_tokens) : undefined
  const reasoning = count(u.reasoningTokens) ?? thinking ?? 0
  const usage: Usage = {
    inputTokens: exclusive ? inTotal ?? 0 : (inTotal ?? 0) - cached,
    outputTokens: reasoning > (outTotal ?? 0) ? (outTotal ?? 0) : (outTotal ?? 0) - reasoning,
  }
  if (cached > 0) usage.cacheReadTokens = cached
  if (cacheWrite > 0) usage.cacheWriteTokens = cacheWrite
  if (reasoning > 0) usage.reasoningTokens = reasoning
  return usage
}

/**
 * A file part's data as a log block's: v2/v3 base64 or bytes; v4 `{type: 'data', data}` (base64 or
 * bytes) or `{type: 'url', url}`. Anything else reads as no file.
 */
export function fileOf(d: unknown): { data: string } | { url: string } | undefined {
  if (typeof d === 'string') return { data: d }
  if (d instanceof Uint8Array) return { data: Buffer.from(d).toString('base64') }
  if (!isObject(d)) return undefined
  if (d.type === 'data') return fileOf(d.data)
  if (d.type === 'url' && (typeof d.url === 'string' || d.url instanceof URL)) return { url: String(d.url) }
  return undefined
}

/**
 * Whether a finish part's provider metadata says the model refused: Anthropic's `stop_details`
 * (`{type: 'refusal', explanation}`), which every specification version carries in
 * `providerMetadata.anthropic.stopDetails`; V2 has no raw finish reason to say it otherwise
 * (issue 38 item 29).
 */
export function refusalDetails(meta: unknown): boolean {
  if (!isObject(meta)) return false
  return Object.values(meta).some((p) => isObject(p) && isObject(p.stopDetails) && p.stopDetails.type === 'refusal')
}
