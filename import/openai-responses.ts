/**
 * OpenAI Responses input items to the neutral conversation. Messages (`{role, content}` with or
 * without `type: "message"`; content a string or `input_text` / `output_text` / `refusal` /
 * `input_image` parts), `reasoning` (its summary text), `function_call` and
 * `function_call_output`. The provider's own calls (`web_search_call`, `file_search_call`, …) are
 * provider-executed calls: recorded, never run. Accepts the array or a request body `{input}`
 * (its `instructions`, when a non-empty string, is the system prompt). A reasoning item's
 * `encrypted_content` and id are kept as the block's provider data (`{openai: {itemId,
 * reasoningEncryptedContent}}`, the keys the AI SDK's OpenAI provider uses) so the log can send it
 * back; an assistant message with no text (`content: ""`, which some clients send before calls)
 * adds no block.
 */
import type { Block } from '../events/messages.js'
import { badShape, elementLines, parseJsonFile } from './errors.js'
import type { ImportedConversation, ImportedItem } from './model.js'
import { arr, at, dataUrl, obj, str, type Obj } from './shape.js'

type Where = { file?: string; line?: number; field?: string }
type Step = Extract<ImportedItem, { kind: 'step' }>

export function parseOpenAiResponses(text: string, file?: string): ImportedConversation {
  const raw = parseJsonFile(text, file)
  const lines = elementLines(text)
  const body = Array.isArray(raw) ? undefined : obj(raw, { file, line: 1 })
  const list = body ? arr(body.input, { file, line: 1, field: 'input' }) : (raw as unknown[])
  const items: ImportedItem[] = []
  if (body && body.instructions !== undefined && body.instructions !== null) {
    const instructions = str(body.instructions, { file, line: 1, field: 'instructions' })
    if (instructions) items.push({ kind: 'system', text: instructions })
  }
  let step: Step | undefined
  let answered = false // the open step already has results: the next model item is a new response
  const modelStep = (): Step => {
    if (!step || answered) {
      step = { kind: 'step', content: [], results: new Map() }
      items.push(step)
      answered = false
    }
    return step
  }
  list.forEach((it, i) => {
    const w: Where = { file, line: Array.isArray(raw) ? lines[i] : undefined, field: `[${i}]` }
    const item = obj(it, w)
    const type = item.type === undefined ? 'message' : str(item.type, at(w, 'type'))
    if (type === 'message') {
      const role = str(item.role, at(w, 'role'))
      const content = contentBlocks(item.content, at(w, 'content'))
      if (role === 'system' || role === 'developer') {
        items.push({ kind: 'system', text: content.map((b) => (b.type === 'text' ? b.text : '')).join('') })
      } else if (role === 'user') {
        items.push({ kind: 'user', content })
        step = undefined
      } else if (role === 'assistant') {
        const said = content.filter((b) => b.type !== 'text' || b.text !== '')
        if (said.length) modelStep().content.push(...said)
      } else throw badShape(at(w, 'role'), `unknown role "${role}" (system, developer, user or assistant)`)
    } else if (type === 'reasoning') {
      const summary = item.summary === undefined ? [] : arr(item.summary, at(w, 'summary'))
      const t = summary.map((s, j) => str(obj(s, at(w, `summary[${j}]`)).text, at(w, `summary[${j}].text`))).join('\n\n')
      const openai: Record<string, unknown> = {}
      if (typeof item.id === 'string') openai.itemId = item.id
      if (typeof item.encrypted_content === 'string') openai.reasoningEncryptedContent = item.encrypted_content
      modelStep().content.push({ type: 'reasoning', text: t, ...(Object.keys(openai).length ? { providerData: { openai } } : {}) })
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      const args = type === 'function_call' ? str(item.arguments, at(w, 'arguments')) : JSON.stringify(str(item.input, at(w, 'input')))
      modelStep().content.push({ type: 'tool-call', id: str(item.call_id, at(w, 'call_id')), name: str(item.name, at(w, 'name')), arguments: args })
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const id = str(item.call_id, at(w, 'call_id'))
      if (!step || !step.content.some((b) => b.type === 'tool-call' && b.id === id)) {
        throw badShape(at(w, 'call_id'), `output for "${id}", which no function_call of the response before it made`)
      }
      const out = item.output
      const textOut = typeof out === 'string' ? out : contentBlocks(out, at(w, 'output')).map((b) => (b.type === 'text' ? b.text : '')).join('')
      step.results.set(id, { content: [{ type: 'text', text: textOut }] })
      answered = true
    } else if (type.endsWith('_call') && typeof item.id === 'string') {
      // a call the provider ran (web search, file search, code interpreter…): recorded, not run here
      const { type: _t, id, status: _s, ...rest } = item
      void _t
      void _s
      modelStep().content.push({ type: 'tool-call', id: id as string, name: type.slice(0, -'_call'.length), arguments: JSON.stringify(rest), providerExecuted: true })
    } else if (type === 'item_reference') {
      throw badShape(at(w, 'type'), 'an item_reference points into a stored response the file does not hold; import the items themselves')
    } else {
      throw badShape(at(w, 'type'), `unknown input item type "${type}"`)
    }
  })
  return { items }
}

function contentBlocks(v: unknown, w: Where): Block[] {
  if (typeof v === 'string') return [{ type: 'text', text: v }]
  const out: Block[] = []
  arr(v, w).forEach((p, j) => {
    const pw = at(w, `[${j}]`)
    const part: Obj = obj(p, pw)
    const type = str(part.type, at(pw, 'type'))
    if (type === 'input_text' || type === 'output_text' || type === 'text') out.push({ type: 'text', text: str(part.text, at(pw, 'text')) })
    else if (type === 'refusal') out.push({ type: 'text', text: str(part.refusal, at(pw, 'refusal')) })
    else if (type === 'input_image') {
      const url = typeof part.image_url === 'string' ? part.image_url : undefined
      const d = url ? dataUrl(url) : undefined
      out.push(d ? { type: 'image', mediaType: d.mediaType, data: d.data } : { type: 'text', text: `[image${url ? `: ${url}` : ''}]` })
    } else if (type === 'input_file' || type === 'input_audio') {
      out.push({ type: 'text', text: `[${type}${typeof part.filename === 'string' ? ` ${part.filename}` : ''}]` })
    } else throw badShape(at(pw, 'type'), `unknown content part type "${type}"`)
  })
  return out
}
