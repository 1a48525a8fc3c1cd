/**
 * `turnlog/stores/sqlite`: one SQLite file for every session of a machine, shared by several
 * processes, and the workers that serve it (docs/spec/api.md "Stores"). Uses `node:sqlite` where Node has
 * it, else the optional peer dependency `better-sqlite3`; importing `turnlog` never loads it.
 *
 * The package entry of that path (package.json "exports"): the workers run agents, so they live
 * above `agent/` in workers/, and this entry re-exports the store and them.
 */
export * from '../stores/sqlite/index.js'
export { runWorkers, type WorkerOptions, type Workers } from './pool.js'
export type { WorkerAgentOptions } from './session-run.js'
