/** turnlog/testing: arbitraries and fuzzers for property tests, also for users' CI. */
export * from './arbitraries/index.js'
export { fuzzAgent } from './fuzz/fuzz-agent.js'
export { checkR6 } from './fuzz/r6.js'
export type { FuzzAgentOptions, FuzzCommand, FuzzRun, OverflowDecision } from './fuzz/types.js'
