/**
 * The tool scheduler (lifecycle §5): runs one step's tool calls in model order.
 *
 * - An `exclusive` call is a barrier: it starts when every earlier call has committed, and nothing
 *   after it starts before it commits.
 * - `parallel` calls fill a rolling pool of `maxParallelToolCalls` slots; a slot is held from the
 *   call's start (its `tool/call`) until it settles, and frees for the next call at once.
 * - Each call is classified again right before it starts; one that is no longer parallel stops
 *   the filling, the pool drains, and it becomes the next barrier.
 * - At start: `tool/call`; then `tools/pre-execute`, serially in model order; then the body,
 *   wrapped by `tools/execute`, concurrently (with its timeout).
 * - Whenever the next call in model order has settled: `tools/post-execute`, `tool/result`, its
 *   additional contexts queued. Results and contexts are therefore in model order.
 *
 * Every outcome is a result; nothing is thrown out of the step except a refused option or a log
 * that refuses even the closing results (see `failOut`). The per-call machine
 * (`call-machine.ts`) decides; this file performs the effects.
 */
import { TurnlogError, type ToolCallBlock, type UserMessage } from '../events/index.js'
import { callTransition, initialCallSnapshot, type CallEvent, type CallSnapshot, type PreVerdict } from './call-machine.js'
import { classifyPrepared } from './classify.js'
import { errorOutcome, errorText, outputToOutcome, prepareCall, type PreparedCall } from './define.js'
import type {
  ExecutePayload, PostExecuteDecision, PreExecuteDecision, ToolContext, ToolEnv, ToolOutcome, ToolRunResult,
} from './types.js'

/** The default of `maxParallelToolCalls`. */
export const DEFAULT_MAX_PARALLEL_TOOL_CALLS = 10

/** Refuses a pool size that is not a positive integer (`INVALID_OPTION`). The agent calls it at creation. */
export function assertMaxParallelToolCalls(value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new TurnlogError('INVALID_OPTION', `maxParallelToolCalls must be a positive integer, got ${String(value)}`, {
      field: 'maxParallelToolCalls',
    })
  }
}

/**
 * Runs the step's tool calls (in model order) to completion: every call that gets a `tool/call`
 * gets exactly one `tool/result` (L5), both in model order (L6). Resolves when every result is
 * committed. Rejects only with `INVALID_OPTION` (a bad `maxParallelToolCalls`, before anything is
 * appended) or, after a scheduler failure, when the log refuses even the closing results.
 */
export async function runToolCalls(calls: readonly ToolCallBlock[], env: ToolEnv): Promise<ToolRunResult> {
  assertMaxParallelToolCalls(env.maxParallelToolCalls)
  return new ToolRun(calls, env).run()
}

interface CallRec {
  readonly index: number
  readonly call: ToolCallBlock
  /** The call's lifecycle position (`callTransition`, the pure form of `callMachine`). */
  machine: CallSnapshot
  prepared: PreparedCall | null
  /** Seq of its `tool/call`; null while not started. */
  callSeq: number | null
  /** Set when the call settles (its body ended, or it did not run). */
  outcome: ToolOutcome | null
  committed: boolean
  /** `appendResult` was tried for it (a throw there makes its own outcome suspect). */
  commitTried: boolean
  concludeRequested: boolean
  controller: AbortController | null
}

class ToolRun {
  readonly #env: ToolEnv
  readonly #recs: CallRec[]
  readonly #cap: number
  /** Calls `[0, started)` have started (in model order); `[0, committed)` have committed. */
  #started = 0
  #committed = 0
  /** Started and not yet settled: the pool's occupied slots. */
  #inFlight = 0
  #concluded = false
  #failure: { error: unknown } | null = null
  /** After a scheduler failure: late settlements and commits are ignored. */
  #dead = false
  #committing = false
  /** The tail of the serial pre-execute chain. */
  #preChain: Promise<void> = Promise.resolve()
  #waiters: Array<() => void> = []
  /** The signals of the bodies running now. */
  readonly #active = new Set<AbortController>()

