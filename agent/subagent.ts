/**
 * Sub-agents (docs/spec/lifecycle.md §10): `defineSubagent` is a tool whose call runs a child session. The
 * call logs `child/spawned` in the parent, creates the child in the parent's store with a header
 * naming the parent's session, that event's seq and the call (L19), sends the call as the child's
 * first message and returns the child's last answer as the call's result. A cancel of the parent's
 * turn (or the call's timeout) cancels the child with cause `parent`.
 */
import type { ToolSchema } from '../tools/schema.js'
import type { ToolArgs } from '../tools/types.js'
import type { EventOf, LogEvent } from '../events/index.js'
import { defineTool } from '../tools/define.js'
import { CHILD_HOST, type AnyTool, type LiveChild, type ToolContext } from '../tools/types.js'
import { createAgent } from './agent.js'
import { markSubagent } from './subagent-mark.js'
import { PARENT_BUDGET } from './budget-family.js'

export { isSubagent } from './subagent-mark.js'
import type { Agent, AgentOptions } from './types.js'

/** A child's options: the agent's, without what the parent decides (store, session, prefix). */
export type SubagentOptions = Omit<AgentOptions, 'store' | 'storeWriter' | 'prefix' | 'sessionId'>

export interface SubagentConfig<P extends ToolSchema> {
  name: string
  description: string
  /** The call's arguments, any schema `defineTool` takes (the model sees their JSON Schema). */
  parameters: P
  /**
   * The child's options for one call (model, tools, system, budget…). May be async. A throw (or a
   * rejection) is the call's `TOOL_ERROR` result; no child is created then.
   */
  agent: (args: ToolArgs<P>, ctx: ToolContext) => SubagentOptions | Promise<SubagentOptions>
  /**
   * The child's first message, from the call's arguments. Default: the only string member of the
   * arguments (or the arguments themselves when a string), else the arguments as JSON. A throw is
   * the call's `TOOL_ERROR`.
   */
  prompt?: (args: ToolArgs<P>) => string
  /** The call's timeout (the child is cancelled with cause `parent` when it passes). */
  timeoutMs?: number
  /**
   * Exactly `true` lets this call run in parallel with the step's other parallel-safe calls (several
   * children at once, or a child beside ordinary tools; docs/spec/lifecycle.md §5). Default: exclusive (the call
   * runs alone). A throw, or anything but `true`, is exclusive.
   */
  isConcurrencySafe?: (args: ToolArgs<P>) => boolean
}

/**
 * A tool whose every call runs a child session (docs/spec/lifecycle.md §10). The child's id is derived from
 * the parent's session and the call (`<parent>.c<turn>-<step>-<callId>`), so a call spawns at most
 * one child. Its result is the text of the child's last answer; a child turn that ends other than
 * `completed` is the call's `TOOL_ERROR`, naming how it ended.
 */
export function defineSubagent<P extends ToolSchema>(config: SubagentConfig<P>): AnyTool {
  const tool = defineTool({
    name: config.name,
    description: config.description,
    parameters: config.parameters,
    ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
    ...(config.isConcurrencySafe !== undefined ? { isConcurrencySafe: config.isConcurrencySafe } : {}),
    execute: (args: ToolArgs<P>, ctx: ToolContext) => runChild(config, args, ctx),
  }) as AnyTool
  markSubagent(tool)
  return tool
}

