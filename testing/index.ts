/** turnlog/testing: arbitraries and fuzzers for property tests, also for users' CI. */
export * from './arbitraries/index.js'
export { fuzzAgent, type FuzzAgentOptions } from './fuzz-agent.js'
