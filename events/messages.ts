/** Message blocks, messages, usage and failures: the shapes of docs/spec/events.md "Exact shapes". */
import { z } from 'zod'

// --- issue 23 (bridge): provider data on blocks -------------------------------------------------
/**
 * A block's opaque provider data, keyed by provider (e.g. `{anthropic: {signature}}` on a Claude
 * thinking block, `{anthropic: {redactedData}}` on a redacted one): logged, replayed and sent back
 * to the provider with the block, never shown (docs/spec/events.md `Block`).
 */
export const ProviderData = z.record(z.string(), z.record(z.string(), z.unknown()))
export type ProviderData = z.infer<typeof ProviderData>
const providerData = ProviderData.optional()
// --- end issue 23 -------------------------------------------------------------------------------

export const TextBlock = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
  providerData,
  /**
   * The references the provider attached to this text (AI SDK specification v4 `text-end`
   * `citations`: `{source, startIndex?, endIndex?, citedText?}` each), as JSON. Shown, never re-sent.
   */
  citations: z.array(z.record(z.string(), z.unknown())).optional(),
})
export const ReasoningBlock = z.strictObject({ type: z.literal('reasoning'), text: z.string(), providerData })
export const ImageBlock = z.strictObject({ type: z.literal('image'), mediaType: z.string(), data: z.string(), providerData })
export const ToolCallBlock = z.strictObject({
  type: z.literal('tool-call'),
  id: z.string(),
  name: z.string(),
  /** The raw JSON string the model produced (may be invalid JSON). */
  arguments: z.string(),
  providerData,
  /** issue 23: a call the provider ran itself (web search…): recorded and re-sent, never run by turnlog. */
  providerExecuted: z.literal(true).optional(),
  /**
   * issue 23 (provider approvals): the provider's id of its request that a person approve this
   * provider-executed call before the provider runs it (the AI SDK's `tool-approval-request`).
   * Such a call goes through turnlog's approvals (docs/spec/lifecycle.md §9) and the decision goes back to
   * the provider with the next request.
   */
  approvalId: z.string().min(1).optional(),
})
// --- issue 23 (bridge): blocks the AI SDK streams besides text, reasoning and calls ---------------
/** A citation (an AI SDK `source` part): a URL or a document the answer cites. Shown, never re-sent. */
export const SourceBlock = z.strictObject({
  type: z.literal('source'),
  sourceType: z.enum(['url', 'document']),
  id: z.string(),
  url: z.string().optional(),
  title: z.string().optional(),
  mediaType: z.string().optional(),
  filename: z.string().optional(),
  providerData,
})
/**
 * A file the model generated (an image…): base64 `data`, or a `url` where the provider keeps it
 * (AI SDK specification v4 `{type: 'url'}` file data), exactly one of the two. `reasoning`: the
 * model made it while reasoning (a v4 `reasoning-file` part), re-sent as such.
 */
export const FileBlock = z
  .strictObject({
    type: z.literal('file'),
    mediaType: z.string(),
    data: z.string().optional(),
    url: z.string().optional(),
    reasoning: z.literal(true).optional(),
    providerData,
  })
  .refine((b) => (b.data === undefined) !== (b.url === undefined), { message: 'a file block has exactly one of data and url' })
/**
 * Provider-specific content without a standard shape (an AI SDK specification v4 `custom` part,
 * e.g. `anthropic.fallback`, `openai.compaction`): its `kind` and provider data, logged and re-sent
 * to the provider with the message (as `streamText` does), never shown.
 */
export const CustomBlock = z.strictObject({ type: z.literal('custom'), kind: z.string().min(1), providerData })
/** The result of a provider-executed call (`id` and `name` of that call); `result` is its JSON. */
export const ToolResultBlock = z.strictObject({
  type: z.literal('tool-result'),
  id: z.string(),
  name: z.string(),
  result: z.unknown(),
  isError: z.literal(true).optional(),
  providerData,
})
// --- end issue 23 -------------------------------------------------------------------------------
export const Block = z.discriminatedUnion('type', [TextBlock, ReasoningBlock, ImageBlock, ToolCallBlock, SourceBlock, FileBlock, ToolResultBlock, CustomBlock])
export type Block = z.infer<typeof Block>
export type TextBlock = z.infer<typeof TextBlock>
export type ToolCallBlock = z.infer<typeof ToolCallBlock>

