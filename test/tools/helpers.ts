/**
 * A recording `ToolEnv` for the scheduler tests: every effect the scheduler performs goes into
 * one ordered `log`, so tests assert on the order of calls, hooks, bodies and results.
 */
import { z } from 'zod'
import type { EventOf, ToolCallBlock, UserMessage } from '../../events/index.js'
import { defineTool } from '../../tools/define.js'
import type {
  AnyTool, ExecutePayload, PostExecuteDecision, PostExecutePayload, PreExecuteDecision, PreExecutePayload, ToolEnv, ToolOutcome,
} from '../../tools/types.js'

export type Entry =
  | { kind: 'call'; id: string; seq: number }
  | { kind: 'result'; id: string; callSeq: number; outcome: ToolOutcome }
  | { kind: 'pre'; id: string }
  | { kind: 'post'; id: string; code: string | undefined }
  | { kind: 'context'; id: string }
  | { kind: 'error'; where: string; message: string }
  | { kind: 'body-start'; id: string }
  | { kind: 'body-end'; id: string }

export interface Deferred<T> {
  promise: Promise<T>
  resolve(v: T): void
  reject(e: unknown): void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** A manual timer queue: nothing fires until the test says so. */
export class ManualTimers {
  #next = 1
  readonly pending = new Map<number, { fn: () => void; ms: number }>()
  setTimeout = (fn: () => void, ms: number): unknown => {
    const id = this.#next++
    this.pending.set(id, { fn, ms })
    return id
  }
  clearTimeout = (h: unknown): void => {
    this.pending.delete(h as number)
  }
  fireAll(): void {
    const all = [...this.pending.entries()]
    this.pending.clear()
    for (const [, t] of all) t.fn()
  }
}

export interface EnvOptions {
  tools: readonly AnyTool[] | Map<string, AnyTool>
  cap?: number
  signal?: AbortSignal
  pre?: (p: PreExecutePayload, innermost: () => PreExecuteDecision) => Promise<PreExecuteDecision> | PreExecuteDecision
  execute?: (p: ExecutePayload, innermost: (p: ExecutePayload) => Promise<unknown>) => Promise<unknown>
  post?: (p: PostExecutePayload, innermost: () => PostExecuteDecision) => Promise<PostExecuteDecision> | PostExecuteDecision
  appendCall?: (call: ToolCallBlock, seq: number) => void
  appendResult?: (call: ToolCallBlock, outcome: ToolOutcome) => void
  timers?: { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(h: unknown): void }
}

export interface RecordingEnv {
  env: ToolEnv
  log: Entry[]
  tools: Map<string, AnyTool>
  /** The results by call id, in append order. */
  results(): Array<{ id: string; code: string | undefined; text: string }>
  /** The call ids of the `tool/call`s, in append order. */
  calls(): string[]
  errors(): Array<{ where: string; message: string }>
  contexts: UserMessage[]
}

export function recordingEnv(opts: EnvOptions): RecordingEnv {
  const log: Entry[] = []
  const tools = opts.tools instanceof Map ? opts.tools : new Map(opts.tools.map((t) => [t.name, t]))
  const contexts: UserMessage[] = []
  let seq = 0
  const timers = opts.timers ?? new ManualTimers()
  const env: ToolEnv = {
    turn: 1,
    step: 1,
    tools,
    maxParallelToolCalls: opts.cap ?? 10,
    signal: opts.signal ?? new AbortController().signal,
    appendCall(call) {
      const s = seq
      opts.appendCall?.(call, s)
      seq++
      log.push({ kind: 'call', id: call.id, seq: s })
      return { seq: s, time: 0, type: 'tool/call', data: { turn: 1, step: 1, callId: call.id, name: call.name, arguments: call.arguments } } as EventOf<'tool/call'>
    },
    appendResult(call, callSeq, outcome) {
      opts.appendResult?.(call, outcome)
      const s = seq++
      log.push({ kind: 'result', id: call.id, callSeq, outcome })
      return { seq: s } as unknown as EventOf<'tool/result'>
    },
    queueContext(message) {
      contexts.push(message)
      log.push({ kind: 'context', id: message.id })
    },
    async preExecute(p, innermost) {
      log.push({ kind: 'pre', id: p.call.id })
      return opts.pre ? opts.pre(p, innermost) : innermost()
    },
    execute(p, innermost) {
      return opts.execute ? opts.execute(p, innermost) : innermost(p)
    },
    async postExecute(p, innermost) {
      log.push({ kind: 'post', id: p.call.id, code: p.outcome.error?.code })
      return opts.post ? opts.post(p, innermost) : innermost()
    },
    reportError(error, where) {
      log.push({ kind: 'error', where, message: error instanceof Error ? error.message : String(error) })
    },
    setTimeout: (fn, ms) => timers.setTimeout(fn, ms),
    clearTimeout: (h) => timers.clearTimeout(h),
  }
  return {
    env,
    log,
    tools,
    contexts,
    results: () =>
      log.flatMap((e) =>
        e.kind === 'result'
          ? [{ id: e.id, code: e.outcome.error?.code, text: e.outcome.content.map((b) => ('text' in b ? b.text : `[${b.type}]`)).join('') }]
          : [],
      ),
    calls: () => log.flatMap((e) => (e.kind === 'call' ? [e.id] : [])),
    errors: () => log.flatMap((e) => (e.kind === 'error' ? [{ where: e.where, message: e.message }] : [])),
  }
}

export function call(id: string, name: string, args: unknown = {}): ToolCallBlock {
  return { type: 'tool-call', id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) }
}

