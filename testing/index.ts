/** turnlog/testing: arbitraries and fuzzers for property tests, also for users' CI. */
export * from './arbitraries/index.js'
export { fuzzAgent } from './fuzz/fuzz-agent.js'
export { checkR6 } from './fuzz/r6.js'
export { FuzzFailure, FuzzViolation } from './fuzz/failure.js'
export { formatCensus, type FuzzCensus } from './fuzz/census.js'
export type { FuzzAgentOptions, FuzzCommand, FuzzReport, FuzzRun, OverflowDecision } from './fuzz/types.js'
