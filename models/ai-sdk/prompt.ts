/**
 * The request side of `fromAiSdk`: a frozen `ModelRequest` → AI SDK call options (the prompt,
 * function tools and the sampling settings specifications v2, v3 and v4 share). Where v4 differs
 * (file data as a tagged union `{type: 'data' | 'url', …}`; `custom` and `reasoning-file` content
 * in assistant messages) the builder follows the model's version: a block v2/v3 has no part for
 * (provider content from a v4 model, replayed against an older one) is left out, as it could not
 * mean anything to that provider.
 */
import type { JSONValue, LanguageModelV3CallOptions, LanguageModelV3DataContent, LanguageModelV3Message, SharedV3ProviderOptions } from '@ai-sdk/provider'
import type { Block, ModelMessage } from '../../events/index.js'
import type { ModelRequest } from '../types.js'

/** A tool call's arguments as the prompt wants them: parsed JSON; an unparsable string as `{}`. */
function parseArguments(raw: string): unknown {
  if (raw.trim() === '') return {}
  try {
    return JSON.parse(raw) as unknown
  } catch {
    // the model wrote broken JSON; the tool already answered with an error, the call must still
    // be well-formed for the provider
    return {}
  }
}

function text(blocks: readonly Block[]): string {
  const parts: string[] = []
  for (const b of blocks) {
    if (b.type === 'text') parts.push(b.text)
    else if (b.type === 'image') parts.push(`[image: ${b.mediaType}]`)
  }
  return parts.join('\n')
}

/** The specification version of the model the prompt is for. */
export type SpecVersion = 'v2' | 'v3' | 'v4'

/**
 * File data as the version wants it: v2/v3 take base64 or a `URL` as is, v4 a tagged union. The
 * return type is v3's (the types this module compiles against); a v4 model reads the tagged form.
 */
function fileData(spec: SpecVersion, b: { data?: string | undefined; url?: string | undefined }): LanguageModelV3DataContent {
  if (spec !== 'v4') return b.url !== undefined ? new URL(b.url) : b.data ?? ''
  const tagged = b.url !== undefined ? { type: 'url', url: new URL(b.url) } : { type: 'data', data: b.data ?? '' }
  return tagged as unknown as LanguageModelV3DataContent
}

/** What the prompt builder remembers of the calls seen so far: names, and the provider's approval ids. */
interface Seen {
  spec: SpecVersion
  toolNames: Map<string, string>
  /** call id → the provider's approval id, for provider-executed calls a person was asked about */
  approvals: Map<string, string>
}

/** One history message in the AI SDK prompt format. */
function toPromptMessage(m: ModelMessage, seen: Seen): LanguageModelV3Message {
  const { toolNames } = seen
  switch (m.role) {
    case 'user': {
      const content: Extract<LanguageModelV3Message, { role: 'user' }>['content'] = []
      for (const b of m.content) {
        if (b.type === 'text') content.push({ type: 'text', text: b.text })
        else if (b.type === 'image') content.push({ type: 'file', mediaType: b.mediaType, data: fileData(seen.spec, { data: b.data }) })
      }
      return { role: 'user', content }
    }
    case 'assistant': {
      const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = []
      for (const b of m.content) {
        // a block's provider data goes back as the part's providerOptions, as `streamText` sends
        // a response part's providerMetadata (Claude's thinking signature, redacted thinking)
        const po = b.providerData === undefined ? {} : { providerOptions: b.providerData as SharedV3ProviderOptions }
        if (b.type === 'text') content.push({ type: 'text', text: b.text, ...po })
        else if (b.type === 'reasoning') content.push({ type: 'reasoning', text: b.text, ...po })
        else if (b.type === 'tool-call') {
          toolNames.set(b.id, b.name)
          if (b.providerExecuted === true && b.approvalId !== undefined) seen.approvals.set(b.id, b.approvalId)
          const pe = b.providerExecuted === true ? { providerExecuted: true } : {}
          content.push({ type: 'tool-call', toolCallId: b.id, toolName: b.name, input: parseArguments(b.arguments), ...pe, ...po })
        } else if (b.type === 'tool-result') {
          // a provider-executed call's result goes back in the assistant turn, as streamText sends it
          const value = (b.result ?? null) as JSONValue
          const output = b.isError === true ? { type: 'error-json' as const, value } : typeof value === 'string' ? { type: 'text' as const, value } : { type: 'json' as const, value }
          content.push({ type: 'tool-result', toolCallId: b.id, toolName: b.name, output, ...po })
        } else if (b.type === 'file') {
          if (b.reasoning !== true) content.push({ type: 'file', data: fileData(seen.spec, b), mediaType: b.mediaType, ...po })
          else if (seen.spec === 'v4') {
            // a file made while reasoning goes back as the v4 `reasoning-file` part streamText sends
            content.push({ type: 'reasoning-file', data: fileData(seen.spec, b), mediaType: b.mediaType, ...po } as unknown as (typeof content)[number])
          }
        } else if (b.type === 'custom' && seen.spec === 'v4') {
          // provider content (a fallback notice, a compaction item…) goes back as it came, as streamText sends it
          content.push({ type: 'custom', kind: b.kind, ...po } as unknown as (typeof content)[number])
        }
        // sources are citations for people: never sent back (as in streamText); a text's
        // citations neither (the v4 prompt's text part has none)
      }
      return { role: 'assistant', content }
    }
    case 'tool': {
      const approvalId = seen.approvals.get(m.callId)
      if (approvalId !== undefined) {
        // the decision on a provider's call goes back as streamText sends it: a tool message with a
        // `tool-approval-response` (approved unless the result is an error; a denial's text is the
        // reason the person gave), never as a tool result (issue 23)
        const reason = m.isError === true ? text(m.content) : ''
        return {
          role: 'tool',
          content: [{ type: 'tool-approval-response', approvalId, approved: m.isError !== true, ...(reason !== '' ? { reason } : {}) }],
        }
      }
      return {
        role: 'tool',
        content: [{
          type: 'tool-result',
          toolCallId: m.callId,
          toolName: toolNames.get(m.callId) ?? '',
          output: m.isError === true ? { type: 'error-text', value: text(m.content) } : { type: 'text', value: text(m.content) },
        }],
      }
    }
  }
}

