/**
 * The AI SDK's chat protocol (UI message stream v1), so `useChat` / `Chat` with
 * `DefaultChatTransport({ api: '<base>/chat' })` works unchanged:
 * - `POST /chat` `{ id, messages, trigger: 'submit-message' }`: the last message (a user message)
 *   becomes a `followup` with the client's message id (sent once: a retried POST streams the same
 *   turn); the response streams the turn that answers it. When the answered message (the body's
 *   `messageId`, else the last one) is the assistant's, the POST carries approval responses
 *   (http/chat-approvals.ts): each becomes a `decide`, and the response continues that message.
 * - A stream ends with its turn, or where the turn stands parked (docs/spec/lifecycle.md §9: only decisions
 *   are owed), so the client is `ready` and can answer the approval parts it shows.
 * - `GET /chat/:id/stream`: the open turn from its `turn/start` (the client's `resumeStream()`
 *   replaces its partial message with it); 204 when nothing is open or pending.
 * - `GET /chat/:id/messages`: `toUIMessages` of the log (`[]` for a chat that does not exist).
 * A stream ends with the turn; a client that disconnects only stops its own stream.
 */
import { z } from 'zod'
import { assertSessionId } from '../stores/ids.js'
import type { LogEvent } from '../events/envelope.js'
import { endsParking } from '../reducers/approvals.js'
import { readApprovalResponses, type ChatApprovals } from './chat-approvals.js'
import { RetryChains } from './retry-chain.js'
import { ChatScanner, type ChatPlace } from './chat-place.js'
import { HttpError } from './protocol.js'
import { UI_STREAM_DONE, UI_STREAM_HEADERS, uiChunkEvent } from './sse.js'
import type { SessionTail } from './tail.js'
import { UIChunkProjector } from './ui-chunks.js'
import { turnMessageId } from './ui-types.js'

const TextPart = z.object({ type: z.literal('text'), text: z.string() })
const ChatMessage = z.object({
  id: z.string().min(1).max(256),
  role: z.enum(['user', 'assistant', 'system']),
  parts: z.array(z.object({ type: z.string() }).passthrough()),
})
/** The body `DefaultChatTransport` posts (other members, e.g. app `body` extras, are allowed). */
export const ChatRequestBody = z.object({
  id: z.string(),
  messages: z.array(ChatMessage).min(1),
  trigger: z.enum(['submit-message', 'regenerate-message']).optional(),
  messageId: z.string().optional(),
}).passthrough()

export interface ChatPrompt { sessionId: string; messageId: string; text: string }

/** Reads a chat POST into the prompt it carries, or the approval responses; a coded 400 for anything else. */
export function parseChatBody(body: unknown): ({ kind: 'prompt' } & ChatPrompt) | ({ kind: 'approvals' } & ChatApprovals) {
  const r = ChatRequestBody.safeParse(body)
  if (!r.success) {
    const issue = r.error.issues[0]!
    throw new HttpError(400, 'BAD_REQUEST', `chat request: ${issue.path.join('.') || 'body'}: ${issue.message}`)
  }
  try {
    assertSessionId(r.data.id)
  } catch (err) {
    throw new HttpError(400, 'INVALID_SESSION_ID', (err as Error).message)
  }
  if (r.data.trigger === 'regenerate-message') {
    throw new HttpError(400, 'NOT_SUPPORTED', 'regenerate is not supported: a turn in the log is never rewritten; send a new message')
  }
  const named = r.data.messageId !== undefined ? r.data.messages.find((m) => m.id === r.data.messageId) : undefined
  const answered = named ?? r.data.messages[r.data.messages.length - 1]!
  if (answered.role === 'assistant') return { kind: 'approvals', ...readApprovalResponses(r.data.id, answered) }
  const last = r.data.messages[r.data.messages.length - 1]!
  if (last.role !== 'user') throw new HttpError(400, 'BAD_REQUEST', `chat request: the last message must be the user's, got role ${last.role}`)
  let text = ''
  for (const p of last.parts) {
    const t = TextPart.safeParse(p)
    if (t.success) text += t.data.text
  }
  if (text.trim() === '') throw new HttpError(400, 'BAD_REQUEST', 'chat request: the user message has no text')
  return { kind: 'prompt', sessionId: r.data.id, messageId: last.id, text }
}

/** Where a chat stream continues (an answer to approvals): the first seq to send, and the approvals
 * it made, which the stream must see logged before it may end at a park. */
export interface StreamFrom {
  from: number
  decided: ReadonlySet<string>
  /** The stream first names the message it continues (a `start`), as an AI SDK server does. Default true;
   * false for a reconnect after `Last-Event-ID` (its client has the `start` already). */
  announce?: boolean
}

/**
 * The message that the frame of seq `seq` belongs to: the index of the `turn/start` of its first
 * turn (a retry chain is one message) and of its last `turn/end` (null while it goes on); null
 * when `seq` is outside every message.
 */
