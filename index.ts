/**
 * turnlog: an LLM agent's lifecycle as an event-sourced state machine, with a replay engine.
 * The root export holds what an app embeds: the agent, tools, models, the event vocabulary and
 * the reducers. Machines, replay, testing, compaction and the stores are subpath exports.
 */
export * from './agent/index.js'
export * from './events/index.js'
export * from './models/index.js'
export * from './reducers/index.js'
export * from './stores/index.js'
export * from './tools/index.js'
// resumeAgent lives in `turnlog/replay` (issue "See a session", item 7): it reads and repairs logs
// from files, and the root export stays free of Node built-ins so it bundles for browsers.
