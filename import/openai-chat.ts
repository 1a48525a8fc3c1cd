/**
 * OpenAI Chat Completions message arrays to the neutral conversation: `system` / `developer`
 * messages are the system prompt, `user` messages open turns, an `assistant` message (text,
 * `refusal`, `tool_calls`) is one step, and the `tool` messages after it are its calls' results.
 * Accepts the array itself or a request body `{messages: [...]}`.
 */
import type { Block } from '../events/messages.js'
import { badShape, elementLines, parseJsonFile } from './errors.js'
import type { ImportedConversation, ImportedItem } from './model.js'
import { arr, at, dataUrl, obj, optStr, str, type Obj } from './shape.js'

type Where = { file?: string; line?: number; field?: string }

export function parseOpenAiChat(text: string, file?: string): ImportedConversation {
  const raw = parseJsonFile(text, file)
  const lines = elementLines(text)
  const list = Array.isArray(raw) ? raw : arr(obj(raw, { file, line: 1 }).messages, { file, line: 1, field: 'messages' })
  const items: ImportedItem[] = []
  let last: Extract<ImportedItem, { kind: 'step' }> | undefined
  list.forEach((m, i) => {
    const w: Where = { file, line: Array.isArray(raw) ? lines[i] : undefined, field: `[${i}]` }
    const msg = obj(m, w)
    const role = str(msg.role, at(w, 'role'))
    if (role === 'system' || role === 'developer') {
      items.push({ kind: 'system', text: textOf(msg.content, at(w, 'content')) })
    } else if (role === 'user') {
      items.push({ kind: 'user', content: userContent(msg.content, at(w, 'content')) })
      last = undefined
    } else if (role === 'assistant') {
      const content: Block[] = []
      if (msg.content !== undefined && msg.content !== null) {
        const t = textOf(msg.content, at(w, 'content'))
        if (t) content.push({ type: 'text', text: t })
      }
      const refusal = optStr(msg.refusal, at(w, 'refusal'))
      if (refusal) content.push({ type: 'text', text: refusal })
      if (msg.tool_calls !== undefined && msg.tool_calls !== null) {
        arr(msg.tool_calls, at(w, 'tool_calls')).forEach((c, j) => {
          const cw = at(w, `tool_calls[${j}]`)
          const call = obj(c, cw)
          const fn = obj(call.function, at(cw, 'function'))
          content.push({ type: 'tool-call', id: str(call.id, at(cw, 'id')), name: str(fn.name, at(cw, 'function.name')), arguments: str(fn.arguments, at(cw, 'function.arguments')) })
        })
      }
      last = { kind: 'step', content, results: new Map() }
      items.push(last)
    } else if (role === 'tool') {
      const id = str(msg.tool_call_id, at(w, 'tool_call_id'))
      const called = last?.content.some((b) => b.type === 'tool-call' && b.id === id)
      if (!last || !called) throw badShape(at(w, 'tool_call_id'), `tool message for "${id}", which no assistant message before it called`)
      last.results.set(id, { content: [{ type: 'text', text: textOf(msg.content, at(w, 'content')) }] })
    } else {
      throw badShape(at(w, 'role'), `unknown role "${role}" (system, developer, user, assistant or tool)`)
    }
  })
  return { items }
}

/** A content string, or the text of its `text` parts. */
function textOf(v: unknown, w: Where): string {
  if (typeof v === 'string') return v
  return arr(v, w).map((p, j) => {
    const part = obj(p, at(w, `[${j}]`))
    return part.type === 'text' ? str(part.text, at(w, `[${j}].text`)) : ''
  }).join('')
}

function userContent(v: unknown, w: Where): Block[] {
  if (typeof v === 'string') return [{ type: 'text', text: v }]
  const out: Block[] = []
  arr(v, w).forEach((p, j) => {
    const pw = at(w, `[${j}]`)
    const part: Obj = obj(p, pw)
    const type = str(part.type, at(pw, 'type'))
    if (type === 'text') out.push({ type: 'text', text: str(part.text, at(pw, 'text')) })
    else if (type === 'image_url') {
      const url = str(obj(part.image_url, at(pw, 'image_url')).url, at(pw, 'image_url.url'))
      const d = dataUrl(url)
      out.push(d ? { type: 'image', mediaType: d.mediaType, data: d.data } : { type: 'text', text: `[image: ${url}]` })
    } else if (type === 'input_audio' || type === 'file') {
      out.push({ type: 'text', text: `[${type}]` })
    } else throw badShape(at(pw, 'type'), `unknown content part type "${type}"`)
  })
  return out
}
