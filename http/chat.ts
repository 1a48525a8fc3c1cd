/**
 * The AI SDK's chat protocol (UI message stream v1), so `useChat` / `Chat` with
 * `DefaultChatTransport({ api: '<base>/chat' })` works unchanged:
 * - `POST /chat` `{ id, messages, trigger: 'submit-message' }`: the last message (a user message)
 *   becomes a `followup` with the client's message id (sent once: a retried POST streams the same
 *   turn); the response streams the turn that answers it.
 * - `GET /chat/:id/stream`: the open turn from its `turn/start` (the client's `resumeStream()`
 *   replaces its partial message with it); 204 when nothing is open or pending.
 * - `GET /chat/:id/messages`: `toUIMessages` of the log (`[]` for a chat that does not exist).
 * A stream ends with the turn; a client that disconnects only stops its own stream.
 */
import { z } from 'zod'
import { assertSessionId } from '../stores/ids.js'
import { ChatScanner, type ChatPlace } from './chat-place.js'
import { HttpError } from './protocol.js'
import { UI_STREAM_DONE, UI_STREAM_HEADERS, uiChunkEvent } from './sse.js'
import type { SessionTail } from './tail.js'
import { UIChunkProjector } from './ui-chunks.js'

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

/** Reads a chat POST into the prompt it carries; a coded 400 for anything else. */
export function parseChatBody(body: unknown): ChatPrompt {
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
  const last = r.data.messages[r.data.messages.length - 1]!
  if (last.role !== 'user') throw new HttpError(400, 'BAD_REQUEST', `chat request: the last message must be the user's, got role ${last.role}`)
  let text = ''
  for (const p of last.parts) {
    const t = TextPart.safeParse(p)
    if (t.success) text += t.data.text
  }
  if (text.trim() === '') throw new HttpError(400, 'BAD_REQUEST', 'chat request: the user message has no text')
  return { sessionId: r.data.id, messageId: last.id, text }
}

/**
 * A UI message stream response: waits for `place` to name a turn (re-asked as the log grows),
 * then streams that turn's chunks from its `turn/start` to its end.
 */
export function chatStreamResponse(req: Request, tail: SessionTail, place: (s: ChatScanner) => ChatPlace): Response {
  const encoder = new TextEncoder()
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
          const projector = new UIChunkProjector()
          let i = start
          let finished = false
          while (!finished && !stop.signal.aborted) {
            let out = ''
            for (; i < tail.events.length && !finished; i++) {
              for (const c of projector.push(tail.events[i]!)) {
                out += uiChunkEvent(c)
                if (c.chunk.type === 'finish') finished = true
              }
            }
            if (out !== '') controller.enqueue(encoder.encode(out))
            if (!finished && !await tail.wait(i, stop.signal)) break
          }
        }
        if (!stop.signal.aborted) controller.enqueue(encoder.encode(UI_STREAM_DONE))
      } catch {
        // the client went away mid-write: its stream ends, the turn runs on
      } finally {
        req.signal.removeEventListener('abort', onAbort)
        try { controller.close() } catch { /* cancelled */ }
      }
    },
    cancel() { stop.abort() },
  })
  return new Response(body, { status: 200, headers: UI_STREAM_HEADERS })
}
