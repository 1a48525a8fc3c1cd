/**
 * `createAgent` and the `Agent` handle: the driver. It runs the turn, step and inbox machines,
 * performs the effects each state asks for (appends, hooks, the model, tools), and reports results
 * back to the machines, which decide. Every durable fact is appended to the session log first;
 * memory follows the log.
 */
import { runMachine, type MachineRunner } from '../machines/lean-actor.js'
import {
  Session, TurnlogError, UserMessage,
  type CancelCause, type EventDraft, type Failure, type InboxTarget, type LogEvent, type ModelMessage, type RequestConfig, type SessionEvent,
  type ToolSpec,
} from '../events/index.js'
import { inboxMachine, spliceKeepsIdsUnique, type InboxContext, type InboxEvent, type SpliceEvent } from '../machines/inbox.js'
import type { StepContext, StepEvent } from '../machines/step.js'
import { turnMachine, type TurnContext, type TurnEvent } from '../machines/turn.js'
import { historyReducer } from '../reducers/history.js'
import { inboxReducer } from '../reducers/inbox.js'
import { lifecycleReducer } from '../reducers/lifecycle.js'
import { transcriptReducer, type TranscriptState } from '../reducers/transcript.js'
import { errorText, toolSpec } from '../tools/define.js'
import type { AnyTool } from '../tools/types.js'
import { GracePeriod, isAbandoned } from './grace.js'
import { HookRegistry } from './hooks.js'
import { Persistence } from './persistence.js'
import { toUserMessage } from './messages.js'
import { realTimers, resolveRetry, retryListener } from './retry-policy.js'
import { runStep, type StepRun } from './step-driver.js'
import type {
  Agent, AgentOptions, AgentSnapshot, AgentStatus, CancelOptions, HookMap, HookName, InboxHandle, MessageInput,
  PreStepDecision, RequestErrorDecision, Timers, TurnStateValue,
} from './types.js'

/** The default of `AgentOptions.cancelGraceMs`. */
export const DEFAULT_CANCEL_GRACE_MS = 5000

/** Creates an agent. See `AgentOptions`; nothing runs until the first waking delivery. */
export function createAgent(options: AgentOptions): Agent {
  return new TurnlogAgent(options)
}

export class TurnlogAgent implements Agent {
  readonly sessionId: string
  /** @internal */ readonly session: Session
  /** @internal */ readonly hooks = new HookRegistry()
  /** @internal */ readonly options: AgentOptions
  /** @internal */ readonly timers: Timers
  /** @internal */ readonly tools: ReadonlyMap<string, AnyTool>
  /** @internal */ readonly toolSpecs: readonly ToolSpec[]
  /** @internal */ readonly baseConfig: RequestConfig
  /** @internal the live projections the driver reads (O(1) per event). */
  readonly historyState = historyReducer.initial()
  /** @internal */ readonly lifecycle = lifecycleReducer.initial()
  /** @internal */ readonly newId: () => string
  /** @internal */ readonly maxParallelToolCalls: number
  #turn: MachineRunner<TurnContext, TurnEvent>
  readonly #inbox: MachineRunner<InboxContext, InboxEvent>
  #status: AgentStatus = 'idle'
  /** @internal the open turn's cancel signal. */
  abort: AbortController | null = null
  /** @internal the open turn's cancel grace period (agent/grace.ts). */
  grace: GracePeriod | null = null
  /** @internal `options.cancelGraceMs`, checked. */
  readonly cancelGraceMs: number
  /** @internal the running step (for cancel and snapshot). */
  step: StepRun | null = null
  /** @internal the step machine's actor, reused from step to step. */
  stepActor: MachineRunner<StepContext, StepEvent> | null = null
  /** @internal the batch the last pre-step decided to enter. */
  entered: readonly UserMessage[] = []
  /** @internal `llm/retry` events in the current failure chain. */
  retriesInChain = 0
  /** @internal true until the first request after a resume logs its header. */
  resumed: boolean
  #loop: Promise<void> | null = null
  /** True while #wake emits `running`: the loop starts as soon as the listeners return. */
  #waking = false
  #loopRunning = false
  /** The running `runMaintenance` task: its signal (aborted by dispose) and its settlement. */
  #maintenance: { controller: AbortController; task: Promise<unknown> } | null = null
  #idleWaiters: Array<() => void> = []
  #disposed = false
  #disposing = false
  readonly #unsubscribePlugins: Array<() => void> = []
  /** Forwards committed events to `options.store` (agent/persistence.ts). */
  readonly #persistence: Persistence | null = null
  /** Set when persistence failed: no new turn, no new input. */
  #halted: TurnlogError | null = null
  /** The interrupted turn the next turn opened from idle re-runs (lifecycle §8; `armResume`). */
  #resumeOf: number | null = null

