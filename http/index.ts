/**
 * `turnlog/http`: sessions over HTTP (docs/spec/api.md "Serving sessions over HTTP"). The projection of a
 * log onto the AI SDK's UI message stream and UI messages.
 */
export { toUIMessageChunks, UIChunkProjector } from './ui-chunks.js'
export { toUIMessages } from './ui-messages.js'
export { turnMessageId, type ToolApproval, type TurnlogInputData, type UIMessage, type UIMessageChunk, type UIMessageChunkAt, type UIMessagePart } from './ui-types.js'
export { sessionHandler, type SessionAction, type SessionHandler, type SessionHandlerOptions } from './handler.js'
export { toNodeListener, type FetchHandler } from './node.js'
export type { SessionAgentOptions } from './sessions.js'
export { SessionTail, storeTailSource, type TailSource, type SessionTailOptions } from './tail.js'
export { formatOffset } from './protocol.js'
