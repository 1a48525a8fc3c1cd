/** `turnlog/stores/jsonl`: the durable JSONL store (one file per session, lock file, group commit). */
export { jsonlStore, JsonlStore, pidAlive, type JsonlStoreOptions, type LockOwner } from './store.js'
export { nodeFs, type StoreFs, type StoreFile } from './fs.js'
export { decideInStore, type StoreDecided, type StoreDecideOptions, type StoreDecisionInput } from '../decide.js'
export type {
  LogStore, LogReader, LogWriter, HeaderInit, OpenMode, OpenWriteOptions, AppendOptions, AppendResult,
} from '../types.js'