  constructor(calls: readonly ToolCallBlock[], env: ToolEnv) {
    this.#env = env
    this.#cap = env.maxParallelToolCalls
    this.#recs = calls.map((call, index) => ({
      index,
      call,
      machine: initialCallSnapshot(),
      prepared: null,
      callSeq: null,
      outcome: null,
      committed: false,
      commitTried: false,
      concludeRequested: false,
      controller: null,
    }))
  }

  async run(): Promise<ToolRunResult> {
    const env = this.#env
    // One listener on the turn's signal for the whole run (not one per body): the cancel aborts
    // every running body's own signal with the cause.
    const onAbort = (): void => {
      for (const c of this.#active) c.abort(env.signal.reason)
      this.#notify()
    }
    env.signal.addEventListener('abort', onAbort)
    try {
      await this.#schedule()
      if (this.#failure) throw this.#failure.error
    } catch (err) {
      this.#failOut(err)
    } finally {
      env.signal.removeEventListener('abort', onAbort)
    }
    return this.#result()
  }

  #result(): ToolRunResult {
    const signal = this.#env.signal
    return signal.aborted
      ? { concluded: this.#concluded, aborted: true, cause: signal.reason as ToolRunResult['cause'] }
      : { concluded: this.#concluded, aborted: false }
  }

  // ---------------------------------------------------------------- change notification

  #notify(): void {
    const w = this.#waiters
    this.#waiters = []
    for (const f of w) f()
  }

  /** Resolves at the next settlement, commit, cancel or failure. */
  #changed(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  #stopped(): boolean {
    return this.#failure !== null || this.#env.signal.aborted
  }

  // ---------------------------------------------------------------- the start loop

  async #schedule(): Promise<void> {
    const recs = this.#recs
    while (this.#started < recs.length && !this.#stopped()) {
      const rec = recs[this.#started]!
      // Classified right before it starts: the registry and the classifier are read now.
      const prepared = prepareCall(rec.call, this.#env.tools)
      const mode = classifyPrepared(prepared)
      send(rec, { type: 'CLASSIFY', mode })
      if (mode === 'parallel') {
        if (this.#inFlight >= this.#cap) {
          // Pool full: wait for a slot, then classify again.
          send(rec, { type: 'DEFER' })
          await this.#changed()
          continue
        }
        this.#start(rec, prepared)
        continue
      }
      // A barrier: the pool stops filling and drains (every earlier call commits) …
      while (this.#committed < this.#started && !this.#failure) await this.#changed()
      if (this.#stopped()) {
        send(rec, { type: 'DEFER' })
        break
      }
      // … then it runs alone (resolved again: the registry may have changed during the drain) …
      this.#start(rec, prepareCall(rec.call, this.#env.tools))
      // … and nothing starts before it commits.
      while (this.#committed <= rec.index && !this.#failure) await this.#changed()
    }
    // Cancelled (or all started): the started calls drain and commit in model order …
    while (this.#committed < this.#started && !this.#failure) await this.#changed()
    if (this.#failure) return
    // … and the rest get a synthetic pair.
    for (let i = this.#started; i < recs.length; i++) this.#notDispatched(recs[i]!, 'the turn was cancelled before it started')
  }

  #start(rec: CallRec, prepared: PreparedCall): void {
    const ev = this.#env.appendCall(rec.call) // a throw: not started, the scheduler fails
    rec.callSeq = ev.seq
    rec.prepared = prepared
    send(rec, { type: 'START' })
    this.#started++
    this.#inFlight++
    void this.#runCall(rec).catch((err: unknown) => this.#fail(err))
  }

  #notDispatched(rec: CallRec, why: string): void {
    send(rec, { type: 'NOT_DISPATCHED' })
    const ev = this.#env.appendCall(rec.call)
    rec.callSeq = ev.seq
    rec.commitTried = true
    this.#env.appendResult(rec.call, ev.seq, errorOutcome('ABORTED_BEFORE_DISPATCH', `Tool '${rec.call.name}' was not started: ${why}.`))
    rec.committed = true
  }

  // ---------------------------------------------------------------- one call

  async #runCall(rec: CallRec): Promise<void> {
    // tools/pre-execute, serially in model order: wait for the previous call's pre stage.
    const previous = this.#preChain
    let release!: () => void
    this.#preChain = new Promise<void>((resolve) => (release = resolve))
    let verdict: PreVerdict
    try {
      await previous
      verdict = await this.#pre(rec)
    } finally {
      release()
    }
    if (this.#dead) return
    send(rec, { type: 'PRE_DONE', verdict, problem: rec.prepared!.problem })
    if (rec.machine.state !== 'executing') {
      const e = rec.machine.error!
      this.#settle(rec, errorOutcome(e.code, e.message))
      return
    }
    const outcome = await this.#body(rec)
    this.#settle(rec, outcome)
  }

  async #pre(rec: CallRec): Promise<PreVerdict> {
    const env = this.#env
    // A call started before a cancel whose pre stage had not begun: no hook, no body (R5).
    if (env.signal.aborted) return { kind: 'cancelled' }
    let decision: PreExecuteDecision
    try {
      decision = await this.#within(env.preExecute(
        { call: rec.call, args: rec.prepared!.args, tool: rec.prepared!.tool, turn: env.turn, step: env.step, signal: env.signal },
        () => ({ kind: 'allow' }),
      ), 'tools/pre-execute')
    } catch (err) {
      // abandoned after the cancel's grace period: no body runs (R5), the call ends ABORTED
      if (this.#abandoned(err)) return { kind: 'cancelled' }
      this.#report(err, 'tools/pre-execute')
      return { kind: 'hook-error', message: errorText(err) }
    }
    let verdict: PreVerdict
    try {
      verdict = checkPreDecision(decision)
    } catch (err) {
      // a decision whose getters throw: the hook's error, not the scheduler's
      verdict = { kind: 'hook-error', message: `tools/pre-execute returned an unreadable decision: ${errorText(err)}` }
    }
    if (verdict.kind === 'hook-error') this.#report(new Error(verdict.message), 'tools/pre-execute')
    if (verdict.kind === 'allow' && env.signal.aborted) return { kind: 'cancelled' }
    return verdict
  }

  /** Runs the body through `tools/execute`; resolves with the outcome at the first of: the body
   * ends, the timeout fires. Never rejects. */
  #body(rec: CallRec): Promise<ToolOutcome> {
    const env = this.#env
    const tool = rec.prepared!.tool!
    const name = rec.call.name
    return new Promise<ToolOutcome>((resolve) => {
      const controller = new AbortController()
      rec.controller = controller
      let done = false
      let timer: unknown
      const finish = (o: ToolOutcome): void => {
        if (done) return
        done = true
        if (timer !== undefined) env.clearTimeout(timer)
        this.#active.delete(controller)
        resolve(o)
      }
      // R5: no body starts after a cancel.
      if (env.signal.aborted) {
        finish(errorOutcome('ABORTED', `Tool '${name}' was not run: the turn was cancelled before its body started.`))
        return
      }
      this.#active.add(controller)
      if (tool.timeoutMs !== undefined) {
        const ms = tool.timeoutMs
        timer = env.setTimeout(() => {
          timer = undefined
          if (done) return
          // The result is decided now; a body that ignores its signal is abandoned.
          finish(errorOutcome('TOOL_TIMEOUT', `Tool '${name}' did not finish within ${ms} ms.`))
          controller.abort(new DOMException(`tool '${name}' timed out after ${ms} ms`, 'TimeoutError'))
        }, ms)
      }
      const ctx: ToolContext = {
        signal: controller.signal,
        callId: rec.call.id,
        turn: env.turn,
        step: env.step,
        concludeTurn: () => {
          if (!done) rec.concludeRequested = true
        },
      }
      let bodyThrew: { error: unknown } | null = null
      const innermost = async (p: ExecutePayload): Promise<unknown> => {
        try {
          return await p.tool.execute(p.args, ctx)
        } catch (error) {
          bodyThrew = { error }
          throw error
        }
      }
      let result: Promise<unknown>
      try {
        result = Promise.resolve(
          env.execute({ call: rec.call, args: rec.prepared!.args, tool, signal: controller.signal, turn: env.turn, step: env.step }, innermost),
        )
      } catch (err) {
        result = Promise.reject(err)
      }
      this.#within(result, 'tools/execute').then(
        (value) => {
          if (!done) finish(outputToOutcome(tool, value))
        },
        (err: unknown) => {
          if (done) return
          if (this.#abandoned(err)) {
            // the body (or a tools/execute listener) ignored the cancel for the whole grace period
            finish(errorOutcome('ABORTED', `Tool '${name}' was abandoned: it did not stop within the cancel grace period.`))
            controller.abort(env.signal.reason)
          } else if (env.signal.aborted) finish(errorOutcome('ABORTED', `Tool '${name}' was aborted: the turn was cancelled while it ran.`))
          else if (bodyThrew !== null && (bodyThrew as { error: unknown }).error === err) {
            finish(errorOutcome('TOOL_ERROR', `Tool '${name}' failed: ${errorText(err)}`))
          } else {
            this.#report(err, 'tools/execute')
            finish(errorOutcome('HOOK_ERROR', `Tool '${name}' failed: the tools/execute hook failed: ${errorText(err)}`))
          }
        },
      )
    })
  }

  #settle(rec: CallRec, outcome: ToolOutcome): void {
    if (this.#dead) return
    rec.outcome = outcome
    send(rec, { type: 'SETTLE', error: outcome.error })
    this.#inFlight--
    this.#notify()
    this.#pump()
  }

  // ---------------------------------------------------------------- commit, in model order

  #pump(): void {
    if (this.#committing) return
    this.#committing = true
    void this.#commitLoop()
  }

  async #commitLoop(): Promise<void> {
    try {
      while (!this.#failure && this.#committed < this.#started) {
        const rec = this.#recs[this.#committed]!
        if (rec.outcome === null) break
        await this.#commit(rec)
        if (this.#failure) break
        this.#committed++
        this.#notify()
      }
    } catch (err) {
      this.#fail(err)
    } finally {
      this.#committing = false
    }
  }

  async #commit(rec: CallRec): Promise<void> {
    const env = this.#env
    let outcome = rec.outcome!
    let contexts: readonly UserMessage[] = []
    try {
      const d = await this.#within(
        env.postExecute({ call: rec.call, outcome, turn: env.turn, step: env.step, signal: env.signal }, () => ({ kind: 'accept' })),
        'tools/post-execute',
      )
      const checked = checkPostDecision(d)
      if (typeof checked === 'string') {
        this.#report(new Error(checked), 'tools/post-execute')
      } else {
        if (checked.kind === 'block') {
          outcome = errorOutcome('BLOCKED', checked.feedback)
        }
        // copied here, inside the guard: the list is the hook's (its elements may be getters)
        contexts = Array.from(checked.additionalContexts ?? [])
      }
    } catch (err) {
      if (this.#abandoned(err)) {
        // Abandoned: the hook never decided, and it might have blocked (redacted) this outcome, so
        // the outcome is not committed; the call ends ABORTED.
        outcome = errorOutcome('ABORTED', `Tool '${rec.call.name}' was aborted: tools/post-execute did not settle within the cancel grace period.`)
        contexts = []
      } else {
        // A throwing post-execute listener keeps the outcome.
        this.#report(err, 'tools/post-execute')
      }
    }
    if (this.#failure) return
    rec.commitTried = true
    env.appendResult(rec.call, rec.callSeq!, outcome)
    rec.committed = true
    send(rec, { type: 'COMMIT', error: outcome.error })
    if (rec.concludeRequested) this.#concluded = true
    for (const m of contexts) {
      try {
        env.queueContext(m)
      } catch (err) {
        // A context the inbox refuses (a duplicate pending id, say) is the hook's bug, not the step's.
        this.#report(err, 'tools/post-execute')
      }
    }
  }

  // ---------------------------------------------------------------- failure

  #fail(err: unknown): void {
    if (this.#failure === null) this.#failure = { error: err }
    this.#notify()
  }

  /**
   * The scheduler itself failed (an append threw, or a bug). No call starts any more; in model
   * order, every started call without a result gets one — its own outcome if it settled and was
   * never offered to the log, else `TOOL_OUTCOME_UNKNOWN` (its signal aborts: it is abandoned) —
   * and every call that never started gets a synthetic `ABORTED_BEFORE_DISPATCH` pair. The
   * failure is reported; the step goes on. Only if the log refuses these closing appends too is
   * the original error thrown (there is nothing left to write the results to).
   */
  #failOut(err: unknown): void {
    this.#dead = true
    this.#report(err, 'tools/scheduler')
    let unclosed = false
    for (const rec of this.#recs) {
      if (rec.committed) continue
      if (rec.callSeq !== null) {
        const own = rec.outcome !== null && !rec.commitTried
        const outcome = own
          ? rec.outcome!
          : errorOutcome('TOOL_OUTCOME_UNKNOWN', `The outcome of tool '${rec.call.name}' is unknown: the tool scheduler failed (${errorText(err)}).`)
        if (!own) {
          send(rec, { type: 'LOST' })
          rec.controller?.abort(new Error('the tool scheduler failed'))
        }
        try {
          rec.commitTried = true
          this.#env.appendResult(rec.call, rec.callSeq, outcome)
          rec.committed = true
          if (own) send(rec, { type: 'COMMIT', error: outcome.error })
        } catch {
          unclosed = true
        }
      } else {
        try {
          this.#notDispatched(rec, `the tool scheduler failed (${errorText(err)})`)
        } catch {
          // Its pair could not be written: the model is owed a result the log refuses.
          unclosed = true
        }
      }
    }
    if (unclosed) throw err
  }

  /** User code, awaited within the agent's cancel grace period (when the env provides one). */
  #within<T>(value: Promise<T>, where: string): Promise<T> {
    return this.#env.within ? this.#env.within(value, where) : value
  }

  #abandoned(err: unknown): boolean {
    return this.#env.isAbandoned?.(err) === true
  }

  #report(err: unknown, where: string): void {
    try {
      this.#env.reportError(err, where)
    } catch {
      // reporting is best effort
    }
  }
}