  constructor(options: AgentOptions) {
    assertModel(options)
    this.options = options
    this.timers = { ...realTimers, ...options.timers }
    this.newId = options.ids ?? (() => globalThis.crypto.randomUUID())
    const maxSteps = options.maxStepsPerTurn ?? 64
    if (!Number.isInteger(maxSteps) || maxSteps < 1) {
      throw new TurnlogError('INVALID_OPTION', 'maxStepsPerTurn must be a positive integer', { field: 'maxStepsPerTurn' })
    }
    const maxPar = options.maxParallelToolCalls ?? 10
    if (!Number.isInteger(maxPar) || maxPar < 1) {
      throw new TurnlogError('INVALID_OPTION', 'maxParallelToolCalls must be a positive integer', { field: 'maxParallelToolCalls' })
    }
    this.maxParallelToolCalls = maxPar
    const grace = options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS
    if (typeof grace !== 'number' || !(grace >= 0) || !Number.isFinite(grace)) {
      throw new TurnlogError('INVALID_OPTION', 'cancelGraceMs must be a finite number >= 0', { field: 'cancelGraceMs' })
    }
    this.cancelGraceMs = grace
    const tools = new Map<string, AnyTool>()
    for (const t of options.tools ?? []) {
      if (tools.has(t.name)) throw new TurnlogError('INVALID_OPTION', `two tools are named ${t.name}`, { field: 'tools' })
      tools.set(t.name, t)
    }
    this.tools = tools
    this.toolSpecs = [...tools.values()].map(toolSpec)
    this.baseConfig = { model: options.model.info?.name ?? 'model', ...options.config } as RequestConfig
    const retry = options.retry === false ? null : resolveRetry(options.retry)
    this.sessionId = options.sessionId ?? globalThis.crypto.randomUUID()
    this.session = new Session({
      id: this.sessionId,
      clock: options.clock,
      prefix: options.prefix,
      check: { maxStepsPerTurn: maxSteps, maxRetries: retry?.maxRetries ?? 5, maxResumeRuns: options.maxResumeRuns ?? 3 },
      onObserverError: (error) => this.reportError(error, 'subscribe'),
    })
    // One pass over an inherited prefix: the live projections and the pending inbox it left.
    const pending = inboxReducer.initial()
    for (const e of this.session.events) {
      this.#fold(e)
      inboxReducer.apply(pending, e)
    }
    this.session.addFold((e) => this.#fold(e))
    this.resumed = this.session.length > 0
    if (this.lifecycle.openTurn !== null) {
      throw new TurnlogError('INVALID_OPTION', 'the prefix ends inside an open turn: repair it first', {
        field: 'prefix', seq: this.session.length - 1, sessionId: this.sessionId,
      })
    }
    this.#turn = runMachine(turnMachine, { lastTurn: this.lifecycle.lastTurn, maxStepsPerTurn: maxSteps }, options.inspect)
    this.#inbox = runMachine(inboxMachine, pending, options.inspect)
    // after every check that can throw, so a refused agent never takes the store's lock
    if (options.store || options.storeWriter) {
      this.#persistence = new Persistence(this, { store: options.store, writer: options.storeWriter })
    }

    for (const [name, fns] of Object.entries(options.hooks ?? {})) {
      for (const fn of Array.isArray(fns) ? fns : [fns]) this.hooks.on(name, fn as never)
    }
    for (const p of [...(options.compaction ? [options.compaction] : []), ...(options.plugins ?? [])]) {
      const off = p.install(this)
      if (typeof off === 'function') this.#unsubscribePlugins.push(off)
    }
    // The transient retry policy is the innermost agent/request-error listener, asked last: every
    // app and plugin listener decides first, whether added at creation or later with agent.on.
    if (retry) {
      this.hooks.onInnermost('agent/request-error', retryListener(retry, {
        timers: this.timers,
        appendRetry: (turn, step, attempt, delayMs, failure) => {
          this.append({ type: 'llm/retry', data: { turn, step, attempt, delayMs, failure } })
        },
      }) as never)
    }
  }

  #fold(e: LogEvent): void {
    // Requests hold the history array zero-copy (step-driver freezeRequest), so it may only ever
    // be appended to: a replacement (rare: compaction) splices a fresh copy instead.
    if (e.surfaceOp !== undefined && e.surfaceOp !== 'append') this.historyState.messages = this.historyState.messages.slice()
    historyReducer.apply(this.historyState, e)
    lifecycleReducer.apply(this.lifecycle, e)
    if (e.type === 'llm/retry') this.retriesInChain = (e.data as { attempt: number }).attempt
    // a failure chain is linked by retry causes only (L16)
    else if (e.type === 'turn/start' && (e.data as { cause?: { kind: string } }).cause?.kind !== 'retry') this.retriesInChain = 0
  }

