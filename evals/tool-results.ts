/**
 * Where a re-run's tool results come from. In served steps (before `from`): the golden's result of
 * the same call (turn, step, call id). From `from` on, by `toolResults`: `'recorded'` matches the
 * golden's results after the live start by (name, canonical arguments, occurrence) — the n-th call
 * with those arguments in the re-run gets the n-th such result of the golden —, `'live'` runs the
 * tool's body, a mock gives the output. A recorded result is served as its body gave it: the
 * content (`{content}` blocks, passed through the tool's output schema unchanged), a throw for
 * `TOOL_ERROR`, a wait for the signal for `TOOL_TIMEOUT` and `ABORTED` (the call's own timer or
 * the cancel ends it), `concludeTurn()` when the recorded step ended `concluded`.
 */
import type { EventOf, LogEvent } from '../events/index.js'
import { isAbortedBeforeBody } from '../replay/reexecute/facts.js'
import { checkSchema } from '../tools/schema.js'
import type { AnyTool, ToolContext } from '../tools/types.js'
import { callKey } from './canonical.js'
import { before, type LivePlan } from './golden.js'
import type { SettleOrder } from './settle-order.js'
import type { RerunOptions, ToolCallAt, ToolMock } from './types.js'

/** The results a body gives (the others come from the driver: denied, unknown, invalid, aborted before dispatch…). */
const BODY_CODES = new Set([undefined, 'TOOL_ERROR', 'TOOL_TIMEOUT', 'ABORTED', 'INVALID_TOOL_OUTPUT'])

interface Served {
  result: EventOf<'tool/result'>
  concluded: boolean
  /** The rounds the recorded body asked before its result (docs/spec/lifecycle.md §11), in order. */
  rounds: Array<EventOf<'tool/input-requested'>>
}

/** A served value: passes the tool's output schema unchanged (it was validated when recorded). */
class RecordedOutput {
  constructor(readonly value: unknown) {}
}

export class ToolResults {
  /** Served steps: `turn.step.callId` → result. */
  readonly #exact = new Map<string, Served>()
  /** Live part: `name canonical` → results in golden order. */
  readonly #byCall = new Map<string, Served[]>()
  readonly #occurrences = new Map<string, number>()
  /** Each re-run call's match, kept across its rounds (docs/spec/lifecycle.md §11). */
  readonly #calls = new Map<string, ToolCallAt>()
  readonly unrecorded: ToolCallAt[] = []

  constructor(
    golden: readonly LogEvent[], readonly plan: LivePlan, readonly opts: RerunOptions, readonly events: () => readonly LogEvent[],
    /** Told when a body starts (a recorded cancel may wait for it). */
    readonly onBodyStart: (ctx: ToolContext) => void = () => {},
    /** When a served body settles (settle-order.ts): in the golden's order; absent: at once. */
    readonly order: SettleOrder | null = null,
  ) {
    const calls = new Map<string, EventOf<'tool/call'>>()
    const rounds = new Map<string, Array<EventOf<'tool/input-requested'>>>()
    const concluded = new Set<string>()
    for (const e of golden) {
      if (e.type === 'step/end') {
        const d = (e as EventOf<'step/end'>).data
        if (d.outcome.kind === 'concluded') concluded.add(`${d.turn}.${d.step}`)
      }
    }
    for (let i = plan.cut; i < golden.length; i++) {
      const e = golden[i]!
      if (e.type === 'tool/call') {
        const d = (e as EventOf<'tool/call'>).data
        calls.set(`${d.turn}.${d.step}.${d.callId}`, e as EventOf<'tool/call'>)
      }
      if (e.type === 'tool/input-requested') {
        const d = (e as EventOf<'tool/input-requested'>).data
        const k = `${d.turn}.${d.step}.${d.callId}`
        rounds.set(k, [...(rounds.get(k) ?? []), e as EventOf<'tool/input-requested'>])
      }
      if (e.type !== 'tool/result' || e.surfaceOp !== 'append') continue
      const r = e as EventOf<'tool/result'>
      const d = r.data
      const key = `${d.turn}.${d.step}.${d.callId}`
      const served = { result: r, concluded: concluded.has(`${d.turn}.${d.step}`), rounds: rounds.get(key) ?? [] }
      if (i < plan.liveSeq) {
        this.#exact.set(key, served)
        continue
      }
      const call = calls.get(key)
      // only results a body gave: the n-th body run with these arguments is matched with the n-th here
      if (!call || !BODY_CODES.has(d.error?.code) || isAbortedBeforeBody(r)) continue
      const k = callKey(call.data.name, call.data.arguments)
      const list = this.#byCall.get(k) ?? []
      list.push(served)
      this.#byCall.set(k, list)
    }
  }

  /** The tool as the re-run's agent gets it: same name, schemas and classifier; the body decided here. */
  wrap(tool: AnyTool): AnyTool {
    const out = tool.output
    return {
      ...tool,
      ...(out !== undefined ? {
        // a recorded output passes as it was; any other goes through the tool's own schema
        output: {
          '~standard': {
            version: 1,
            vendor: 'turnlog',
            validate: (v: unknown) => {
              if (v instanceof RecordedOutput) return { value: v.value }
              const r = checkSchema(out, v)
              return r.ok ? { value: r.value } : { issues: r.issues }
            },
          },
        } as AnyTool['output'],
      } : {}),
      execute: async (args: unknown, ctx: ToolContext) => {
        this.onBodyStart(ctx)
        this.order?.started(ctx)
        try {
          const v = await this.#execute(tool, args, ctx)
          // without an output schema the recorded `{content}` is the output itself
          return v instanceof RecordedOutput && out === undefined ? v.value : v
        } finally {
          this.order?.settled(ctx)
        }
      },
    } as AnyTool
  }

