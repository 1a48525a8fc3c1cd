/**
 * Serving the tools: each body (and the `tools/execute` waterfall around it) is replaced by one
 * that settles as the recorded `tool/result` of its call says, when the pump decides; the agent's
 * timers are ours (a tool timeout fires when its recorded result is due; retry sleeps are gates).
 */
import type { Timers } from '../../agent/types.js'
import { EXPIRY_TIMER } from '../../tools/expiry-timer.js'
import type { EventOf } from '../../events/index.js'
import { TOOL_CATALOG, type AnyTool, type ExecutePayload, type ToolContext } from '../../tools/types.js'
import { isAbortedWhileRunning, isExecuteHookError, key2, key3, NEVER } from './facts.js'
import type { BodyServe, FakeTimer, Gate, Host } from './state.js'

export function servedTool(rx: Host, t: AnyTool, gen: number): AnyTool {
  // a tool of a live list (an MCP server's) is served as a fixed tool: the list is never read
  // again, so no server is contacted (docs/spec/lifecycle.md §12)
  const { [TOOL_CATALOG]: _live, ...own } = t as AnyTool & { [TOOL_CATALOG]?: unknown }
  return {
    ...own,
    output: servedOutput(t.name) as unknown as AnyTool['output'],
    execute: (_args: unknown, ctx: ToolContext) => (gen === rx.gen ? servedBody(rx, ctx) : NEVER),
  } as AnyTool
}