function send(rec: CallRec, event: CallEvent): void {
  rec.machine = callTransition(rec.machine, rec.call.name, event)
}

function checkPreDecision(d: unknown): PreVerdict {
  if (typeof d === 'object' && d !== null) {
    const k = (d as { kind?: unknown }).kind
    if (k === 'allow') return { kind: 'allow' }
    if (k === 'deny') {
      const reason = (d as { reason?: unknown }).reason
      return { kind: 'deny', reason: typeof reason === 'string' ? reason : 'no reason given' }
    }
    if (k === 'ask') {
      const q = (d as { question?: unknown }).question
      return typeof q === 'string' ? { kind: 'ask', question: q } : { kind: 'ask' }
    }
  }
  return { kind: 'hook-error', message: `tools/pre-execute returned ${describe(d)}, not a decision` }
}

function checkPostDecision(d: unknown): PostExecuteDecision | string {
  if (typeof d === 'object' && d !== null) {
    const { kind, feedback, additionalContexts } = d as { kind?: unknown; feedback?: unknown; additionalContexts?: unknown }
    if (additionalContexts !== undefined && !Array.isArray(additionalContexts)) {
      return 'tools/post-execute returned additionalContexts that is not an array'
    }
    const contexts = additionalContexts as readonly UserMessage[] | undefined
    if (kind === 'accept') return contexts ? { kind, additionalContexts: contexts } : { kind }
    if (kind === 'block' && typeof feedback === 'string') return contexts ? { kind, feedback, additionalContexts: contexts } : { kind, feedback }
  }
  return `tools/post-execute returned ${describe(d)}, not a decision`
}

function describe(v: unknown): string {
  try {
    return v === undefined ? 'undefined' : JSON.stringify(v) ?? typeof v
  } catch {
    return typeof v
  }
}
