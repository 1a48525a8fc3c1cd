/** The request side: a frozen `ModelRequest` → the chat-completions request body. */
import type { Block, ModelMessage } from '../../events/index.js'
import type { ModelRequest } from '../types.js'
import { sendsReasoning, type OpenAICompatibleOptions } from './options.js'

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

/** The request body: model, messages, tools, known config members, then `extraBody` on top. */
export function requestBody(request: ModelRequest, opts: OpenAICompatibleOptions): Record<string, unknown> {
  const config = request.config as Record<string, unknown>
  const body: Record<string, unknown> = {
    model: opts.model ?? request.config.model,
    messages: toWireMessages(request, sendsReasoning(opts)),
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
        else if (b.type === 'tool-call' && b.providerExecuted !== true) {
          // (a provider-executed call, issue 23, is another provider's: chat completions has no
          // place for it, and its result is not a tool message)
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

