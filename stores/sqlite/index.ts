/**
 * The SQLite store alone (no workers). The package path `turnlog/stores/sqlite` is served by
 * workers/sqlite.ts, which re-exports everything here plus `runWorkers`.
 */
export { sqliteStore, SqliteStore, type SqliteStoreOptions } from './store.js'
export { SqliteReader, SqliteWriter } from './writer.js'
export { SQLITE_SCHEMA_VERSION } from './schema.js'
export { defaultDriver, type SqliteDriverName } from './driver.js'
export type { SqliteSessionFilter, SqliteSessionRow } from './sessions.js'
export type { CancelRequest, CancelRequestCause, MessageLike, SendOptions } from './side.js'
