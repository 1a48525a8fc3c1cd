/**
 * The shapes of the AI SDK's UI message stream, protocol v1 (`x-vercel-ai-ui-message-stream: v1`,
 * `ai@6`): the subset turnlog produces, declared here so `turnlog/http` needs no `ai` package at
 * run time. A stock client (`useChat`, `Chat`, `readUIMessageStream`) parses them unchanged.
 */

/** One chunk of a UI message stream, as turnlog writes it. */
export type UIMessageChunk =
  | { type: 'start'; messageId: string; messageMetadata?: UIMessageMetadata }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string; providerMetadata?: TurnlogPartMetadata }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string; providerMetadata?: TurnlogPartMetadata }
  | { type: 'reasoning-end'; id: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-input-error'; toolCallId: string; toolName: string; input: unknown; errorText: string }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: `data-turnlog-${string}`; id: string; data: unknown }
  | { type: 'error'; errorText: string }
  | { type: 'abort'; reason?: string }
  | { type: 'finish'; finishReason: 'stop' | 'length' | 'error' | 'other'; messageMetadata?: UIMessageMetadata }

/**
 * An assistant message's `metadata` (the AI SDK's `messageMetadata`): `createdAt` from its `start`
 * (when its first turn began, ms since the epoch); the rest from its `finish`: when it ended, how
 * long it took, the model in force (the last `request/header`), and the usage of all its turns
 * (a retry chain's attempts included; `outputTokens` includes reasoning, as the AI SDK counts).
 */
export interface UIMessageMetadata {
  createdAt: number
  finishedAt?: number
  durationMs?: number
  model?: string
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number; reasoningTokens?: number; cacheReadTokens?: number; cacheWriteTokens?: number }
}

/**
 * On a text or reasoning part of a failed attempt (a step that ended `failed`: the transcript has
 * no message for it): that failure. Such a part stays `streaming`, never `done`.
 */
export interface TurnlogPartMetadata { turnlog: { failed: { code: string; message: string } } }

/** A chunk with the seq of the log event that made it and the turn whose message it belongs to
 * (a retry chain's first turn: the chain is one message). */
export interface UIMessageChunkAt {
  seq: number
  turn: number
  chunk: UIMessageChunk
}

/** A part of a UI message (JSON form: members the AI SDK leaves `undefined` are absent). */
export type UIMessagePart =
  | { type: 'step-start' }
  /** `state` on an assistant's text; a user's text has none (as `useChat` sends it). */
  | { type: 'text'; text: string; state?: 'streaming' | 'done'; providerMetadata?: TurnlogPartMetadata }
  | { type: 'reasoning'; id: string; text: string; state: 'streaming' | 'done'; providerMetadata?: TurnlogPartMetadata }
  | {
    type: `tool-${string}`; toolCallId: string
    state: 'input-available' | 'approval-requested' | 'approval-responded' | 'output-available' | 'output-error' | 'output-denied'
    input?: unknown; rawInput?: unknown; output?: unknown; errorText?: string
    /** An approval request (docs/spec/lifecycle.md §9): its id; in the history also what the log decided. */
    approval?: ToolApproval
  }
  | { type: `data-${string}`; id: string; data: unknown }
  | { type: 'file'; mediaType: string; url: string }

/**
 * The `approval` member of a tool part (AI SDK 6): the request's id; once decided (the history
 * reads it from the log; a stream cannot carry it, the answering client sets it itself),
 * `approved` and, for a denial, `reason`.
 */
export interface ToolApproval { id: string; approved?: boolean; reason?: string }

/** A UI message as `useChat` holds it. Assistant messages are turns; user messages keep their ids. */
export interface UIMessage {
  id: string
  role: 'user' | 'assistant'
  /** An assistant message's metadata (`UIMessageMetadata`), as the stream's `start`/`finish` set it. */
  metadata?: UIMessageMetadata
  parts: UIMessagePart[]
}

/** The id of the assistant message that shows turn `turn` (stable: resumes and history agree). */
export function turnMessageId(turn: number): string {
  return `turn-${turn}`
}

/**
 * The data of a `data-turnlog-input` part (part id: the request id): an input round that is not a
 * client tool's (docs/spec/lifecycle.md §11), answered by `POST /chat/:id/inputs/:requestId`. The
 * same part is sent again, with `answered`, when the log answers it.
 */
export interface TurnlogInputData {
  requestId: string
  callId: string
  /** The tool whose body asked (its call's part is the `tool-<name>` part of the same message). */
  toolName: string
  round: number
  /** What is asked, by key: `form` (JSON Schema), `text`, `choice` (options), `url`. */
  requests: Record<string, unknown>
  /** Epoch ms after which nobody can answer (the round is answered `cancel` by `expired`). */
  expiresAt?: number
  /** Once answered: how, by whom (`user`, `expired`, `superseded`, `canceled`) and when (epoch ms). */
  answered?: { action: 'accept' | 'decline' | 'cancel'; by: string; at: number }
}
