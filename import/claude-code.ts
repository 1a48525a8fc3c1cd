/**
 * A Claude Code session (`~/.claude/projects/<dir>/<session>.jsonl`) to the neutral conversation.
 * Read: `user` lines (text, or `tool_result` blocks answering the step before) and `assistant` lines
 * (`text`, `thinking`, `tool_use` blocks; consecutive lines of one API message, same
 * `message.id`, are one step). Not read: sidechain (sub-agent) lines and the other line types
 * (`summary`, `system`, `file-history-snapshot`, `queue-operation`…), which are not the
 * conversation the model saw. The first `timestamp` is the log's `createdAt`.
 */
import type { Block } from '../events/messages.js'
import { notJson } from './errors.js'
import type { ImportedConversation, ImportedItem } from './model.js'
import { argumentsOf, arr, at, obj, str } from './shape.js'

type Where = { file?: string; line?: number; field?: string }
type Step = Extract<ImportedItem, { kind: 'step' }>

export function parseClaudeCode(text: string, file?: string): ImportedConversation {
  const items: ImportedItem[] = []
  let step: Step | undefined
  let stepMessageId: string | undefined
  let answered = false
  let sessionId: string | undefined
  let startedAt: number | undefined
  const lines = text.split('\n')
  lines.forEach((raw, i) => {
    const lineText = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (lineText.trim() === '') return
    const w: Where = { file, line: i + 1 }
    let v: unknown
    try {
      v = JSON.parse(lineText)
    } catch (err) {
      throw notJson(w, err)
    }
    const rec = obj(v, w)
    const type = typeof rec.type === 'string' ? rec.type : undefined
    if (type !== 'user' && type !== 'assistant') return
    if (rec.isSidechain === true) return
    if (sessionId === undefined && typeof rec.sessionId === 'string' && rec.sessionId) sessionId = rec.sessionId
    if (startedAt === undefined && typeof rec.timestamp === 'string') {
      const t = Date.parse(rec.timestamp)
      if (Number.isFinite(t) && t >= 0) startedAt = t
    }
    const msg = obj(rec.message, at(w, 'message'))
    const content = msg.content
    if (type === 'user') {
      if (typeof content === 'string') {
        items.push({ kind: 'user', content: [{ type: 'text', text: content }] })
        step = undefined
        return
      }
      const blocks: Block[] = []
      arr(content, at(w, 'message.content')).forEach((b, j) => {
        const bw = at(w, `message.content[${j}]`)
        const block = obj(b, bw)
        const bt = str(block.type, at(bw, 'type'))
        if (bt === 'tool_result') {
          const id = str(block.tool_use_id, at(bw, 'tool_use_id'))
          // a result for a call this file does not hold (a resumed or trimmed session) has nowhere to go
          if (!step || !step.content.some((c) => c.type === 'tool-call' && c.id === id)) return
          step.results.set(id, { content: [{ type: 'text', text: resultText(block.content, at(bw, 'content')) }], ...(block.is_error === true ? { isError: true as const } : {}) })
          answered = true
        } else if (bt === 'text') {
          blocks.push({ type: 'text', text: str(block.text, at(bw, 'text')) })
        } else if (bt === 'image') {
          const src = block.source as { media_type?: unknown; data?: unknown } | undefined
          if (typeof src?.media_type === 'string' && typeof src.data === 'string') blocks.push({ type: 'image', mediaType: src.media_type, data: src.data })
        }
      })
      if (blocks.length) {
        items.push({ kind: 'user', content: blocks })
        step = undefined
      }
      return
    }
    const id = typeof msg.id === 'string' ? msg.id : undefined
    if (!step || answered || id === undefined || id !== stepMessageId) {
      step = { kind: 'step', content: [], results: new Map() }
      items.push(step)
      stepMessageId = id
      answered = false
    }
    const list = typeof content === 'string' ? [{ type: 'text', text: content }] : arr(content, at(w, 'message.content'))
    list.forEach((b, j) => {
      const bw = at(w, `message.content[${j}]`)
      const block = obj(b, bw)
      const bt = str(block.type, at(bw, 'type'))
      if (bt === 'text') step!.content.push({ type: 'text', text: str(block.text, at(bw, 'text')) })
      else if (bt === 'thinking') step!.content.push({ type: 'reasoning', text: str(block.thinking, at(bw, 'thinking')) })
      else if (bt === 'tool_use') {
        step!.content.push({ type: 'tool-call', id: str(block.id, at(bw, 'id')), name: str(block.name, at(bw, 'name')), arguments: argumentsOf(block.input) })
      }
      // redacted_thinking and server tool blocks carry nothing shown to the user
    })
  })
  // an assistant line with no block turnlog keeps (only redacted thinking) leaves an empty step
  return { items: items.filter((it) => it.kind !== 'step' || it.content.length > 0), ...(sessionId ? { sessionId } : {}), ...(startedAt !== undefined ? { startedAt } : {}) }
}

function resultText(v: unknown, w: Where): string {
  if (v === undefined || v === null) return ''
  if (typeof v === 'string') return v
  return arr(v, w).map((p, j) => {
    const part = obj(p, at(w, `[${j}]`))
    return part.type === 'text' ? str(part.text, at(w, `[${j}].text`)) : `[${String(part.type)}]`
  }).join('')
}
