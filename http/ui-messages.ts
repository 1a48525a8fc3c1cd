/**
 * `toUIMessages(events)`: a session's history as the AI SDK's UI messages (what
 * `GET /chat/:id/messages` answers and `useChat` shows after a reload). Pure.
 *
 * - A `user/message` whose source is the user becomes a user message with the id it was sent with
 *   (the id the client gave it); messages the agent made itself (hooks, tools, compaction, a
 *   resume's re-insertion) are not shown, and an id is shown once.
 * - Each turn is one assistant message `turn-N`: the fold of the same chunks `toUIMessageChunks`
 *   streams (property-tested against the AI SDK's own stream parser), so a resumed stream and the
 *   history agree part for part.
 * - Approvals: the parts the stream shows (`approval-requested`, `output-denied`), and what only
 *   the log knows: a decided approval's `approval.approved` and (denied) `reason` (the person's,
 *   else why: expired, superseded, canceled), and `approval-responded` for an approved call whose
 *   result is not logged yet, as the AI SDK's own client holds them after
 *   `addToolApprovalResponse` (so a reloaded page shows no button for a decided request).
 * - Order: a user message takes its place when it is logged; a turn's message takes its place at
 *   the model's first output (text, reasoning, a tool call) or its end, so the prompt that opened a turn comes
 *   before the answer, and a steer that arrived mid-answer after it.
 */
import type { LogEvent } from '../events/envelope.js'
import type { ApprovalBy, ApprovalDecision } from '../events/index.js'
import { denialError } from '../tools/approval-gate.js'
import { UIChunkProjector } from './ui-chunks.js'
import type { UIMessage, UIMessageChunk, UIMessagePart } from './ui-types.js'

type ToolPart = Extract<UIMessagePart, { toolCallId: string }>

/** Applies one chunk to an assistant message the way the AI SDK's `processUIMessageStream` does
 * (JSON form), for the chunks turnlog writes. */
export function applyUIChunk(m: UIMessage, chunk: UIMessageChunk, open: Map<string, Extract<UIMessagePart, { text: string }>>): void {
  const tool = (id: string): ToolPart | undefined => {
    for (let i = m.parts.length - 1; i >= 0; i--) {
      const p = m.parts[i] as Partial<ToolPart>
      if (p.toolCallId === id) return p as ToolPart
    }
    return undefined
  }
  switch (chunk.type) {
    case 'start-step': m.parts.push({ type: 'step-start' }); return
    case 'finish-step': open.clear(); return
    case 'text-start':
    case 'reasoning-start': {
      const part: Extract<UIMessagePart, { text: string }> = chunk.type === 'text-start'
        ? { type: 'text', text: '', state: 'streaming' }
        : { type: 'reasoning', id: chunk.id, text: '', state: 'streaming' }
      open.set(`${part.type}:${chunk.id}`, part)
      m.parts.push(part)
      return
    }
    case 'text-delta':
    case 'reasoning-delta': {
      const part = open.get(`${chunk.type === 'text-delta' ? 'text' : 'reasoning'}:${chunk.id}`)
      if (part) {
        part.text += chunk.delta
        if (chunk.providerMetadata !== undefined) part.providerMetadata = chunk.providerMetadata
      }
      return
    }
    case 'text-end':
    case 'reasoning-end': {
      const key = `${chunk.type === 'text-end' ? 'text' : 'reasoning'}:${chunk.id}`
      const part = open.get(key)
      if (part) part.state = 'done'
      open.delete(key)
      return
    }
    case 'tool-input-available':
    case 'tool-input-error': {
      const part: ToolPart = chunk.type === 'tool-input-available'
        ? { type: `tool-${chunk.toolName}`, toolCallId: chunk.toolCallId, state: 'input-available', input: chunk.input }
        : { type: `tool-${chunk.toolName}`, toolCallId: chunk.toolCallId, state: 'output-error', rawInput: chunk.input, errorText: chunk.errorText }
      const existing = tool(chunk.toolCallId)
      if (existing) {
        for (const k of ['input', 'rawInput', 'output', 'errorText'] as const) delete existing[k]
        Object.assign(existing, part)
      } else m.parts.push(part)
      return
    }
    case 'tool-approval-request': {
      const p = tool(chunk.toolCallId)
      if (p) { p.state = 'approval-requested'; p.approval = { id: chunk.approvalId } }
      return
    }
    case 'tool-output-denied': {
      const p = tool(chunk.toolCallId)
      if (p) p.state = 'output-denied'
      return
    }
    case 'tool-output-available': {
      const p = tool(chunk.toolCallId)
      if (p) { p.state = 'output-available'; p.output = chunk.output; delete p.errorText; delete p.rawInput }
      return
    }
    case 'tool-output-error': {
      const p = tool(chunk.toolCallId)
      if (p) { p.state = 'output-error'; p.errorText = chunk.errorText; delete p.output }
      return
    }
    default:
      if (chunk.type.startsWith('data-')) {
        const c = chunk as { type: `data-${string}`; id: string; data: unknown }
        const existing = m.parts.find((p) => p.type === c.type && (p as { id?: string }).id === c.id) as { data: unknown } | undefined
        if (existing) existing.data = c.data
        else m.parts.push({ type: c.type, id: c.id, data: c.data })
      }
  }
}

