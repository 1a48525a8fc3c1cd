/** Stream chunks: the model seam's vocabulary (docs/spec/events.md "Stream chunks"). */
import { z } from 'zod'
import { Block, Failure, ProviderData, Usage } from './messages.js'

const index = z.number().int().nonnegative()

export const BlockStartChunk = z.strictObject({
  type: z.literal('block-start'),
  index,
  blockType: z.enum(['text', 'reasoning', 'tool-call']),
})
export const TextDeltaChunk = z.strictObject({ type: z.literal('text-delta'), index, text: z.string() })
export const ReasoningDeltaChunk = z.strictObject({ type: z.literal('reasoning-delta'), index, text: z.string() })
export const ToolCallDeltaChunk = z.strictObject({
  type: z.literal('tool-call-delta'),
  index,
  id: z.string(),
  name: z.string().optional(),
  argumentsDelta: z.string(),
})
/**
 * `providerData` (issue 23): the block's opaque provider data, known once the block is complete.
 * `citations`: a text block's references (AI SDK specification v4 `text-end`), as `TextBlock` has them.
 */
export const BlockEndChunk = z.strictObject({
  type: z.literal('block-end'),
  index,
  providerData: ProviderData.optional(),
  citations: z.array(z.record(z.string(), z.unknown())).optional(),
})
export const UsageChunk = z.strictObject({ type: z.literal('usage'), usage: Usage })
// --- issue 23 (bridge): parts the AI SDK streams besides deltas ----------------------------------
/** A whole block in one chunk (a source, a file, a provider-executed call or its result). */
export const WholeBlockChunk = z.strictObject({ type: z.literal('block'), index, block: Block })
/** Which response answered: the provider's response id and the model that actually answered. */
export const ResponseMetadataChunk = z.strictObject({
  type: z.literal('response-metadata'),
  id: z.string().optional(),
  model: z.string().optional(),
})
/** A provider warning about the call (an unsupported setting…), in one line. */
export const WarningChunk = z.strictObject({ type: z.literal('warning'), message: z.string() })
// --- end issue 23 -------------------------------------------------------------------------------
export const FinishChunk = z.union([
  z.strictObject({ type: z.literal('finish'), reason: z.enum(['stop', 'tool-calls', 'max-tokens']) }),
  z.strictObject({ type: z.literal('finish'), reason: z.enum(['error', 'aborted']), failure: Failure }),
  // --- issue 23 (bridge): a refusal is the model's answer; `explanation` is the provider's reason
  // when the model wrote none (Anthropic's stop_details), kept beside the message, never re-sent
  z.strictObject({ type: z.literal('finish'), reason: z.literal('refusal'), explanation: z.string().optional() }),
])

export const StreamChunk = z.union([
  BlockStartChunk, TextDeltaChunk, ReasoningDeltaChunk, ToolCallDeltaChunk, BlockEndChunk, UsageChunk, FinishChunk,
  WholeBlockChunk, ResponseMetadataChunk, WarningChunk,
])
export type StreamChunk = z.infer<typeof StreamChunk>
export type FinishChunk = z.infer<typeof FinishChunk>
export type SuccessFinishReason = 'stop' | 'tool-calls' | 'max-tokens' | 'refusal'