/**
 * A tool call turnlog handles: a `tool-call` block the provider did not execute itself (issue 23),
 * or a provider-executed one the provider asked a person to approve (`approvalId`): turnlog asks,
 * logs the decision as that call's `tool/call` + `tool/result` and sends it to the provider; the
 * provider runs it. A provider-executed call without a request is never run and owed no result.
 */
export function isRunnableCall(b: Block): b is ToolCallBlock {
  return b.type === 'tool-call' && (b.providerExecuted !== true || b.approvalId !== undefined)
}

/** A provider-executed call the provider asked a person to approve (see `isRunnableCall`). */
export function isProviderApproval(b: { providerExecuted?: true; approvalId?: string }): boolean {
  return b.providerExecuted === true && b.approvalId !== undefined
}

export const MessageId = z.string().min(1)
export type MessageId = string

export const MessageSource = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('user') }),
  z.strictObject({ kind: z.literal('hook'), name: z.string() }),
  z.strictObject({ kind: z.literal('tool'), callId: z.string() }),
  z.strictObject({ kind: z.literal('compaction') }),
  /** A message a crashed turn had claimed, re-inserted by resume under a new id (docs/spec/lifecycle.md §8). */
  z.strictObject({ kind: z.literal('resume'), of: z.string().min(1) }),
  /** The message of a wakeup's firing (docs/spec/lifecycle.md §10): the splice right after its `schedule/fired`. */
  z.strictObject({ kind: z.literal('schedule'), scheduleId: z.string().min(1) }),
])
export type MessageSource = z.infer<typeof MessageSource>

export const UserMessage = z.strictObject({
  id: MessageId,
  role: z.literal('user'),
  content: z.array(Block),
  source: MessageSource,
})
export type UserMessage = z.infer<typeof UserMessage>

export const AssistantMessage = z.strictObject({ role: z.literal('assistant'), content: z.array(Block) })
export type AssistantMessage = z.infer<typeof AssistantMessage>

export const ToolResultMessage = z.strictObject({
  role: z.literal('tool'),
  callId: z.string(),
  content: z.array(Block),
  isError: z.literal(true).optional(),
})
export type ToolResultMessage = z.infer<typeof ToolResultMessage>

/** A message as the model sees it (the history). */
export type ModelMessage = UserMessage | AssistantMessage | ToolResultMessage

const count = z.number().int().nonnegative()
/** Disjoint token buckets. */
export const Usage = z.strictObject({
  inputTokens: count,
  outputTokens: count,
  cacheReadTokens: count.optional(),
  cacheWriteTokens: count.optional(),
  reasoningTokens: count.optional(),
  /** An estimate: the request was cut off mid-stream before the provider reported its usage (docs/spec/events.md "Usage and failures"). */
  estimated: z.literal(true).optional(),
})
export type Usage = z.infer<typeof Usage>

export const FAILURE_CODES = [
  'CONTEXT_WINDOW_EXCEEDED', 'RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE', 'QUOTA',
  'INVALID_CREDENTIAL', 'ABORTED', 'STREAM_GRAMMAR', 'HOOK_ERROR', 'UNKNOWN',
  // issue 23 (bridge): the provider filtered its own output (not a refusal: the model's answer was
  // cut by a filter); not retried by default
  'CONTENT_FILTER',
] as const
export type FailureCode = (typeof FAILURE_CODES)[number]

/** A request failure. `code` is one of FAILURE_CODES for model failures; kept open as a string so
 * that adapters and plugins can report finer codes without breaking readers. */
export const Failure = z.strictObject({
  code: z.string().min(1),
  message: z.string(),
  status: z.number().int().optional(),
  retryAfterMs: z.number().nonnegative().optional(),
})
export type Failure = z.infer<typeof Failure>

export const ToolErrorInfo = z.strictObject({ code: z.string().min(1), message: z.string() })
export type ToolErrorInfo = z.infer<typeof ToolErrorInfo>