  // -------------------------------------------------------------------------------------------
  // Public handle

  get status(): AgentStatus {
    return this.#status
  }

  get events(): readonly SessionEvent[] {
    // Extension events (plugin-registered types) are in the log too; see Agent.events.
    return this.session.events as readonly SessionEvent[]
  }

  readonly inbox: InboxHandle = (() => {
    const agent = this
    return {
      get nextTurn() {
        return agent.#list('next-turn')
      },
      get nextStep() {
        return agent.#list('next-step')
      },
      append: (target: InboxTarget, m: MessageInput) => this.#edit(() => this.#insert(target, 'tail', m)),
      prepend: (target: InboxTarget, m: MessageInput) => this.#edit(() => this.#insert(target, 'head', m)),
      replace: (id: string, m: MessageInput) => this.#edit(() => {
        const at = this.#find(id)
        if (!at) return false
        this.splice(at.target, at.index, 1, [toUserMessage(m, this.newId)], 'canceled')
        return true
      }),
      remove: (id: string) => this.#edit(() => {
        const at = this.#find(id)
        if (!at) return false
        this.splice(at.target, at.index, 1, [], 'canceled')
        return true
      }),
      splice: (target: InboxTarget, start: number, deleteCount?: number, ...messages: MessageInput[]) => this.#edit(() => {
        const len = this.#list(target).length
        const s = start < 0 ? Math.max(len + start, 0) : Math.min(start, len)
        const d = deleteCount === undefined ? len - s : Math.max(0, Math.min(deleteCount, len - s))
        return this.splice(target, s, d, messages.map((m) => toUserMessage(m, this.newId)), 'canceled')
      }),
      clear: () => this.#edit(() => this.#clearInbox()),
    }
  })()

  send(message: MessageInput, target: InboxTarget, wake: boolean): string {
    this.#assertUsable()
    const m = toUserMessage(message, this.newId)
    // Waking input never joins an aborted turn: it is re-targeted to next-turn and latched.
    const aborting = this.#status === 'running' && this.abort?.signal.aborted === true
    const t = wake && aborting ? 'next-turn' : target
    this.splice(t, this.#list(t).length, 0, [m])
    if (wake) this.#wake()
    return m.id
  }

  followup(message: MessageInput): string {
    return this.send(message, 'next-turn', true)
  }

  steer(message: MessageInput): string {
    return this.send(message, 'next-step', true)
  }

  inject(message: MessageInput): string {
    return this.send(message, 'next-step', false)
  }

  /**
   * Opens a turn for queued prompts without a new delivery: after a resume (pending followups in
   * the log) or after an aborted turn parked the queue. Does nothing unless the agent is idle and
   * next-turn holds a prompt (injected next-step items alone never open a turn). Returns whether
   * a turn was opened; like a waking send, the turn opens synchronously inside the call.
   */
  wake(): boolean {
    this.#assertUsable()
    if (this.#status !== 'idle' || !this.#turn.getSnapshot().matches('idle')) return false
    if (this.#list('next-turn').length === 0 && this.#resumeOf === null) return false
    this.#wake()
    return true
  }

  /**
   * @internal Resume (replay/resume.ts, lifecycle §8): the next turn this agent opens from idle,
   * whatever wakes it, is `turn/start {cause: {kind: 'resume', of}}`, and its first proposal owes a
   * request; `wake()` opens it even with nothing queued. Call before the first turn only.
   */
  armResume(of: number): void {
    this.#resumeOf = of
  }

  on<K extends HookName>(name: K, listener: HookMap[K]): () => void {
    return this.hooks.on(name, listener as never)
  }

  subscribe(listener: (event: LogEvent) => void): () => void {
    return this.session.subscribe(listener)
  }

  whenIdle(): Promise<void> {
    if (this.#isQuiet()) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  cancel(cause: CancelCause = { kind: 'user' }, options: CancelOptions = {}): void {
    if (this.#status === 'idle') return
    // Abort first: if clearing the inbox is refused (an observer calling in mid-append), the
    // cancel itself has still taken effect.
    this.#turn.send({ type: 'ABORT', cause })
    this.step?.abort()
    if (this.abort && !this.abort.signal.aborted) this.abort.abort(cause)
    if (!options.keepInbox) {
      this.#inbox.send({ type: 'UNLATCH' })
      this.#clearInbox()
    }
  }

  /** Resolves when every event committed so far is durable in `options.store` (at once without a store). */
  flush(): Promise<void> {
    return this.#persistence ? this.#persistence.flush() : Promise.resolve()
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return
    this.#disposing = true
    this.cancel({ kind: 'disposed' })
    // A maintenance task is told at once (its signal aborts), then awaited within the grace period.
    const m = this.#maintenance
    const grace = m ? new GracePeriod(this, m.controller.signal, this.cancelGraceMs) : null
    m?.controller.abort({ kind: 'disposed' })
    // called from the agent/status listener as the status became running: the loop starts once
    // the listeners return, one microtask from now
    if (this.#waking) await Promise.resolve()
    await this.#loop
    if (m && grace) {
      await grace.within(m.task, 'runMaintenance').catch(() => {})
      grace.close()
    }
    this.#disposed = true
    for (const off of this.#unsubscribePlugins) off()
    this.session.close()
    await this.#persistence?.close()
    this.#settleIdle()
  }

  async runMaintenance<T>(task: (signal: AbortSignal) => Promise<T> | T): Promise<T> {
    this.#assertUsable()
    if (this.#status !== 'idle' || !this.#turn.getSnapshot().matches('idle')) {
      throw new TurnlogError('AGENT_BUSY', 'runMaintenance runs only from idle', { sessionId: this.sessionId })
    }
    this.#turn.send({ type: 'MAINTAIN' })
    const controller = new AbortController()
    let running: Promise<T>
    try {
      running = Promise.resolve(task(controller.signal))
    } catch (err) {
      running = Promise.reject(err)
    }
    this.#maintenance = { controller, task: running }
    try {
      return await running
    } finally {
      this.#maintenance = null
      this.#turn.send({ type: 'MAINTAINED' })
      // A wake latched during maintenance is replayed now (once), if work is still pending; never
      // after dispose() (which starts no queued work).
      const replay = !this.#disposing && !this.#disposed && !this.#halted && this.#latchedWork()
      this.#inbox.send({ type: 'UNLATCH' })
      if (replay) this.#wake()
      else this.#settleIdle()
    }
  }

  history(): readonly ModelMessage[] {
    return this.historyState.messages.slice()
  }

  transcript(): TranscriptState {
    const t = transcriptReducer.initial()
    for (const e of this.session.events) transcriptReducer.apply(t, e)
    return t
  }

  snapshot(): AgentSnapshot {
    const ts = this.#turn.getSnapshot()
    const ib = this.#inbox.getSnapshot()
    return {
      status: this.#status,
      turn: { state: ts.value as TurnStateValue, context: { ...ts.context } },
      step: this.step ? { state: this.step.state(), turn: this.step.turn, step: this.step.step } : null,
      inbox: { nextTurn: ib.context.nextTurn, nextStep: ib.context.nextStep, latched: ib.matches('latched') },
      openTurn: this.lifecycle.openTurn,
      openStep: this.lifecycle.openStep,
      pendingToolCalls: this.lifecycle.pendingToolCalls.map((c) => ({ ...c })),
      lastSeq: this.session.length - 1,
    }
  }

  // -------------------------------------------------------------------------------------------
  // Internal primitives (used by the step driver and plugins)

  /**
   * @internal Waits for user code (a hook, a tool body) within the open turn's cancel grace period:
   * rejects with `Abandoned` when the period after a cancel runs out first (agent/grace.ts).
   */
  within<T>(value: Promise<T>, where: string): Promise<T> {
    return this.grace ? this.grace.within(value, where) : value
  }

  /** @internal Appends one event to the log. */
  append(draft: EventDraft): LogEvent {
    return this.session.append(draft)
  }

  /** @internal Emits a live event; a throwing observer is reported as `agent/error`. */
  emit(name: HookName, payload: unknown): void {
    this.hooks.emit(name, payload, (err, n) => {
      if (n !== 'agent/error') this.reportError(err, n)
    })
  }

  /** @internal Persistence failed: cancel the open turn (keeping the inbox), start nothing new. */
  halt(error: TurnlogError): void {
    if (this.#halted) return
    this.#halted = error
    this.cancel({ kind: 'hook', reason: `persistence failed: ${error.code}` }, { keepInbox: true })
  }

  /** @internal */
  reportError(error: unknown, where: string): void {
    const turn = this.lifecycle.openTurn ?? undefined
    this.hooks.emit('agent/error', { error, where, turn }, () => {})
  }

  /**
   * @internal One inbox splice: checked by the machine's guard, appended to the log, then applied.
   * `outcome` marks removals by edits and cancels; a claim passes none.
   */
  splice(target: InboxTarget, start: number, deleteCount: number, inserted: UserMessage[], outcome?: 'canceled'): UserMessage[] {
    if (deleteCount === 0 && inserted.length === 0) return []
    const ev: SpliceEvent = { type: 'SPLICE', target, start, deleteCount, inserted }
    // The machine's own guard, called directly: `snapshot.can()` computes a whole transition.
    if (!spliceKeepsIdsUnique(this.#inbox.getSnapshot().context, ev)) {
      throw new TurnlogError('DUPLICATE_PENDING_ID', 'a message with this id is already pending', {
        sessionId: this.sessionId, field: 'message.id', info: { ids: inserted.map((m) => m.id) },
      })
    }
    const removed = this.#logSplice(target, start, deleteCount, inserted, outcome)
    this.#inbox.send(ev)
    this.#emitSplice(target, start, removed, inserted, outcome)
    return removed
  }

  /**
   * @internal Claims all of next-step and, when `takePrompt`, the first next-turn prompt: logged as
   * splices without outcome (next-step first), then applied as one CLAIM.
   */
  claim(turn: number, takePrompt: boolean): UserMessage[] {
    const steps = this.#logSplice('next-step', 0, this.#list('next-step').length, [])
    const prompt = takePrompt ? this.#logSplice('next-turn', 0, Math.min(1, this.#list('next-turn').length), []) : []
    this.#inbox.send({ type: 'CLAIM', takePrompt })
    if (steps.length) this.#emitSplice('next-step', 0, steps, [])
    if (prompt.length) this.#emitSplice('next-turn', 0, prompt, [])
    const batch = [...steps, ...prompt]
    for (const message of batch) this.emit('agent/inbox/claimed', { message, turn })
    return batch
  }

  /** Appends one `agent/inbox/spliced` (none when it changes nothing); returns the removed messages. */
  #logSplice(target: InboxTarget, start: number, deleteCount: number, inserted: UserMessage[], outcome?: 'canceled'): UserMessage[] {
    if (deleteCount === 0 && inserted.length === 0) return []
    const removed = this.#list(target).slice(start, start + deleteCount)
    this.append({
      type: 'agent/inbox/spliced',
      data: {
        target, start, inserted,
        ...(deleteCount > 0 ? { removedCount: deleteCount } : {}),
        ...(deleteCount > 0 && outcome ? { outcome } : {}),
      },
    })
    return removed
  }

  #emitSplice(target: InboxTarget, start: number, removed: readonly UserMessage[], inserted: readonly UserMessage[], outcome?: 'canceled'): void {
    const canceled = outcome !== undefined && removed.length > 0
    this.emit('agent/inbox/spliced', { target, start, removedCount: removed.length, inserted, ...(canceled ? { outcome } : {}) })
    if (canceled) for (const message of removed) this.emit('agent/inbox/discarded', { target, message, outcome: 'canceled' })
    for (const message of inserted) this.emit('agent/inbox/inserted', { target, message })
  }

  // -------------------------------------------------------------------------------------------
  // The turn loop

  #wake(): void {
    const ts = this.#turn.getSnapshot()
    if (ts.matches('idle') && this.#status === 'idle') {
      // The machine hears WAKE before the status is emitted (lifecycle §6): a cancel() from the
      // agent/status listener is then remembered by the opening turn (which ends aborted), not
      // reset by it; a dispose() from there waits for the loop started right after.
      const resumeOf = this.#resumeOf
      this.#resumeOf = null
      this.#turn.send(resumeOf !== null ? { type: 'WAKE', resumeOf } : { type: 'WAKE' })
      this.#waking = true
      try {
        this.#setStatus('running')
      } finally {
        this.#waking = false
      }
      // A turn cancelled before it opened closes without awaiting anything: the loop may have
      // finished (and gone idle) before its promise is returned here.
      this.#loopRunning = true
      const loop = this.#runLoop()
      if (this.#loopRunning) this.#loop = loop
      return
    }
    if (ts.matches('maintaining') || this.abort?.signal.aborted) this.#inbox.send({ type: 'LATCH' })
    // A running, healthy turn picks the input up at its next boundary.
  }

  /** Runs turns until the machine is idle. Synchronous up to the first hook (lifecycle §2). */
  async #runLoop(): Promise<void> {
    try {
      for (;;) {
        const s = this.#turn.getSnapshot()
        if (s.matches('idle')) break
        const phase = (s.value as { running?: string }).running
        switch (phase) {
          case 'opening':
            this.#openTurn()
            break
          case 'proposing':
            await this.#propose()
            break
          case 'stepping':
            await this.#step()
            break
          case 'stopping':
            await this.#stopping()
            break
          case 'recovering':
            await this.#recover()
            break
          case 'closing':
            this.#closeTurn()
            break
          default:
            throw new Error(`turn machine in unexpected state ${JSON.stringify(s.value)}`)
        }
      }
    } catch (err) {
      // A driver defect (or a refused append): report it, close what is open, never wedge the agent.
      this.reportError(err, 'driver')
      this.#emergencyClose(err)
    }
    this.#loop = null
    this.#loopRunning = false
    this.abort = null
    this.grace?.close()
    this.grace = null
    this.#setStatus('idle')
    this.#settleIdle()
  }

  #openTurn(): void {
    const c = this.#turn.getSnapshot().context
    this.abort = new AbortController()
    this.grace?.close()
    this.grace = new GracePeriod(this, this.abort.signal, this.cancelGraceMs)
    // cancelled before the turn opened (from the agent/status listener): the signal says so too
    if (c.abortCause !== null) this.abort.abort(c.abortCause)
    this.append({
      type: 'turn/start',
      data: c.retryOf !== null ? { turn: c.turn, cause: { kind: 'retry', of: c.retryOf } }
        : c.resumeOf !== null ? { turn: c.turn, cause: { kind: 'resume', of: c.resumeOf } }
        : { turn: c.turn },
    })
    this.#turn.send({ type: 'OPENED' })
  }

  async #propose(): Promise<void> {
    // A store that has not answered yet may refuse the session (SESSION_EXISTS, SESSION_OWNED):
    // no claim, no hook and no model call before it has. A refusal halts the agent, which cancels
    // this turn (inbox kept): the turn machine is then closing and nothing is proposed.
    const opening = this.#persistence?.opening
    if (opening) {
      await opening
      if (!this.#turn.getSnapshot().matches({ running: 'proposing' })) return
    }
    const c = this.#turn.getSnapshot().context
    const first = c.proposal === 'first'
    // a retry or resume turn re-requests: its first proposal claims next-step input only
    const owed = first && (c.retryOf !== null || c.resumeOf !== null)
    const messages = this.claim(c.turn, first && !owed)
    let decision: PreStepDecision
    try {
      decision = await this.within(this.hooks.waterfall('agent/pre-step', {
        turn: c.turn, step: c.steps + 1, messages, proposal: c.proposal, retry: first && c.retryOf !== null,
        resume: first && c.resumeOf !== null,
        signal: this.abort!.signal, agent: this,
      }, (p) => ({ kind: 'enter' as const, messages: p.messages })), 'agent/pre-step')
      decision = checkDecision(decision)
    } catch (err) {
      // Abandoned after the cancel's grace period: the machine already closes the turn (aborted).
      if (isAbandoned(err)) return
      this.reportError(err, 'agent/pre-step')
      this.#turn.send({ type: 'PROPOSE_FAILED', failure: hookFailure('agent/pre-step', err) })
      return
    }
    if (decision.kind === 'reject') {
      this.#turn.send({ type: 'PROPOSED', decision: 'reject' })
      return
    }
    this.entered = decision.messages
    this.#turn.send({ type: 'PROPOSED', decision: decision.messages.length > 0 ? 'enter' : 'enter-empty' })
  }

  async #step(): Promise<void> {
    const c = this.#turn.getSnapshot().context
    const outcome = await runStep(this, c.turn, c.steps, this.entered, this.abort!.signal, c.abortCause !== null)
    this.entered = []
    this.#turn.send({ type: 'STEP_DONE', outcome, nextStepPending: this.#list('next-step').length > 0 })
  }

  async #stopping(): Promise<void> {
    const c = this.#turn.getSnapshot().context
    try {
      await this.within(this.hooks.serial('agent/turn-stopping', {
        turn: c.turn, step: c.steps, outcome: this.lifecycle.lastStepOutcome!, signal: this.abort!.signal, agent: this,
      }), 'agent/turn-stopping')
    } catch (err) {
      if (isAbandoned(err)) {
        // the turn was cancelled: STOPPED after an abort closes it aborted
        this.#turn.send({ type: 'STOPPED', nextStepPending: false })
        return
      }
      this.reportError(err, 'agent/turn-stopping')
      this.#turn.send({ type: 'STOP_FAILED', failure: hookFailure('agent/turn-stopping', err) })
      return
    }
    this.#turn.send({ type: 'STOPPED', nextStepPending: this.#list('next-step').length > 0 })
  }

  async #recover(): Promise<void> {
    const c = this.#turn.getSnapshot().context
    let retry = false
    try {
      const decision: RequestErrorDecision = await this.within(this.hooks.waterfall('agent/request-error', {
        turn: c.turn, step: c.steps, failure: c.failure!, retries: this.retriesInChain,
        signal: this.abort!.signal, agent: this,
      }, () => undefined), 'agent/request-error')
      // read inside the guard: a decision is user data (its `kind` may be a throwing getter)
      retry = (decision as { kind?: unknown } | undefined)?.kind === 'retry'
    } catch (err) {
      if (!isAbandoned(err)) this.reportError(err, 'agent/request-error')
    }
    this.#turn.send({ type: 'RECOVERED', retry })
  }

  #closeTurn(): void {
    const c = this.#turn.getSnapshot().context
    this.append({ type: 'turn/end', data: { turn: c.turn, reason: c.endReason! } })
    const latched = !this.#disposing && !this.#halted && this.#latchedWork()
    const nextTurnPending = !this.#disposing && !this.#halted && this.#list('next-turn').length > 0
    this.#inbox.send({ type: 'UNLATCH' })
    this.#turn.send({ type: 'CLOSED', nextTurnPending, latched })
  }

  /** After a driver defect: close the open step and turn so the log stays valid, then go idle. */
  #emergencyClose(err: unknown): void {
    const failure: Failure = { code: 'UNKNOWN', message: errorText(err) }
    try {
      const l = this.lifecycle
      if (l.openStep !== null && l.openTurn !== null) {
        for (const call of l.pendingToolCalls) {
          this.append({
            type: 'tool/result',
            data: {
              turn: l.openTurn, step: l.openStep, callId: call.callId,
              message: { role: 'tool', callId: call.callId, content: [{ type: 'text', text: 'outcome unknown' }], isError: true },
              error: { code: 'TOOL_OUTCOME_UNKNOWN', message: failure.message },
            },
            surfaceOp: 'append', sourceEventSeqs: [call.seq],
          })
        }
        this.append({ type: 'step/end', data: { turn: l.openTurn, step: l.openStep, outcome: { kind: 'failed', failure } } })
      }
      if (this.lifecycle.openTurn !== null) {
        this.append({ type: 'turn/end', data: { turn: this.lifecycle.openTurn, reason: { kind: 'error', failure } } })
      }
    } catch (e) {
      this.reportError(e, 'driver')
    }
    // Restart the machines at idle, continuing the turn numbering.
    this.stepActor?.stop()
    this.stepActor = null
    this.#turn.stop()
    this.#turn = runMachine(turnMachine, { lastTurn: this.lifecycle.lastTurn, maxStepsPerTurn: this.options.maxStepsPerTurn ?? 64 }, this.options.inspect)
  }

  // -------------------------------------------------------------------------------------------
  // Helpers

  #setStatus(s: AgentStatus): void {
    if (this.#status === s) return
    this.#status = s
    this.emit('agent/status', { status: s })
  }

  #list(t: InboxTarget): readonly UserMessage[] {
    const c = this.#inbox.getSnapshot().context
    return t === 'next-turn' ? c.nextTurn : c.nextStep
  }

  #find(id: string): { target: InboxTarget; index: number } | null {
    for (const target of ['next-turn', 'next-step'] as const) {
      const index = this.#list(target).findIndex((m) => m.id === id)
      if (index >= 0) return { target, index }
    }
    return null
  }

  #insert(target: InboxTarget, where: 'head' | 'tail', m: MessageInput): string {
    const msg = toUserMessage(m, this.newId)
    this.splice(target, where === 'head' ? 0 : this.#list(target).length, 0, [msg])
    return msg.id
  }

  #clearInbox(): void {
    for (const t of ['next-step', 'next-turn'] as const) {
      const n = this.#list(t).length
      if (n > 0) this.splice(t, 0, n, [], 'canceled')
    }
  }

  #edit<T>(fn: () => T): T {
    this.#assertUsable()
    return fn()
  }

  #assertUsable(): void {
    if (this.#disposed || this.#disposing) {
      throw new TurnlogError('AGENT_DISPOSED', 'the agent is disposed', { sessionId: this.sessionId })
    }
    if (this.#halted) {
      throw new TurnlogError('PERSISTENCE_FAILED', `the agent stopped: persistence failed (${this.#halted.code})`, {
        sessionId: this.sessionId, info: { code: this.#halted.code },
      }, { cause: this.#halted })
    }
  }

  #latchedWork(): boolean {
    return this.#inbox.getSnapshot().matches('latched') && (this.#list('next-turn').length > 0 || this.#list('next-step').length > 0)
  }

  #isQuiet(): boolean {
    return this.#status === 'idle' && this.#loop === null && !this.#latchedWork() && !this.#turn.getSnapshot().matches('maintaining')
  }

  #settleIdle(): void {
    if (!this.#isQuiet() && !this.#disposed) return
    const waiters = this.#idleWaiters
    this.#idleWaiters = []
    for (const w of waiters) w()
  }
}

