/** turnlog/testing: arbitraries and fuzzers for property tests, also for users' CI. */
export * from './arbitraries/index.js'
export { fuzzAgent, checkR6, type FuzzAgentOptions, type FuzzCommand, type FuzzRun, type OverflowDecision } from './fuzz-agent.js'
