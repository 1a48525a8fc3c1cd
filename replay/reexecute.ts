/**
 * `reexecute`: deterministic re-execution (P4). The implementation is the folder
 * replay/reexecute/ (one idea per file; its index.ts describes what is served from the log).
 */
export { reexecute } from './reexecute/index.js'
export type { Divergence, HookMap, ReexecuteOptions, ReexecuteResult } from './reexecute/index.js'