export function messageAt(events: readonly LogEvent[], seq: number): { start: number; endedAt: number | null } | null {
  const chains = new RetryChains()
  let start: number | null = null
  let endedAt: number | null = null
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    const began = chains.push(e, i) === 'begins'
    if (began) {
      if (i > seq) break
      start = i
      endedAt = null
    } else if (e.type === 'turn/end' && start !== null && !chains.open) {
      endedAt = i
      if (i >= seq) break
    }
  }
  if (start === null || (endedAt !== null && endedAt < seq)) return null
  return { start, endedAt }
}

/** The model in force at index `at`: the last `request/header` before it (scanned backwards). */
export function modelBefore(events: readonly LogEvent[], at: number): string | undefined {
  for (let i = Math.min(at, events.length) - 1; i >= 0; i--) {
    const e = events[i]!
    if (e.type !== 'request/header') continue
    const model = (e.data as { config?: { model?: unknown } }).config?.model
    if (typeof model === 'string' && model !== '') return model
  }
  return undefined
}

/** Folds whether the turn stands parked with open approvals or input rounds, and which decisions and answers were seen. */
class ParkWatch {
  private parked = false
  private readonly open = new Set<string>()
  readonly decided = new Set<string>()
  push(e: LogEvent): void {
    const d = e.data as { approvalId?: string; requestId?: string }
    if (e.type === 'tool/approval-requested' && typeof d.approvalId === 'string') this.open.add(d.approvalId)
    if (e.type === 'tool/approval-decided' && typeof d.approvalId === 'string') { this.open.delete(d.approvalId); this.decided.add(d.approvalId) }
    // input rounds (docs/spec/lifecycle.md §11) share the approvals' namespace, and park alike
    if (e.type === 'tool/input-requested' && typeof d.requestId === 'string') this.open.add(d.requestId)
    if (e.type === 'tool/input-provided' && typeof d.requestId === 'string') { this.open.delete(d.requestId); this.decided.add(d.requestId) }
    if (e.type === 'step/parked') this.parked = true
    else if (endsParking(e.type)) this.parked = false
  }
  /** The turn waits for people only, and every decision this stream made is in the log. */
  standsParked(must: ReadonlySet<string>): boolean {
    if (!this.parked || this.open.size === 0) return false
    for (const id of must) if (!this.decided.has(id)) return false
    return true
  }
}

/**
 * A UI message stream response: waits for `place` to name a turn (re-asked as the log grows),
 * then streams that turn's chunks from its `turn/start` to its end.
 */
export function chatStreamResponse(req: Request, tail: SessionTail, place: (s: ChatScanner) => ChatPlace, cont?: StreamFrom): Response {
  const encoder = new TextEncoder()
  // the session stays held while this stream lives (it waits on the tail between its writes)
  const release = tail.hold()
  const stop = new AbortController()
  const onAbort = (): void => stop.abort()
  req.signal.addEventListener('abort', onAbort, { once: true })
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      try {
        const scanner = new ChatScanner()
        let start: number | null = null
        while (start === null && !stop.signal.aborted) {
          while (scanner.length < tail.events.length) scanner.push(tail.events[scanner.length]!)
          const p = place(scanner)
          if (p.kind === 'turn') start = p.index
          else if (p.kind === 'none') break
          else if (!await tail.wait(scanner.length, stop.signal)) break
        }
        if (start !== null) {
          const projector = new UIChunkProjector({ model: modelBefore(tail.events, start) })
          const park = new ParkWatch()
          const from = cont?.from ?? 0
          const must = cont?.decided ?? new Set<string>()
          let i = start
          let finished = false
          let opened = cont === undefined || cont.announce === false
          while (!finished && !stop.signal.aborted) {
            let out = ''
            for (; i < tail.events.length && !finished; i++) {
              const e = tail.events[i]!
              park.push(e)
              const chunks = projector.push(e)
              if (e.seq < from) continue
              for (const c of chunks) {
                // a retry chain whose retry never came (a new message begins): this stream's message ends here
                if (c.chunk.type === 'start' && i > start) { out += uiChunkEvent({ seq: c.seq, turn: c.turn, chunk: { type: 'finish', finishReason: 'error' } }); finished = true; break }
                // a continuation names the message it continues first (as an AI SDK server does)
                if (!opened) { opened = true; if (c.chunk.type !== 'start') out += uiChunkEvent({ seq: c.seq, turn: c.turn, chunk: { type: 'start', messageId: turnMessageId(c.turn) } }) }
                out += uiChunkEvent(c)
                if (c.chunk.type === 'finish') finished = true
              }
            }
            if (out !== '') controller.enqueue(encoder.encode(out))
            // parked: the client answers, then posts (the turn's stream goes on in that answer)
            if (finished || park.standsParked(must)) break
            if (!await tail.wait(i, stop.signal)) break
          }
        }
        if (!stop.signal.aborted) controller.enqueue(encoder.encode(UI_STREAM_DONE))
      } catch {
        // the client went away mid-write: its stream ends, the turn runs on
      } finally {
        req.signal.removeEventListener('abort', onAbort)
        release()
        try { controller.close() } catch { /* cancelled */ }
      }
    },
    cancel() { stop.abort() },
  })
  return new Response(body, { status: 200, headers: UI_STREAM_HEADERS })
}
