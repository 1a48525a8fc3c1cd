/**
 * What compaction needs from the agent: the public `Agent` handle plus the `PluginHost` members
 * (`append`, `newId`, `lifecycle`, `reportError`, `options`, `toolSpecs`, `baseConfig`), which
 * `AgentPlugin.install` receives typed (agent/types.ts). No cast and no probe: the type system
 * checks that `createAgent`'s agent provides them.
 */
import type { Agent, PluginHost } from '../agent/types.js'

export type CompactionHost = Agent & PluginHost