async function runChild<P extends ToolSchema>(config: SubagentConfig<P>, args: ToolArgs<P>, ctx: ToolContext): Promise<string> {
  const host = ctx[CHILD_HOST]
  if (host === undefined) throw new Error(`subagent '${config.name}' runs only as a call of an agent`)
  const own = await config.agent(args, ctx)
  const id = childSessionId(host.session, ctx)
  // a parent's budget covers its children's usage (docs/spec/lifecycle.md §10): the child's meter joins its
  // ancestors' budgets (agent/budget-family.ts)
  const links = host.budget?.(id)
  const options = links !== undefined && links.length > 0 ? { ...own, [PARENT_BUDGET]: links } : own
  const prompt = config.prompt !== undefined ? config.prompt(args) : defaultPrompt(args)
  if (typeof prompt !== 'string') throw new Error(`subagent '${config.name}': prompt must return a string`)
  ctx.signal.throwIfAborted()
  let child: Agent
  let send = true
  if (host.reattach !== undefined) {
    // the parent crashed while this call's child ran (docs/spec/lifecycle.md §10): the child is resumed (its
    // own repair, its interrupted turn re-run, its parked step restored), not created again
    child = (await host.reattach(id, options)) as Agent
    send = !hasInput(child.events) // it died before its prompt was logged
  } else {
    const seq = host.spawned(id)
    const store = host.store as AgentOptions['store']
    if (store !== undefined) await store.create(id, { parent: { session: host.session, seq, callId: ctx.callId } })
    child = createAgent({ ...options, sessionId: id, ...(store !== undefined ? { store } : {}) })
  }
  const onAbort = () => child.cancel({ kind: 'parent' })
  ctx.signal.addEventListener('abort', onAbort, { once: true })
  const detach = host.attach?.(child as unknown as LiveChild)
  try {
    if (ctx.signal.aborted) onAbort()
    else if (send) child.followup(prompt)
    else child.wake()
    await child.whenIdle()
    // still parked once idle: the family was disposed parked (docs/spec/lifecycle.md §9, §10). The call stays
    // running in the parent's log (its resume re-attaches the child); nothing is logged for it here.
    if (child.status === 'parked') await new Promise<never>(() => {})
    await child.flush()
    ctx.signal.throwIfAborted()
    return lastAnswer(child.events, id)
  } finally {
    detach?.()
    ctx.signal.removeEventListener('abort', onAbort)
    await child.dispose()
  }
}

/** The child's answer: the text of the last assistant message of its last turn, which completed. */
export function lastAnswer(events: readonly LogEvent[], id: string): string {
  let end: EventOf<'turn/end'> | undefined
  for (let i = events.length - 1; i >= 0 && end === undefined; i--) if (events[i]!.type === 'turn/end') end = events[i] as EventOf<'turn/end'>
  if (end === undefined) throw new Error(`the child session ${id} ran no turn`)
  const kind = end.data.reason.kind
  if (kind !== 'completed') throw new Error(`the child session ${id} ended '${kind}'`)
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!
    if (e.type === 'turn/start') break
    if (e.type === 'assistant/message') {
      const m = (e as EventOf<'assistant/message'>).data.message
      return m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')
    }
  }
  return ''
}

/** The child's log holds input (its prompt was accepted before the crash). */
function hasInput(events: readonly LogEvent[]): boolean {
  return events.some((e) => e.type === 'agent/inbox/spliced' || e.type === 'user/message')
}

function defaultPrompt(args: unknown): string {
  if (typeof args === 'string') return args
  if (typeof args === 'object' && args !== null) {
    const strings = Object.values(args).filter((v): v is string => typeof v === 'string')
    if (strings.length === 1 && Object.keys(args).length === 1) return strings[0]!
  }
  return JSON.stringify(args)
}

/** `<parent>.c<turn>-<step>-<callId>`, the call id cut to the session-id alphabet; hashed when too long. */
export function childSessionId(parent: string, ctx: Pick<ToolContext, 'turn' | 'step' | 'callId'>): string {
  const safe = ctx.callId.replace(/[^A-Za-z0-9_-]/g, '_')
  const id = `${parent}.c${ctx.turn}-${ctx.step}-${safe}`
  if (id.length <= 128 && safe === ctx.callId) return id
  return `${parent.slice(0, 96)}.c${ctx.turn}-${ctx.step}-${fnv1a(`${parent}\u0000${ctx.callId}`)}`
}

function fnv1a(s: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, '0')
}
