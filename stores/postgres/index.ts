/**
 * `turnlog/stores/postgres`: the store for sessions shared by many processes and machines, and
 * the workers that serve them (api.md "Stores" → "Across machines"). Needs the optional peer
 * dependency `pg`; importing `turnlog` never loads this module.
 */
export { postgresStore, PostgresStore, type PostgresStoreOptions, type SendOptions, type SessionRow, type MessageLike } from './store.js'
export { PgReader, PgWriter } from './writer.js'
export { SCHEMA_VERSION, INPUT_CHANNEL } from './schema.js'
export { CANCEL_CHANNEL, type CancelRequest, type CancelRequestCause } from './cancels.js'
export { runWorkers, type WorkerOptions, type Workers, type WorkerAgentOptions } from './workers.js'
