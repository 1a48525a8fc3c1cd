/**
 * `turnlog/stores/postgres`: the store for sessions shared by many processes and machines, and
 * the workers that serve them (docs/spec/api.md "Stores" → "Across machines"). Needs the optional peer
 * dependency `pg`; importing `turnlog` never loads this module.
 *
 * This file is the package entry of that path (package.json "exports"): the workers run agents,
 * so they live above `agent/` and `replay/` in workers/, and the store below them in
 * stores/postgres/ cannot re-export them; this entry re-exports both, so every name the path
 * exported before the move is still exported from it.
 */
export * from '../stores/postgres/index.js'
export { runWorkers, type WorkerOptions, type Workers } from './pool.js'
export type { WorkerAgentOptions } from './session-run.js'
