/**
 * The PostgreSQL store alone (no workers). The package path `turnlog/stores/postgres` is served
 * by workers/index.ts, which re-exports everything here plus `runWorkers` (the workers run
 * agents, so they sit in their own layer above `agent/`, and a store never imports them).
 */
export { postgresStore, PostgresStore, type PostgresStoreOptions, type SendOptions, type SessionRow, type MessageLike } from './store.js'
export { PgReader, PgWriter } from './writer.js'
export { SCHEMA_VERSION, INPUT_CHANNEL } from './schema.js'
export { CANCEL_CHANNEL, type CancelRequest, type CancelRequestCause } from './cancels.js'
