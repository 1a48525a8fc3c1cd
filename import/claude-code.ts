/**
 * A Claude Code session (`~/.claude/projects/<dir>/<session>.jsonl`) to the neutral conversation.
 * Read: `user` lines (text, or `tool_result` blocks answering the step before) and `assistant` lines
 * (`text`, `thinking`, `tool_use` blocks; consecutive lines of one API message, same
 * `message.id`, are one step). A thinking block's `signature` (and a `redacted_thinking` block's
 * data) is kept as provider data (`{anthropic: {signature}}`, `{anthropic: {redactedData}}`).
 *
 * Sidechain lines (`isSidechain: true`) are the sub-agents the `Task` tool ran, written into the
 * same file: each run (a sidechain line without a sidechain parent, and the lines chained to it by
 * `parentUuid`) whose first message is the prompt of a `Task` call of the main thread, and whose
 * last answer is that call's result, becomes that call's child session (docs/spec/lifecycle.md
 * §10; import/build.ts writes it). A run no call claims this way is left out and counted. The other
 * line types (`summary`, `system`, `file-history-snapshot`, `queue-operation`…) are not the
 * conversation the model saw. The first `timestamp` is the log's `createdAt`.
 */
import type { Block } from '../events/messages.js'
import { notJson } from './errors.js'
import type { ImportedConversation, ImportedItem } from './model.js'
import { argumentsOf, arr, at, obj, str, type Obj } from './shape.js'

type Where = { file?: string; line?: number; field?: string }
type Step = Extract<ImportedItem, { kind: 'step' }>
/** A `user` or `assistant` line, parsed, with where it sits. */
interface Entry { rec: Obj; w: Where }

export function parseClaudeCode(text: string, file?: string): ImportedConversation {
  const main: Entry[] = []
  const runs: Entry[][] = []
  const runOf = new Map<string, Entry[]>()
  text.split('\n').forEach((raw, i) => {
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
    if (rec.type !== 'user' && rec.type !== 'assistant') return
    if (rec.isSidechain !== true) return void main.push({ rec, w })
    // a sidechain line joins the run its parent is in; one without a sidechain parent starts a run
    const parent = typeof rec.parentUuid === 'string' ? runOf.get(rec.parentUuid) : undefined
    const run = parent ?? []
    if (!parent) runs.push(run)
    run.push({ rec, w })
    if (typeof rec.uuid === 'string') runOf.set(rec.uuid, run)
  })
  const conv = conversation(main)
  const { children, leftOut } = claimRuns(conv, runs)
  return {
    ...conv,
    ...(children.size ? { children } : {}),
    ...(leftOut ? { leftOut: { sidechainLines: leftOut } } : {}),
  }
}

/** The conversation of one thread's lines (the main thread, or one sub-agent's run). */
function conversation(entries: Entry[]): ImportedConversation {
  const items: ImportedItem[] = []
  let step: Step | undefined
  let stepMessageId: string | undefined
  let answered = false
  let sessionId: string | undefined
  let startedAt: number | undefined
  for (const { rec, w } of entries) {
    if (sessionId === undefined && typeof rec.sessionId === 'string' && rec.sessionId) sessionId = rec.sessionId
    if (startedAt === undefined && typeof rec.timestamp === 'string') {
      const t = Date.parse(rec.timestamp)
      if (Number.isFinite(t) && t >= 0) startedAt = t
    }
    const msg = obj(rec.message, at(w, 'message'))
    const content = msg.content
    if (rec.type === 'user') {
      if (typeof content === 'string') {
        items.push({ kind: 'user', content: [{ type: 'text', text: content }] })
        step = undefined
        continue
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
      continue
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
      else if (bt === 'thinking') {
        const signature = typeof block.signature === 'string' && block.signature ? { providerData: { anthropic: { signature: block.signature } } } : {}
        step!.content.push({ type: 'reasoning', text: str(block.thinking, at(bw, 'thinking')), ...signature })
      } else if (bt === 'redacted_thinking' && typeof block.data === 'string') {
        step!.content.push({ type: 'reasoning', text: '', providerData: { anthropic: { redactedData: block.data } } })
      } else if (bt === 'tool_use') {
        step!.content.push({ type: 'tool-call', id: str(block.id, at(bw, 'id')), name: str(block.name, at(bw, 'name')), arguments: argumentsOf(block.input) })
      }
      // server tool blocks carry nothing shown to the user
    })
  }
  // an assistant line with no block turnlog keeps leaves an empty step
  return { items: items.filter((it) => it.kind !== 'step' || it.content.length > 0), ...(sessionId ? { sessionId } : {}), ...(startedAt !== undefined ? { startedAt } : {}) }
}

/**
 * Gives each sidechain run to the `Task` call that ran it: the call's `prompt` argument is the run's
 * first message, and the call's result (not an error) is the text of the run's last answer, so
 * the child's log agrees with the parent's (L19, and the family check of `verify --children`).
 */
function claimRuns(conv: ImportedConversation, runs: Entry[][]): { children: Map<string, ImportedConversation>; leftOut: number } {
  const children = new Map<string, ImportedConversation>()
  let leftOut = 0
  const calls: Array<{ id: string; prompt: string; result: string }> = []
  for (const it of conv.items) {
    if (it.kind !== 'step') continue
    for (const b of it.content) {
      if (b.type !== 'tool-call' || b.providerExecuted) continue
      const r = it.results.get(b.id)
      if (!r || r.isError) continue
      let prompt: unknown
      try {
        prompt = (JSON.parse(b.arguments) as { prompt?: unknown }).prompt
      } catch {
        continue
      }
      if (typeof prompt === 'string') calls.push({ id: b.id, prompt, result: r.content.map((c) => (c.type === 'text' ? c.text : '')).join('') })
    }
  }
  for (const run of runs) {
    const child = conversation(run)
    const first = child.items[0]
    const firstText = first?.kind === 'user' ? first.content.map((c) => (c.type === 'text' ? c.text : '')).join('') : undefined
    const i = calls.findIndex((c) => !children.has(c.id) && c.prompt === firstText && c.result === lastAnswer(child))
    if (i < 0) {
      leftOut += run.length
      continue
    }
    children.set(calls[i]!.id, child)
  }
  return { children, leftOut }
}

/** The text of the last step, when it is an answer (no calls) after the last user message. */
function lastAnswer(conv: ImportedConversation): string | undefined {
  const last = conv.items.at(-1)
  if (last?.kind !== 'step' || last.content.some((b) => b.type === 'tool-call' && !b.providerExecuted)) return undefined
  return last.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
}

function resultText(v: unknown, w: Where): string {
  if (v === undefined || v === null) return ''
  if (typeof v === 'string') return v
  return arr(v, w).map((p, j) => {
    const part = obj(p, at(w, `[${j}]`))
    return part.type === 'text' ? str(part.text, at(w, `[${j}].text`)) : `[${String(part.type)}]`
  }).join('')
}
