/**
 * What `createAgent` adds to the hook registry, in order: the listeners of `options.hooks`, then
 * each plugin (`options.compaction` first), then the transient retry policy as the innermost
 * `agent/request-error` listener.
 */
import { retryListener, type ResolvedRetry } from './retry-policy.js'
import type { HookRegistry } from './hooks.js'
import type { Agent, AgentOptions, PluginHost, Timers } from './types.js'

/** The agent as the installer sees it: the handle plugins receive, its registry and its timers. */
export interface InstallHost extends Agent, PluginHost {
  readonly hooks: HookRegistry
  readonly timers: Timers
}

/**
 * Installs the options' listeners, plugins and retry policy. Returns the plugins' uninstall
 * functions (for `dispose`). A throwing plugin `install` throws out of `createAgent`.
 */
export function installHooks(agent: InstallHost, options: AgentOptions, retry: ResolvedRetry | null): Array<() => void> {
  const uninstall: Array<() => void> = []
  for (const [name, fns] of Object.entries(options.hooks ?? {})) {
    for (const fn of Array.isArray(fns) ? fns : [fns]) agent.hooks.on(name, fn as never)
  }
  for (const p of [...(options.compaction ? [options.compaction] : []), ...(options.plugins ?? [])]) {
    const off = p.install(agent)
    if (typeof off === 'function') uninstall.push(off)
  }
  // The transient retry policy is the innermost agent/request-error listener, asked last: every
  // app and plugin listener decides first, whether added at creation or later with agent.on.
  if (retry) {
    agent.hooks.onInnermost('agent/request-error', retryListener(retry, {
      timers: agent.timers,
      appendRetry: (turn, step, attempt, delayMs, failure) => {
        agent.append({ type: 'llm/retry', data: { turn, step, attempt, delayMs, failure } })
      },
    }) as never)
  }
  return uninstall
}
