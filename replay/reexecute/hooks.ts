/**
 * Serving the hooks: today's listeners run, each waterfall between a gate before and a gate after
 * (released by the pump), so the recording decides when a hook runs relative to other inputs.
 * The `tools/execute` waterfall is served from the log (tools.ts).
 */
import { PASS_THROUGH } from '../../agent/hooks.js'
import type { AgentOptions } from '../../agent/types.js'
import type { ExecutePayload } from '../../tools/types.js'
import { key3, NEVER } from './facts.js'
import { type GatedHook, type Host, WATERFALLS } from './state.js'
import { servedExecute } from './tools.js'

/** The hooks of one process: a factory is called for each process of the recording (see
 * `#switches`), as a restarted app creates its listeners afresh. */
export function servedHooks(rx: Host, gen: number): AgentOptions['hooks'] {
  const h = rx.opts.hooks
  const user = (typeof h === 'function' ? h() : h) ?? {}
  const out: Record<string, unknown[]> = {}
  const list = (name: string): unknown[] => {
    const v = (user as Record<string, unknown>)[name]
    return v === undefined ? [] : Array.isArray(v) ? [...v] : [v]
  }
  for (const [name, v] of Object.entries(user)) {
    if (name === 'tools/execute') continue // the recorded results stand for rx waterfall
    out[name] = Array.isArray(v) ? [...v] : [v]
  }
  for (const name of WATERFALLS) {
    // Nobody listens to tools/post-execute: nothing to place. A gate there would hold each result's
    // commit until the pump releases it, while the recording committed it within the same tick,
    // which reorders a result against the call its freed pool slot starts.
    if (name === 'tools/post-execute' && list(name).length === 0 && rx.plugins.length === 0) continue
    out[name] = [gatedWaterfall(rx, name, gen), ...list(name)]
  }
  const stopping = list('agent/turn-stopping') as Array<(p: unknown) => unknown>
  out['agent/turn-stopping'] = [async (p: unknown) => {
    await gate(rx, 'before', 'agent/turn-stopping', undefined, gen)
    let error: { e: unknown } | null = null
    try {
      for (const fn of stopping) await fn(p)
    } catch (e) {
      error = { e }
    }
    await gate(rx, 'after', 'agent/turn-stopping', undefined, gen)
    if (error) throw error.e
  }]
  out['tools/execute'] = [(p: ExecutePayload, next: (p?: ExecutePayload) => Promise<unknown>) => servedExecute(rx, p, next)]
  return out as AgentOptions['hooks']
}

export function gate(rx: Host, kind: 'before' | 'after', hook: GatedHook, callKey: string | undefined, gen: number): Promise<void> {
  if (gen !== rx.gen) return NEVER // a dead process's hook: it never resumes
  if (rx.done && !rx.divergence) return Promise.resolve()
  return new Promise<void>((resolve) => {
    rx.gates.push({ kind, hook, ...(callKey !== undefined ? { callKey } : {}), release: resolve })
    rx.schedule()
  })
}

export function gatedWaterfall(rx: Host, name: (typeof WATERFALLS)[number], gen: number) {
  return Object.assign(async (p: unknown, next: (p?: unknown) => Promise<unknown>): Promise<unknown> => {
    const call = (p as { call?: { id: string }; turn?: number; step?: number }).call
    const k = call ? key3((p as { turn: number }).turn, (p as { step: number }).step, call.id) : undefined
    await gate(rx, 'before', name, k, gen)
    let value: unknown
    let error: { e: unknown } | null = null
    try {
      value = await next()
    } catch (e) {
      error = { e }
    }
    await gate(rx, 'after', name, k, gen)
    if (name === 'tools/pre-execute' && k !== undefined) rx.preDone.add(k)
    if (error) throw error.e
    return value
  }, { [PASS_THROUGH]: true as const })
}