/** Known camelCase config members and their call-option names. Other members are not sent. */
function settings(config: Record<string, unknown>): Partial<LanguageModelV3CallOptions> {
  const out: Partial<LanguageModelV3CallOptions> = {}
  const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)
  if (num(config.maxTokens) !== undefined) out.maxOutputTokens = num(config.maxTokens)
  if (num(config.temperature) !== undefined) out.temperature = num(config.temperature)
  if (num(config.topP) !== undefined) out.topP = num(config.topP)
  if (num(config.topK) !== undefined) out.topK = num(config.topK)
  if (num(config.seed) !== undefined) out.seed = num(config.seed)
  if (num(config.presencePenalty) !== undefined) out.presencePenalty = num(config.presencePenalty)
  if (num(config.frequencyPenalty) !== undefined) out.frequencyPenalty = num(config.frequencyPenalty)
  const stop = config.stop
  if (typeof stop === 'string') out.stopSequences = [stop]
  else if (Array.isArray(stop) && stop.every((s) => typeof s === 'string')) out.stopSequences = stop as string[]
  const choice = config.toolChoice
  if (choice === 'auto' || choice === 'none' || choice === 'required') out.toolChoice = { type: choice }
  else if (typeof choice === 'object' && choice !== null && typeof (choice as { name?: unknown }).name === 'string') {
    out.toolChoice = { type: 'tool', toolName: (choice as { name: string }).name }
  }
  return out
}

/**
 * The call options for a request. The shape is common to specifications v2, v3 and v4 for
 * everything turnlog sends but file data and v4's own content parts (see `fileData`), so one
 * builder serves all three.
 */
export function callOptions(
  request: ModelRequest,
  signal: AbortSignal,
  extra: Partial<LanguageModelV3CallOptions> = {},
  providerTools?: NonNullable<LanguageModelV3CallOptions['tools']>,
  spec: SpecVersion = 'v3',
): LanguageModelV3CallOptions {
  const seen: Seen = { spec, toolNames: new Map(), approvals: new Map() }
  const prompt: LanguageModelV3Message[] = []
  if (request.system !== '') prompt.push({ role: 'system', content: request.system })
  for (const m of request.messages) prompt.push(toPromptMessage(m, seen))
  const options: LanguageModelV3CallOptions = {
    ...extra,
    ...settings(request.config as Record<string, unknown>),
    prompt,
    abortSignal: signal,
  }
  const tools: NonNullable<LanguageModelV3CallOptions['tools']> = request.tools.map((t) => ({
    type: 'function' as const,
    name: t.name,
    description: t.description,
    inputSchema: t.parameters as Extract<NonNullable<LanguageModelV3CallOptions['tools']>[number], { type: 'function' }>['inputSchema'],
  }))
  if (providerTools !== undefined) tools.push(...providerTools)
  if (tools.length > 0) options.tools = tools
  return options
}