  #execute(tool: AnyTool, args: unknown, ctx: ToolContext): unknown {
    const exact = this.#exact.get(`${ctx.turn}.${ctx.step}.${ctx.callId}`)
    if (before(this.plan.live, ctx)) {
      if (exact) return this.#held(exact, ctx)
      return this.#unrecorded(tool, args, ctx, this.#callAt(tool, args, ctx))
    }
    // a body called again with an answer (docs/spec/lifecycle.md §11) is the same call: one occurrence
    const own = `${ctx.turn}.${ctx.step}.${ctx.callId}`
    const call = ctx.input !== undefined ? this.#calls.get(own) ?? this.#callAt(tool, args, ctx) : this.#callAt(tool, args, ctx)
    this.#calls.set(own, call)
    const recorded = () => {
      const served = this.#byCall.get(call.canonical)?.[call.occurrence]
      return served ? serve(served, ctx) : this.#unrecorded(tool, args, ctx, call)
    }
    call.recorded = recorded
    const mode = this.opts.toolResults ?? 'recorded'
    if (mode === 'live') return tool.execute(args as never, ctx)
    if (typeof mode === 'function') return mode(call)
    if (typeof mode === 'object' && mode !== null) {
      const mock = (mode as Record<string, ToolMock>)[tool.name]
      if (typeof mock === 'function') return mock(call)
    }
    const served = this.#byCall.get(call.canonical)?.[call.occurrence]
    return served ? this.#held(served, ctx) : this.#unrecorded(tool, args, ctx, call)
  }

  /**
   * A recorded result as its body gave it, settling when the golden's order says (settle-order.ts).
   * A recorded timeout or abort is not held: it waits for the signal, as the recorded body did.
   */
  #held(s: Served, ctx: ToolContext): unknown {
    // the recorded body asked a round here: it asks the same (the requests, state and expiry as logged)
    const round = s.rounds.find((r) => r.data.round === (ctx.input?.round ?? 0) + 1)
    if (round !== undefined) {
      const d = round.data
      return ctx.inputRequired({
        requests: d.requests, ...(d.state !== undefined ? { state: d.state } : {}),
        ...(d.expiresAt !== undefined ? { expiresInMs: d.expiresAt - round.time } : {}),
      })
    }
    const code = s.result.data.error?.code
    if (this.order === null || code === 'TOOL_TIMEOUT' || code === 'ABORTED') return serve(s, ctx)
    return this.order.hold(ctx).then(() => serve(s, ctx))
  }

  #unrecorded(tool: AnyTool, args: unknown, ctx: ToolContext, call: ToolCallAt): unknown {
    const u = this.opts.onUnrecorded ?? 'fail'
    if (u === 'live') return tool.execute(args as never, ctx)
    if (typeof u === 'function') return u(call)
    this.unrecorded.push(call)
    throw new Error(`the golden has no recorded result for ${tool.name}(${call.canonical.slice(tool.name.length + 1)}) (occurrence ${call.occurrence + 1})`)
  }

  /** The call as logged by the re-run (its raw arguments from its `tool/call`), with its occurrence. */
  #callAt(tool: AnyTool, args: unknown, ctx: ToolContext): ToolCallAt {
    const ev = this.events()
    let raw = JSON.stringify(args ?? null)
    for (let i = ev.length - 1; i >= 0; i--) {
      const e = ev[i]!
      if (e.type !== 'tool/call') continue
      const d = (e as EventOf<'tool/call'>).data
      if (d.callId === ctx.callId && d.turn === ctx.turn && d.step === ctx.step) {
        raw = d.arguments
        break
      }
    }
    const canonical = callKey(tool.name, raw)
    const occurrence = this.#occurrences.get(canonical) ?? 0
    this.#occurrences.set(canonical, occurrence + 1)
    return {
      turn: ctx.turn, step: ctx.step, callId: ctx.callId, name: tool.name, args, canonical, occurrence,
      recorded: () => undefined,
    }
  }
}

function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    const stop = () => reject(signal.reason ?? new DOMException('aborted', 'AbortError'))
    if (signal.aborted) stop()
    else signal.addEventListener('abort', stop, { once: true })
  })
}

/** Gives the recorded outcome as a body would. */
function serve(s: Served, ctx: ToolContext): unknown {
  const d = s.result.data
  const code = d.error?.code
  if (code === 'TOOL_TIMEOUT' || code === 'ABORTED') return waitForAbort(ctx.signal)
  if (code === 'TOOL_ERROR') {
    const m = /^Tool '[^']*' failed: ([\s\S]*)$/.exec(d.error!.message)
    throw new Error(m ? m[1]! : d.error!.message)
  }
  if (s.concluded) ctx.concludeTurn()
  // a JSON value is served as the value (the re-run logs it as the golden did, marked `json`)
  const [block] = d.message.content
  if (d.json === true && d.message.content.length === 1 && block?.type === 'text') {
    try { return new RecordedOutput(JSON.parse(block.text)) } catch { /* not JSON after all: as blocks */ }
  }
  return new RecordedOutput({ content: d.message.content })
}
