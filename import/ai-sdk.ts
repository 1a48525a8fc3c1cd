/**
 * AI SDK `UIMessage[]` (v5–v7 shapes) to the neutral conversation. Parts: `text`, `reasoning`,
 * `tool-<name>` and `dynamic-tool` (states input-streaming, input-available, approval-requested,
 * approval-responded, output-available, output-error, output-denied), `file`, `source-url`,
 * `source-document`, `step-start` (a step boundary) and `data-*` (app data, not the model's: not
 * imported). A message with `content` and no `parts` (the v4 shape) is read as one text part.
 */
import type { Block } from '../events/messages.js'
import { badShape, elementLines, parseJsonFile } from './errors.js'
import type { ImportedConversation, ImportedItem, ImportedResult } from './model.js'
import { argumentsOf, arr, at, fileBlock, obj, optStr, outputBlocks, str, type Obj } from './shape.js'

export function parseAiSdkUi(text: string, file?: string): ImportedConversation {
  const raw = parseJsonFile(text, file)
  const lines = elementLines(text)
  // a chat export may wrap the array: {messages: [...]}
  const list = Array.isArray(raw) ? raw : arr(obj(raw, { file, line: 1 }).messages, { file, line: 1, field: 'messages' })
  const items: ImportedItem[] = []
  list.forEach((m, i) => {
    const w = { file, line: Array.isArray(raw) ? lines[i] : undefined, field: `[${i}]` }
    const msg = obj(m, w)
    const role = str(msg.role, at(w, 'role'))
    const parts = msg.parts === undefined && typeof msg.content === 'string'
      ? [{ type: 'text', text: msg.content }]
      : arr(msg.parts, at(w, 'parts'))
    if (role === 'system') {
      const t = parts.map((p, j) => str(obj(p, at(w, `parts[${j}]`)).text ?? '', at(w, `parts[${j}].text`))).join('')
      items.push({ kind: 'system', text: t })
    } else if (role === 'user') {
      const content: Block[] = []
      parts.forEach((p, j) => {
        const b = userPart(obj(p, at(w, `parts[${j}]`)), at(w, `parts[${j}]`))
        if (b) content.push(b)
      })
      items.push({ kind: 'user', id: optStr(msg.id, at(w, 'id')) || undefined, content })
    } else if (role === 'assistant') {
      items.push(...assistantSteps(parts, w))
    } else {
      throw badShape(at(w, 'role'), `unknown role "${role}" (system, user or assistant)`)
    }
  })
  return { items }
}

function userPart(p: Obj, w: { file?: string; line?: number; field?: string }): Block | undefined {
  const type = str(p.type, at(w, 'type'))
  if (type === 'text') return { type: 'text', text: str(p.text, at(w, 'text')) }
  if (type === 'file') return fileBlock(str(p.mediaType, at(w, 'mediaType')), str(p.url, at(w, 'url')), optStr(p.filename, at(w, 'filename')))
  return undefined // data-* and anything the model never saw
}

function assistantSteps(parts: unknown[], w: { file?: string; line?: number; field?: string }): ImportedItem[] {
  const steps: ImportedItem[] = []
  let content: Block[] = []
  let results = new Map<string, ImportedResult>()
  let sawTool = false
  const flush = (): void => {
    if (content.length) steps.push({ kind: 'step', content, results })
    content = []
    results = new Map()
    sawTool = false
  }
  parts.forEach((raw, j) => {
    const pw = at(w, `parts[${j}]`)
    const p = obj(raw, pw)
    const type = str(p.type, at(pw, 'type'))
    if (type === 'step-start') return flush()
    if (type.startsWith('data-')) return
    const isTool = type === 'dynamic-tool' || type.startsWith('tool-')
    // no step-start (older messages): content after a tool's result is the next response
    if (!isTool && sawTool) flush()
    if (type === 'text') content.push({ type: 'text', text: str(p.text, at(pw, 'text')) })
    else if (type === 'reasoning') content.push({ type: 'reasoning', text: str(p.text, at(pw, 'text')) })
    else if (type === 'file') content.push(fileBlock(str(p.mediaType, at(pw, 'mediaType')), str(p.url, at(pw, 'url')), optStr(p.filename, at(pw, 'filename'))))
    else if (type === 'source-url') {
      content.push({ type: 'source', sourceType: 'url', id: str(p.sourceId, at(pw, 'sourceId')), url: str(p.url, at(pw, 'url')), ...(typeof p.title === 'string' ? { title: p.title } : {}) })
    } else if (type === 'source-document') {
      content.push({
        type: 'source', sourceType: 'document', id: str(p.sourceId, at(pw, 'sourceId')), mediaType: str(p.mediaType, at(pw, 'mediaType')),
        ...(typeof p.title === 'string' ? { title: p.title } : {}), ...(typeof p.filename === 'string' ? { filename: p.filename } : {}),
      })
    } else if (isTool) {
      sawTool = true
      const name = type === 'dynamic-tool' ? str(p.toolName, at(pw, 'toolName')) : type.slice('tool-'.length)
      const id = str(p.toolCallId, at(pw, 'toolCallId'))
      const state = str(p.state, at(pw, 'state'))
      const args = argumentsOf(p.input ?? p.rawInput)
      const result = toolResult(p, state, pw)
      if (p.providerExecuted === true) {
        content.push({ type: 'tool-call', id, name, arguments: args, providerExecuted: true })
        if (result) content.push({ type: 'tool-result', id, name, result: p.output ?? p.errorText ?? null, ...(result.isError ? { isError: true as const } : {}) })
      } else {
        content.push({ type: 'tool-call', id, name, arguments: args })
        if (result) results.set(id, result)
      }
    }
    // other part types (step markers of future versions…) carry nothing the model said
  })
  flush()
  return steps
}

const STATES = ['input-streaming', 'input-available', 'approval-requested', 'approval-responded', 'output-available', 'output-error', 'output-denied']

function toolResult(p: Obj, state: string, w: { file?: string; line?: number; field?: string }): ImportedResult | undefined {
  if (!STATES.includes(state)) throw badShape(at(w, 'state'), `unknown tool state "${state}" (${STATES.join(', ')})`)
  if (state === 'output-available') return { content: outputBlocks(p.output) }
  if (state === 'output-error') return { content: [{ type: 'text', text: str(p.errorText, at(w, 'errorText')) }], isError: true }
  if (state === 'output-denied') {
    const approval = p.approval as { reason?: unknown } | undefined
    const reason = typeof approval?.reason === 'string' ? `: ${approval.reason}` : ''
    return { content: [{ type: 'text', text: `denied${reason}` }], isError: true }
  }
  return undefined // no result yet in the source
}
