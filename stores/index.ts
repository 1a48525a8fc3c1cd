/** The store contract and the in-memory store (no I/O). Durable stores are subpath exports. */
export { memoryStore, type MemoryStoreOptions } from './memory.js'
export { decideInStore, type StoreDecided, type StoreDecideOptions, type StoreDecisionInput } from './decide.js'
export { answerInStore, type StoreAnswered, type StoreAnswerOptions } from './answer.js'
export { assertSessionId, isValidSessionId, SESSION_ID_PATTERN } from './ids.js'
export type {
  LogStore, LogReader, LogWriter, HeaderInit, OpenMode, OpenWriteOptions, AppendOptions, AppendResult,
} from './types.js'