/**
 * A tool whose bodies wait until the test releases them by call id. It records body start and end
 * into the log and tracks how many bodies run at once.
 */
export function gatedTool(name: string, log: Entry[], opts: { parallel?: boolean | ((args: { n?: number }) => boolean) } = {}) {
  const gates = new Map<string, Deferred<unknown>>()
  const started = new Map<string, Deferred<void>>()
  const stats = { running: 0, max: 0 }
  const whenStarted = (id: string): Deferred<void> => {
    let d = started.get(id)
    if (!d) started.set(id, (d = deferred()))
    return d
  }
  const gate = (id: string): Deferred<unknown> => {
    let d = gates.get(id)
    if (!d) gates.set(id, (d = deferred<unknown>()))
    return d
  }
  const parallel = opts.parallel
  const tool = defineTool({
    name,
    description: `gated ${name}`,
    parameters: z.object({ n: z.number().optional() }),
    isConcurrencySafe: parallel === undefined ? undefined : typeof parallel === 'function' ? parallel : () => parallel,
    async execute(_args, ctx) {
      log.push({ kind: 'body-start', id: ctx.callId })
      stats.running++
      stats.max = Math.max(stats.max, stats.running)
      whenStarted(ctx.callId).resolve()
      try {
        return await gate(ctx.callId).promise
      } finally {
        stats.running--
        log.push({ kind: 'body-end', id: ctx.callId })
      }
    },
  })
  return {
    tool: tool as unknown as AnyTool,
    stats,
    release: (id: string, value: unknown = `ok ${id}`) => gate(id).resolve(value),
    fail: (id: string, err: unknown) => gate(id).reject(err),
    started: (id: string) => whenStarted(id).promise,
    isStarted: (id: string) => log.some((e) => e.kind === 'body-start' && e.id === id),
  }
}

/** Lets every pending microtask (and a few rounds of chained ones) run. */
export async function flush(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve()
  await new Promise((r) => setImmediate(r))
}

/** Index of the first log entry matching. */
export function at(log: Entry[], kind: Entry['kind'], id: string): number {
  return log.findIndex((e) => e.kind === kind && 'id' in e && e.id === id)
}