/** Sets what the log decided on the approval part of `approvalId` (the history only). */
function decideApprovalPart(m: UIMessage, d: { approvalId?: unknown; decision?: ApprovalDecision; by?: ApprovalBy }): void {
  const part = m.parts.find((p) => (p as Partial<ToolPart>).approval?.id === d.approvalId) as ToolPart | undefined
  if (!part || !d.decision || !d.by) return
  if (d.decision.kind === 'approve') {
    part.approval = { id: part.approval!.id, approved: true }
    if (part.state === 'approval-requested') part.state = 'approval-responded'
    return
  }
  const reason = d.decision.reason !== undefined && d.decision.reason !== ''
    ? d.decision.reason
    : denialError(part.type.slice('tool-'.length), d.decision, d.by).message
  part.approval = { id: part.approval!.id, approved: false, reason }
}

function userParts(content: unknown): UIMessagePart[] {
  const out: UIMessagePart[] = []
  for (const raw of Array.isArray(content) ? content : []) {
    const b = raw as Record<string, unknown>
    if (b?.['type'] === 'text' && typeof b['text'] === 'string') out.push({ type: 'text', text: b['text'] })
    else if (b?.['type'] === 'image' && typeof b['mediaType'] === 'string' && typeof b['data'] === 'string') {
      out.push({ type: 'file', mediaType: b['mediaType'], url: `data:${b['mediaType']};base64,${b['data']}` })
    }
  }
  return out
}

/** The chunks at which a turn's message takes its place: the model's output, or the turn's end
 * (a compaction or a retry before the prompt is logged does not put the answer above it). */
const PLACES: ReadonlySet<string> = new Set(['text-start', 'reasoning-start', 'tool-input-available', 'tool-input-error', 'finish'])

/** A session's history as UI messages (JSON data: no `undefined` members). Pure. */
export function toUIMessages(events: readonly LogEvent[]): UIMessage[] {
  const out: UIMessage[] = []
  const seen = new Set<string>()
  const p = new UIChunkProjector()
  let current: { m: UIMessage; placed: boolean; open: Map<string, Extract<UIMessagePart, { text: string }>> } | null = null
  const place = (): void => {
    if (current && !current.placed) { current.placed = true; out.push(current.m) }
  }
  for (const e of events) {
    if (e.type === 'user/message') {
      const msg = (e.data as { message?: { id?: unknown; content?: unknown; source?: { kind?: unknown } } }).message
      if (msg && typeof msg.id === 'string' && msg.source?.kind === 'user' && !seen.has(msg.id)) {
        seen.add(msg.id)
        out.push({ id: msg.id, role: 'user', parts: userParts(msg.content) })
      }
      continue
    }
    for (const { chunk } of p.push(e)) {
      if (chunk.type === 'start') {
        place()
        current = { m: { id: chunk.messageId, role: 'assistant', ...(chunk.messageMetadata ? { metadata: { ...chunk.messageMetadata } } : {}), parts: [] }, placed: false, open: new Map() }
        continue
      }
      if (!current) continue
      // as the AI SDK merges a finish's metadata into the message's
      if (chunk.type === 'finish' && chunk.messageMetadata) current.m.metadata = { ...current.m.metadata, ...chunk.messageMetadata }
      applyUIChunk(current.m, chunk, current.open)
      if (PLACES.has(chunk.type)) place()
    }
    if (e.type === 'tool/approval-decided' && current) {
      try {
        decideApprovalPart(current.m, e.data as Parameters<typeof decideApprovalPart>[1])
      } catch {
        // a hostile log's decision shape: the part keeps what the stream shows
      }
    }
  }
  place()
  return out
}