/** `createAgent({})` and friends: a coded error naming the field, not a `TypeError` from deep inside. */
function assertModel(options: unknown): asserts options is AgentOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TurnlogError('INVALID_OPTION', 'createAgent needs an options object with a model', { field: 'model' })
  }
  let stream: unknown
  try {
    const model = (options as { model?: unknown }).model
    stream = typeof model === 'object' && model !== null ? (model as { stream?: unknown }).stream : undefined
  } catch {
    stream = undefined
  }
  if (typeof stream !== 'function') {
    throw new TurnlogError('INVALID_OPTION', 'options.model must be a ModelAdapter ({ stream(request, signal) })', { field: 'model' })
  }
}

function checkDecision(d: unknown): PreStepDecision {
  if (typeof d === 'object' && d !== null) {
    const k = (d as { kind?: unknown }).kind
    if (k === 'reject') return { kind: 'reject' }
    if (k === 'enter') {
      const ms = (d as { messages?: unknown }).messages
      if (Array.isArray(ms)) {
        // The parsed copies are entered, not the hook's objects (which it could still change).
        const parsed: UserMessage[] = []
        for (const m of ms) {
          const r = UserMessage.safeParse(m)
          if (!r.success) throw new TurnlogError('INVALID_MESSAGE', `pre-step entered an invalid message: ${r.error.issues[0]!.message}`)
          parsed.push(r.data)
        }
        return { kind: 'enter', messages: parsed }
      }
    }
  }
  throw new TurnlogError('INVALID_ARGUMENT', 'agent/pre-step must return {kind:"enter", messages} or {kind:"reject"}')
}

/** @internal */
export function hookFailure(hook: string, err: unknown): Failure {
  return { code: 'HOOK_ERROR', message: `${hook}: ${errorText(err)}` }
}
