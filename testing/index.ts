/** turnlog/testing: arbitraries and fuzzers for property tests, also for users' CI. */
export * from './arbitraries/index.js'
