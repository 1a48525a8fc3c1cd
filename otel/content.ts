/**
 * Message content in the shape of the GenAI conventions' JSON schemas (`gen_ai.input.messages`,
 * `gen_ai.output.messages`, `gen_ai.system_instructions`; issue 23): messages are
 * `{role, parts, finish_reason?}`, parts `{type: 'text' | 'reasoning', content}`,
 * `{type: 'tool_call', id, name, arguments}` (arguments parsed: an object, or the raw string when
 * the model wrote broken JSON), `{type: 'tool_call_response', id, response}`, `{type: 'blob',
 * modality, mime_type, content}` for images and files, `{type: 'server_tool_call' |
 * 'server_tool_call_response', …}` for provider-executed calls. Sources (citations) have no part
 * type and are left out. Reads log data defensively: a malformed block becomes no part.
 */
type D = Record<string, any>

function parsedArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? null
  if (raw.trim() === '') return {}
  try {
    return JSON.parse(raw) as unknown
  } catch {
    return raw
  }
}

function part(b: D): D | undefined {
  switch (b?.type) {
    case 'text':
      return { type: 'text', content: String(b.text ?? '') }
    case 'reasoning':
      return { type: 'reasoning', content: String(b.text ?? '') }
    case 'tool-call':
      return b.providerExecuted === true
        ? { type: 'server_tool_call', id: String(b.id), name: String(b.name), server_tool_call: { type: String(b.name), arguments: parsedArguments(b.arguments) } }
        : { type: 'tool_call', id: String(b.id), name: String(b.name), arguments: parsedArguments(b.arguments) }
    case 'tool-result':
      return { type: 'server_tool_call_response', id: String(b.id), server_tool_call_response: { type: String(b.name), response: b.result ?? null } }
    case 'file':
      if (typeof b.url === 'string') return { type: 'uri', modality: String(b.mediaType ?? '').startsWith('image/') ? 'image' : 'file', mime_type: String(b.mediaType ?? ''), uri: b.url }
      return { type: 'blob', modality: String(b.mediaType ?? '').startsWith('image/') ? 'image' : 'file', mime_type: String(b.mediaType ?? ''), content: String(b.data ?? '') }
    case 'image':
      return { type: 'blob', modality: String(b.mediaType ?? '').startsWith('image/') ? 'image' : 'file', mime_type: String(b.mediaType ?? ''), content: String(b.data ?? '') }
    default:
      return undefined
  }
}

/** The parts of a block list. */
export function parts(content: unknown): D[] {
  if (!Array.isArray(content)) return []
  const out: D[] = []
  for (const b of content) {
    const p = part(b as D)
    if (p !== undefined) out.push(p)
  }
  return out
}

/** The text of a tool result message's blocks, as one response string. */
function responseText(content: unknown): string {
  return Array.isArray(content) ? content.map((b: D) => (b?.type === 'text' ? String(b.text ?? '') : '')).join('') : ''
}

/** A logged message (user, assistant or tool) as a convention message. */
export function conventionMessage(m: D): D {
  if (m?.role === 'tool') return { role: 'tool', parts: [{ type: 'tool_call_response', id: String(m.callId), response: responseText(m.content) }] }
  return { role: String(m?.role ?? 'user'), parts: parts(m?.content) }
}

/** turnlog's finish → the conventions' FinishReason. */
export const FINISH: Record<string, string> = { stop: 'stop', 'tool-calls': 'tool_call', 'max-tokens': 'length', refusal: 'content_filter' }

/** The output messages of an `assistant/message`. */
export function outputMessages(d: D): D[] {
  const finish = d.interrupted === true ? 'stop' : FINISH[d.finish] ?? 'stop'
  return [{ ...conventionMessage(d.message), finish_reason: finish }]
}

/** The text of a tool result (for `gen_ai.tool.call.result`). */
export { responseText as toolResultText }
