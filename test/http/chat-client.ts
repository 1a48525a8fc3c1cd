/**
 * The AI SDK chat client in Node, in both majors a user may have (AI SDK 6 and 7; issue 33 item
 * 3): `AbstractChat` (what `useChat`'s `Chat` extends) with an in-memory `ChatState`, talking to
 * the server through the stock `DefaultChatTransport` of that major. `CHAT_CLIENTS` lists them for
 * `describe.each`.
 */
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls, type ChatState, type ChatStatus, type UIMessage } from 'ai6'
import * as ai7 from 'ai7'

class MemoryState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready'
  error: Error | undefined = undefined
  messages: UIMessage[]
  constructor(messages: UIMessage[] = []) { this.messages = messages }
  pushMessage = (m: UIMessage): void => { this.messages = [...this.messages, m] }
  popMessage = (): void => { this.messages = this.messages.slice(0, -1) }
  replaceMessage = (i: number, m: UIMessage): void => { this.messages = [...this.messages.slice(0, i), m, ...this.messages.slice(i + 1)] }
  snapshot = <T>(v: T): T => structuredClone(v)
}

export class NodeChat extends AbstractChat<UIMessage> {
  /** `idInPath`: posts to `<api>/<chat id>` (`prepareSendMessagesRequest`), so the session is
   * authorized before the body is read (as the README's Chat.tsx does). */
  constructor(opts: NodeChatOptions) {
    super({
      id: opts.id,
      ...(opts.sendAutomaticallyWhen ? { sendAutomaticallyWhen: opts.sendAutomaticallyWhen } : {}),
      ...(opts.onToolCall ? { onToolCall: opts.onToolCall } : {}),
      transport: new DefaultChatTransport({
        api: opts.api,
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
        ...(opts.idInPath ? { prepareSendMessagesRequest: ({ id, messages, trigger, messageId, body }) => ({ api: `${opts.api}/${encodeURIComponent(id)}`, body: { ...body, id, messages, trigger, messageId } }) } : {}),
      }),
      state: new MemoryState(opts.messages),
    })
  }
}

type NodeChatOptions = {
  id: string; api: string; messages?: UIMessage[]; fetch?: typeof fetch; idInPath?: boolean
  sendAutomaticallyWhen?: (o: { messages: UIMessage[] }) => boolean | PromiseLike<boolean>
  /** The AI SDK's client-side tool hook: called for each tool call the stream shows. */
  onToolCall?: (o: { toolCall: { toolCallId: string; toolName: string; input: unknown } }) => void | PromiseLike<void>
}

/** The same client on AI SDK 7 (`ai@7`'s `AbstractChat` and `DefaultChatTransport`). */
export class NodeChat7 extends ai7.AbstractChat<ai7.UIMessage> {
  constructor(opts: NodeChatOptions) {
    super({
      id: opts.id,
      ...(opts.sendAutomaticallyWhen ? { sendAutomaticallyWhen: opts.sendAutomaticallyWhen as never } : {}),
      ...(opts.onToolCall ? { onToolCall: opts.onToolCall as never } : {}),
      transport: new ai7.DefaultChatTransport({ api: opts.api, ...(opts.fetch ? { fetch: opts.fetch } : {}) }),
      state: new MemoryState(opts.messages) as unknown as ai7.ChatState<ai7.UIMessage>,
    })
  }
}

/** Each major's stock client and its own `lastAssistantMessageIsCompleteWith…` predicates. */
export const CHAT_CLIENTS: ReadonlyArray<{
  ai: number
  NodeChat: new (opts: NodeChatOptions) => Pick<NodeChat, 'sendMessage' | 'resumeStream' | 'stop' | 'addToolApprovalResponse' | 'addToolOutput' | 'regenerate' | 'status' | 'messages' | 'error' | 'id'>
  lastAssistantMessageIsCompleteWithApprovalResponses: (o: { messages: UIMessage[] }) => boolean
  lastAssistantMessageIsCompleteWithToolCalls: (o: { messages: UIMessage[] }) => boolean
}> = [
  { ai: 6, NodeChat, lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls },
  {
    ai: 7,
    NodeChat: NodeChat7 as never,
    lastAssistantMessageIsCompleteWithApprovalResponses: ai7.lastAssistantMessageIsCompleteWithApprovalResponses as never,
    lastAssistantMessageIsCompleteWithToolCalls: ai7.lastAssistantMessageIsCompleteWithToolCalls as never,
  },
]

/**
 * A fetch whose response bodies break with a network error once `cut()` is called (a dropped
 * connection mid-answer, as a browser reports it: a TypeError from the body's reader).
 */
export function droppingFetch(): { fetch: typeof fetch; cut(): void } {
  const live = new Map<ReadableStreamDefaultController<Uint8Array>, ReadableStreamDefaultReader<Uint8Array>>()
  return {
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init)
      if (!res.body) return res
      const reader = res.body.getReader()
      let ctrl!: ReadableStreamDefaultController<Uint8Array>
      const body = new ReadableStream<Uint8Array>({
        start(c) { ctrl = c; live.set(c, reader) },
        async pull(c) {
          try {
            const { done, value } = await reader.read()
            if (done) { live.delete(c); c.close() } else c.enqueue(value)
          } catch (err) {
            live.delete(c)
            c.error(err)
          }
        },
        cancel() { live.delete(ctrl); void reader.cancel() },
      })
      return new Response(body, { status: res.status, headers: res.headers })
    }) as typeof fetch,
    cut() {
      for (const [c, r] of live) {
        c.error(new TypeError('fetch failed: network connection lost'))
        void r.cancel().catch(() => {})
      }
      live.clear()
    },
  }
}
