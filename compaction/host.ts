/**
 * What compaction needs from the agent. The plugin receives the public `Agent` handle; appending
 * from a hook, the lifecycle position and the id source are internals of `TurnlogAgent` (the
 * driver marks them `@internal` "used by the step driver and plugins"). `asHost` checks they are
 * there, so a foreign `Agent` implementation is refused at install time with a clear error.
 */
import type { Agent, AgentOptions } from '../agent/types.js'
import { TurnlogError, type EventDraft, type LogEvent, type RequestConfig, type ToolSpec } from '../events/index.js'
import type { LifecycleState } from '../reducers/lifecycle.js'

export interface CompactionHost extends Agent {
  readonly options: AgentOptions
  readonly lifecycle: LifecycleState
  readonly toolSpecs: readonly ToolSpec[]
  readonly baseConfig: RequestConfig
  readonly newId: () => string
  append(draft: EventDraft): LogEvent
  reportError(error: unknown, where: string): void
}

export function asHost(agent: Agent): CompactionHost {
  const a = agent as Partial<CompactionHost>
  if (typeof a.append !== 'function' || typeof a.newId !== 'function' || typeof a.reportError !== 'function' ||
    typeof a.lifecycle !== 'object' || a.lifecycle === null || typeof a.options !== 'object') {
    throw new TurnlogError('INVALID_ARGUMENT', 'compaction installs only on an agent made by createAgent (it appends to the log from its hooks)')
  }
  return agent as CompactionHost
}