export function servedBody(rx: Host, ctx: ToolContext): Promise<unknown> {
  const k = key3(ctx.turn, ctx.step, ctx.callId)
  const st = rx.steps.get(key2(ctx.turn, ctx.step))
  const result = st?.results.get(k)
  const round = recordedRound(rx, ctx)
  return new Promise((resolve, reject) => {
    const b: BodyServe = {
      key: k, index: st?.realCalls.indexOf(k) ?? 0, result, ctx, resolve, reject,
      timer: rx.pendingTimers.get(k) ?? null, settled: false,
      ...(round !== undefined ? { round } : {}),
    }
    rx.bodies.set(k, b)
    if (round === undefined && result && isAbortedWhileRunning(result)) {
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

/**
 * The round this run of a body asked in the recording (docs/spec/lifecycle.md §11): the call's
 * `tool/input-requested` whose round follows the one the body is called with. Undefined when this
 * run gave the call's result.
 */
function recordedRound(rx: Host, ctx: ToolContext): EventOf<'tool/input-requested'> | undefined {
  const round = (ctx.input?.round ?? 0) + 1
  for (let i = rx.len; i < rx.rec.length; i++) {
    const e = rx.rec[i]!
    if (e.type === 'tool/result' && (e as EventOf<'tool/result'>).data.callId === ctx.callId) return undefined
    if (e.type !== 'tool/input-requested') continue
    const d = (e as EventOf<'tool/input-requested'>).data
    if (d.turn === ctx.turn && d.step === ctx.step && d.callId === ctx.callId && d.round === round) return e as EventOf<'tool/input-requested'>
  }
  return undefined
}

/** Ends a served body's run with its recorded round: the requests, the state and the expiry as logged. */
export function askRound(b: BodyServe): void {
  const e = b.round!
  const d = e.data
  b.settled = true
  // the agent's clock reads the recorded time of the round's event when it computes `expiresAt`
  b.resolve(b.ctx.inputRequired({
    requests: d.requests,
    ...(d.state !== undefined ? { state: d.state } : {}),
    ...(d.expiresAt !== undefined ? { expiresInMs: d.expiresAt - e.time } : {}),
  }))
}

/** Settles a body as recorded. False when its outcome is not the body's to give. */
export function settle(rx: Host, b: BodyServe): boolean {
  if (b.round !== undefined) return false
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
    // a body that threw wrote "Tool 'x' failed: …"; one that returned `{content, isError: true}`
    // (an MCP server's isError) wrote its own blocks: served back as that output
    if (m === null) b.resolve({ content: r.data.message.content, isError: true })
    else b.reject(new Error(m[1]!))
    return true
  }
  if (rx.stepRec()?.outcome?.kind === 'concluded' || rx.steps.get(key2(b.ctx.turn, b.ctx.step))?.outcome?.kind === 'concluded') {
    b.ctx.concludeTurn()
  }
  if (code === 'INVALID_TOOL_OUTPUT') b.resolve(new RecordedInvalid(r.data.error!.message))
  else b.resolve(code === undefined ? recordedValue(r.data) : { content: [] })
  return true
}

/** A recorded output as the body's value: a JSON value (`json`) as the value, else its blocks. */
function recordedValue(d: { message: { content: readonly { type: string; text?: string }[] }; json?: true }): unknown {
  const [block] = d.message.content
  if (d.json === true && d.message.content.length === 1 && block?.type === 'text' && typeof block.text === 'string') {
    try { return JSON.parse(block.text) } catch { /* not JSON after all: as blocks */ }
  }
  return { content: d.message.content }
}

/** A recorded invalid output, as a served body's value: the served output schema turns it back. */
class RecordedInvalid {
  constructor(readonly message: string) {}
}

type Parsed = { value: unknown; issues?: undefined } | { issues: { message: string; path: PropertyKey[] }[] }

/**
 * The output schema of a served tool. A served body's value is the recorded output (already
 * validated and converted when it was recorded), so it passes unchanged; a `RecordedInvalid` is
 * made to fail the same way the recorded one did, so that `outputToOutcome` writes the recorded
 * message again. Each branch mirrors one message of tools/define.ts `outputToOutcome`.
 */
function servedOutput(name: string): { '~standard': { version: 1; vendor: string; validate(value: unknown): Parsed } } {
  const ok = (value: unknown): Parsed => ({ value })
  const unreadable = (why: string): Parsed => ok({ get content(): never { throw new Error(why) } })
  // a Standard Schema (tools/schema.ts `checkSchema` validates through `~standard.validate`)
  return { '~standard': { version: 1, vendor: 'turnlog', validate(value) {
      if (!(value instanceof RecordedInvalid)) return ok(value)
      const m = value.message
      const invalid = `Tool '${name}' returned an invalid output:\n✖ `
      const threw = `Tool '${name}': output validation threw: `
      const unread = `Tool '${name}' returned an output that cannot be read: `
      const notResult = `Tool '${name}' returned an output that cannot be a result: `
      // zod's prettifyError writes one "✖ message" line per issue (and "→ at path" lines); one
      // issue at the top whose message is the rest of the recorded text prints that text again
      if (m.startsWith(invalid)) return { issues: [{ message: m.slice(invalid.length), path: [] }] }
      if (m.startsWith(threw) && m.length > threw.length) throw new Error(m.slice(threw.length))
      if (m.startsWith(notResult)) {
        const why = m.slice(notResult.length)
        if (why === 'a function is not JSON') return ok(() => undefined)
        if (why === 'a symbol is not JSON') return ok(Symbol('recorded'))
        const j = /^not JSON-serialisable \(([\s\S]+)\)$/.exec(why)
        if (j) return ok({ toJSON(): never { throw new Error(j[1]) } })
      }
      if (m.startsWith(unread) && m.length > unread.length) return unreadable(m.slice(unread.length))
      // Not reproducible from the log ({content} that is not a list of blocks, a value that cannot
      // be stored, a hand-written message): the result diverges, and the diff names both messages.
      return unreadable(`re-execution cannot reproduce the recorded invalid output (${m})`)
    } },
  }
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
      // an approval's expiry timer: fired by the recorded `by: expired` decision (decisions.ts)
      if (gen === rx.gen && (fn as { [EXPIRY_TIMER]?: true })[EXPIRY_TIMER] === true) rx.expiryTimers.add(t)
      else rx.lastTimer = t
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
