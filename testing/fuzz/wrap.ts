/**
 * The user's tools and hooks as one run sees them: fresh from their factories, each tool body and
 * hook listener tracked (so a hang names what is pending, and the census counts the bodies that
 * ran), values and throws passed through untouched.
 */
import type { AgentOptions, HookMap } from '../../agent/types.js'
import type { AnyTool, ToolContext } from '../../tools/types.js'
import type { PendingCalls } from './stuck.js'
import type { FuzzAgentOptions } from './types.js'

export type Hooks = NonNullable<AgentOptions['hooks']>

/** The user's tools for one run: the list, or a fresh one from the factory. */
export function toolsOf(opts: Pick<FuzzAgentOptions, 'tools'>): readonly AnyTool[] {
  const t = opts.tools
  return typeof t === 'function' ? t() : t ?? []
}

/** The user's hooks for one run: the object, or a fresh one from the factory. */
export function hooksOf(opts: Pick<FuzzAgentOptions, 'hooks'>): Hooks {
  const h = opts.hooks
  return (typeof h === 'function' ? h() : h) ?? {}
}

/** What a tracked body reports when it starts (for R5 and the census). */
export type OnBody = (tool: string, ctx: ToolContext) => void

/**
 * A copy of `tool` whose body is tracked as pending while it runs and reported to `onBody` when it
 * starts. Everything else (schema, classifier, timeout) is the tool's own.
 */
export function trackTool(tool: AnyTool, pending: PendingCalls, onBody: OnBody): AnyTool {
  const execute = tool.execute
  return {
    ...tool,
    execute: (args: unknown, ctx: ToolContext) => {
      onBody(tool.name, ctx)
      return pending.track(`tool '${tool.name}' body (call ${ctx.callId}, turn ${ctx.turn}, step ${ctx.step})`, () => execute.call(tool, args as never, ctx))
    },
  }
}

/** The user's hooks with every listener tracked as pending while it runs. */
export function trackHooks(hooks: Hooks, pending: PendingCalls, who = 'your'): Hooks {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(hooks)) {
    if (value === undefined) continue
    const list = (Array.isArray(value) ? value : [value]) as Array<(...a: unknown[]) => unknown>
    out[name] = list.map((fn, i) => {
      if (typeof fn !== 'function') return fn // createAgent reports the bad option
      const label = `${name} (${who} listener${list.length > 1 ? ` ${i + 1}` : ''})`
      return (...a: unknown[]) => pending.track(`hook ${label}${describe(a[0])}`, () => fn(...a))
    })
  }
  return out as Hooks
}

/** Where a hook call is: its turn, step and tool call, read without trusting the payload. */
function describe(p: unknown): string {
  try {
    const o = p as { turn?: unknown; step?: unknown; call?: { id?: unknown; name?: unknown } }
    const bits = [
      typeof o?.turn === 'number' ? `turn ${o.turn}` : '',
      typeof o?.step === 'number' ? `step ${o.step}` : '',
      typeof o?.call?.name === 'string' ? `tool '${o.call.name}' call ${String(o.call.id)}` : '',
    ].filter(Boolean)
    return bits.length ? ` at ${bits.join(', ')}` : ''
  } catch {
    return ''
  }
}

/** A listener of the fuzzer's own, tracked the same way. */
export function trackOwn<K extends keyof HookMap>(name: K, fn: HookMap[K], pending: PendingCalls): HookMap[K] {
  return ((...a: unknown[]) => pending.track(`hook ${name} (the fuzzer's scenario)${describe(a[0])}`, () => (fn as (...x: unknown[]) => unknown)(...a))) as HookMap[K]
}
