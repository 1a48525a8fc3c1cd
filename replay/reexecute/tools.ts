/**
 * Serving the tools: each body (and the `tools/execute` waterfall around it) is replaced by one
 * that settles as the recorded `tool/result` of its call says, when the pump decides; the agent's
 * timers are ours (a tool timeout fires when its recorded result is due; retry sleeps are gates).
 */
import type { Timers } from '../../agent/types.js'
import type { AnyTool, ExecutePayload, ToolContext } from '../../tools/types.js'
import { isAbortedWhileRunning, isExecuteHookError, key2, key3, NEVER } from './facts.js'
import type { BodyServe, FakeTimer, Gate, Host } from './state.js'

export function servedTool(rx: Host, t: AnyTool, gen: number): AnyTool {
  const { output: _output, ...rest } = t
  void _output
  return {
    ...rest,
    execute: (_args: unknown, ctx: ToolContext) => (gen === rx.gen ? servedBody(rx, ctx) : NEVER),
  } as AnyTool
}

export function servedBody(rx: Host, ctx: ToolContext): Promise<unknown> {
  const k = key3(ctx.turn, ctx.step, ctx.callId)
  const st = rx.steps.get(key2(ctx.turn, ctx.step))
  const result = st?.results.get(k)
  return new Promise((resolve, reject) => {
    const b: BodyServe = {
      key: k, index: st?.realCalls.indexOf(k) ?? 0, result, ctx, resolve, reject,
      timer: rx.pendingTimers.get(k) ?? null, settled: false,
    }
    rx.bodies.set(k, b)
    if (result && isAbortedWhileRunning(result)) {
      const onAbort = () => {
        b.settled = true
        reject(ctx.signal.reason ?? new DOMException('aborted', 'AbortError'))
      }
      if (ctx.signal.aborted) onAbort()
      else ctx.signal.addEventListener('abort', onAbort, { once: true })
    }
    rx.schedule()
  })
}

/** Settles a body as recorded. False when its outcome is not the body's to give. */
export function settle(rx: Host, b: BodyServe): boolean {
  const r = b.result
  if (!r) {
    b.settled = true
    b.resolve({ content: [] })
    return true
  }
  if (isAbortedWhileRunning(r)) return false
  const code = r.data.error?.code
  b.settled = true
  if (code === 'TOOL_TIMEOUT') {
    if (b.timer && !b.timer.cleared) {
      b.timer.cleared = true
      b.timer.fn()
    }
    return true
  }
  if (code === 'TOOL_ERROR') {
    const msg = r.data.error!.message
    const m = /^Tool '[^']*' failed: ([\s\S]*)$/.exec(msg)
    b.reject(new Error(m ? m[1]! : msg))
    return true
  }
  if (rx.stepRec()?.outcome?.kind === 'concluded' || rx.steps.get(key2(b.ctx.turn, b.ctx.step))?.outcome?.kind === 'concluded') {
    b.ctx.concludeTurn()
  }
  b.resolve(code === undefined ? { content: r.data.message.content } : { content: [] })
  return true
}

export function servedTimers(rx: Host, gen: number): Timers {
  return {
    sleep: (_ms: number, signal: AbortSignal) => gen !== rx.gen ? NEVER : new Promise<void>((resolve) => {
      if (signal.aborted) return resolve()
      const g: Gate = { kind: 'sleep', release: resolve }
      signal.addEventListener('abort', () => {
        const i = rx.gates.indexOf(g)
        if (i >= 0) rx.gates.splice(i, 1)
        resolve()
      }, { once: true })
      rx.gates.push(g)
      rx.schedule()
    }),
    random: () => 0.5,
    setTimeout: (fn: () => void, ms: number) => {
      const t: FakeTimer = { fn, ms, cleared: false }
      rx.lastTimer = t
      return t
    },
    clearTimeout: (h: unknown) => {
      if (h && typeof h === 'object') (h as FakeTimer).cleared = true
    },
  }
}

/** The `tools/execute` waterfall, served: a recorded hook failure throws here, else the body. */
export function servedExecute(rx: Host, p: ExecutePayload, next: (p?: ExecutePayload) => Promise<unknown>): Promise<unknown> {
  const k = key3(p.turn, p.step, p.call.id)
  const timer = rx.lastTimer
  rx.lastTimer = null
  if (timer && p.tool.timeoutMs !== undefined) rx.pendingTimers.set(k, timer)
  const r = rx.steps.get(key2(p.turn, p.step))?.results.get(k)
  if (r && isExecuteHookError(r)) {
    const prefix = `Tool '${p.call.name}' failed: the tools/execute hook failed: `
    const msg = r.data.error!.message
    return Promise.reject(new Error(msg.startsWith(prefix) ? msg.slice(prefix.length) : msg))
  }
  return next()
}
