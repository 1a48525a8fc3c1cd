/** The model seam: adapter types, the message assembler, the checked stream, the adapters. */
export type { ModelAdapter, ModelRequest, ModelInfo, StreamFn } from './types.js'
export { MessageAssembler, type AssembledMessage, type PartialMessage } from './assembler.js'
export { checkedStream, collectOutcome, type CheckedItem, type StreamOutcome } from './checked-stream.js'
export { ModelError, failureFromError, failureCodeForStatus } from './errors.js'
export {
  scriptedModel, shorthandChunks,
  type ScriptedModel, type ScriptedModelOptions, type ScriptedEntry, type ScriptedResponse, type ScriptedResponseFn,
  type ScriptedShorthand, type ScriptedToolCall, type ScriptedFailureSpec, type ScriptedChunkList,
} from './scripted.js'
export { openaiCompatibleModel, type OpenAICompatibleOptions } from './openai.js'
