/**
 * `createAgent` and the `Agent` handle. The agent owns the session log, the live folds and the
 * machines; its drivers perform the effects each machine state asks for (appends, hooks, the
 * model, tools) and report results back to the machines, which decide: turn-driver.ts (the turn
 * loop), step-driver.ts (one step), inbox-driver.ts (the inbox). Every durable fact is appended to
 * the session log first; memory follows the log. The live folds and the read-only views
 * (snapshot, transcript) are in live-state.ts.
 *
 * Over ~400 lines (586) for now, knowingly: one class whose private state (status, latch, deferred
 * reports, loop token, disposing) the handle's methods and the approval, budget and wakeup members
 * share. The seams, in order: the constructor's per-feature set-up (budget meter, wakeups) into
 * installers that return their fold; `runMaintenance` into its own file; the approval members
 * (`approvals`, `decide`, `onDecisionChannel`, `setParked`) beside agent/approvals.ts.
 */
import { runMachine, type MachineRunner } from '../machines/lean-actor.js'
import {
  Session, TurnlogError,
  type CancelCause, type EventDraft, type InboxTarget, type LogEvent, type ModelMessage, type RequestConfig, type SessionEvent,
  type ToolSpec, type UserMessage,
} from '../events/index.js'
import type { StepContext, StepEvent } from '../machines/step.js'
import { turnMachine, type TurnContext, type TurnEvent } from '../machines/turn.js'
import { historyReducer } from '../reducers/history.js'
import { inboxReducer } from '../reducers/inbox.js'
import { lifecycleReducer } from '../reducers/lifecycle.js'
import type { TranscriptState } from '../reducers/transcript.js'
import { approvalsReducer } from '../reducers/approvals.js'
import type { ApprovalRun } from '../tools/types.js'
import type { DecisionChannel } from './persistence.js'
import { applyDecision, openApprovalList, toBy, toDecision } from './approvals.js'
import { ClaimedDecisions } from './claimed-decisions.js'
import { restoredStep, standsParked, type RestoredStep } from './restore.js'
import { toolSpec } from '../tools/define.js'
import type { AnyTool } from '../tools/types.js'
import { BudgetMeter, normaliseBudgets, type BudgetStatus } from './budget.js'
import { GracePeriod } from './grace.js'
import { HookRegistry } from './hooks.js'
import { InboxDriver } from './inbox-driver.js'
import { agentSnapshot, foldLive, foldTranscript } from './live-state.js'
import { Persistence } from './persistence.js'
import { toUserMessage } from './messages.js'
import { assertModel, checkLimits } from './options.js'
import { AGENT_OPTION_FIELDS, checkHook, checkOptionFields } from './options-schema.js'
import { installHooks } from './install.js'
import { realTimers, resolveRetry } from './retry-policy.js'
import type { StepRun } from './step-driver.js'
import { TurnLoop } from './turn-driver.js'
import { Wakeups } from './wakeups.js'
import { scheduleWakeupTool } from './wakeup-tool.js'
import type { ScheduleInfo, ScheduleSpec } from './wakeup-types.js'
import type {
  Agent, AgentOptions, AgentSnapshot, AgentStatus, ApprovalDecisionInput, CancelOptions, HookMap, HookName, InboxHandle, MessageInput,
  OpenApproval, Timers,
} from './types.js'

export { DEFAULT_CANCEL_GRACE_MS } from './options.js'
export { hookFailure } from './decisions.js'

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
  /** @internal the approvals of the log (lifecycle §9), folded live. */
  readonly approvalsState = approvalsReducer.initial()
  /** @internal the running step's approvals (tools/approval-gate.ts), or null. */
  approvalRun: ApprovalRun | null = null
  /**
   * @internal the id of a new request for a call, when a re-run must reuse a recorded one
   * (turnlog/evals: the golden's approval ids, so that an unchanged re-run logs the same request);
   * else the id source draws it.
   */
  approvalIdFor: ((turn: number, step: number, callId: string) => string | undefined) | null = null
  /** @internal decisions through the store's side channel (agent/claimed-decisions.ts). */
  readonly claimed = new ClaimedDecisions(this)
  /** @internal a parked step of the prefix, restored at the first wake (lifecycle §9; agent/restore.ts). */
  restoreStep: RestoredStep | null = null
  /** @internal */ readonly newId: () => string
  /** @internal */ readonly maxParallelToolCalls: number
  /** @internal `options.budget`'s live meter (agent/budget.ts), or null without a budget. */
  readonly budget: BudgetMeter | null = null
  /** @internal the turn machine's runner (restarted at idle after a driver defect). */
  turnActor: MachineRunner<TurnContext, TurnEvent>
  /** @internal the wakeups: pending schedules folded from the log, the one timer (agent/wakeups.ts). */
  readonly wakeups: Wakeups
  /** @internal the inbox machine, its logged splices and the public handle (agent/inbox-driver.ts). */
  readonly inboxDriver: InboxDriver
  readonly inbox: InboxHandle
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
  /** Runs the turn machine (agent/turn-driver.ts). */
  readonly #turns: TurnLoop
  /** The running `runMaintenance` task: its signal (aborted by dispose) and its settlement. */
  #maintenance: { controller: AbortController; task: Promise<unknown> } | null = null
  #idleWaiters: Array<() => void> = []
  #settleWaiters: Array<(s: 'idle' | 'parked') => void> = []
  #disposed = false
  #disposing = false
  readonly #unsubscribePlugins: Array<() => void>
  /** Forwards committed events to `options.store` (agent/persistence.ts). */
  readonly #persistence: Persistence | null = null
  /** Set when persistence failed: no new turn, no new input. */
  #halted: TurnlogError | null = null
  /** The interrupted turn the next turn opened from idle re-runs (lifecycle §8; `armResume`). */
  #resumeOf: number | null = null
  /** @internal The limit the resume turn records on its cause (lifecycle §8; `armResume`). */
  resumeLimit: number | null = null
  /** Errors held until the owed work starts (`deferReport`): resume's `RESUME_LIMIT`. */
  #deferred: Array<{ error: unknown; where: string }> = []

  constructor(options: AgentOptions) {
    assertModel(options)
    checkOptionFields(options, AGENT_OPTION_FIELDS, 'createAgent')
    this.options = options
    this.timers = { ...realTimers, ...options.timers }
    this.newId = options.ids ?? (() => globalThis.crypto.randomUUID())
    const limits = checkLimits(options)
    const maxSteps = limits.maxStepsPerTurn
    this.maxParallelToolCalls = limits.maxParallelToolCalls
    this.cancelGraceMs = limits.cancelGraceMs
    const tools = limits.tools
    // the built-in scheduleWakeup tool (lifecycle §10), when asked for (agent/wakeup-tool.ts)
    const wt = options.wakeups?.tool
    if (wt) scheduleWakeupTool(this, wt === true ? {} : wt, tools as Map<string, AnyTool>)
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
    if (options.budget !== undefined) {
      this.budget = new BudgetMeter(normaliseBudgets(options.budget), (err, where) => this.reportError(err, where), (w) => this.emit('agent/budget', w))
    }
    this.wakeups = new Wakeups({
      sessionId: this.sessionId, timers: this.timers, newId: this.newId,
      now: options.clock ?? Date.now,
      busy: () => this.lifecycle.openTurn !== null,
      canFire: () => !this.#disposing && !this.#disposed && this.#halted === null && this.#resumeOf === null,
      append: (draft) => this.append(draft),
      send: (m, target, wake) => this.send(m, target, wake),
      reportError: (error, where) => this.reportError(error, where),
    }, options.wakeups?.timer !== false, this.session.length > 0)
    // One pass over an inherited prefix (the live projections, the budget meter, the wakeups and the
    // pending inbox it left), then one fold per committed event for all of them.
    const meter = this.budget
    const fold = (e: LogEvent) => {
      foldLive(this, e)
      meter?.apply(e)
      this.wakeups.fold(e)
    }
    const pending = inboxReducer.initial()
    for (const e of this.session.events) {
      fold(e)
      inboxReducer.apply(pending, e)
    }
    meter?.startBaselines()
    this.session.addFold(fold)
    this.resumed = this.session.length > 0
    if (this.lifecycle.openTurn !== null && standsParked(this.lifecycle, this.approvalsState)) {
      this.restoreStep = restoredStep(this.session.events, this.lifecycle, this.approvalsState)
    } else if (this.lifecycle.openTurn !== null) {
      throw new TurnlogError('INVALID_OPTION', 'the prefix ends inside an open turn: repair it first', {
        field: 'prefix', seq: this.session.length - 1, sessionId: this.sessionId,
      })
    }
    this.turnActor = runMachine(turnMachine, { lastTurn: this.lifecycle.lastTurn, maxStepsPerTurn: maxSteps }, options.inspect)
    this.inboxDriver = new InboxDriver({
      sessionId: this.sessionId,
      newId: this.newId,
      append: (draft) => this.append(draft),
      emit: (name, payload) => this.emit(name, payload),
      assertUsable: () => this.#assertUsable(),
    }, pending, options.inspect)
    this.inbox = this.inboxDriver.handle
    this.#turns = new TurnLoop(this, {
      setStatus: (s) => this.#setStatus(s),
      settleIdle: () => this.#settleIdle(),
      opening: () => this.#persistence?.opening,
      winding: () => this.#disposing || this.#halted !== null,
    })
    // after every check that can throw, so a refused agent never takes the store's lock
    if (options.store || options.storeWriter) {
      this.#persistence = new Persistence(this, { store: options.store, writer: options.storeWriter })
    }

    this.#unsubscribePlugins = installHooks(this, options, retry)
  }

  // ---- Public handle

  get status(): AgentStatus {
    return this.#status
  }

  get events(): readonly SessionEvent[] {
    // Extension events (plugin-registered types) are in the log too; see Agent.events.
    return this.session.events as readonly SessionEvent[]
  }

  send(message: MessageInput, target: InboxTarget, wake: boolean): string {
    this.#assertUsable()
    const m = toUserMessage(message, this.newId)
    // Waking input never joins an aborted turn: it is re-targeted to next-turn and latched.
    const aborting = this.#status === 'running' && this.abort?.signal.aborted === true
    const t = wake && aborting ? 'next-turn' : target
    this.splice(t, this.inboxDriver.list(t).length, 0, [m])
    // lifecycle §9: a steer supersedes the open approvals (never approves them) unless told to queue
    if (wake && t === 'next-step' && this.approvalRun !== null && this.options.approvals?.onSteer !== 'queue') this.approvalRun.supersede()
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
    this.#reportDeferred()
    const wasIdle = this.#status === 'idle'
    const woke = this.#wakeQueued()
    // then the wakeups that came due while no process ran (lifecycle §10), after the resume turn
    // opened (L13), so with a turn open they follow `whenBusy`
    this.wakeups.release()
    this.wakeups.fireDue()
    return woke || (wasIdle && this.#status !== 'idle')
  }

  #wakeQueued(): boolean {
    if (this.#status !== 'idle' || !this.turnActor.getSnapshot().matches('idle')) return false
    if (this.restoreStep !== null) {
      this.#turns.restore(this.restoreStep)
      return true
    }
    if (this.inboxDriver.list('next-turn').length === 0 && this.#resumeOf === null) return false
    this.#wake()
    return true
  }

  schedule(spec: ScheduleSpec): string {
    this.#assertUsable()
    return this.wakeups.schedule(spec)
  }

  schedules(): ScheduleInfo[] {
    return this.wakeups.list()
  }

  unschedule(scheduleId: string): boolean {
    this.#assertUsable()
    return this.wakeups.unschedule(scheduleId)
  }

  /**
   * @internal Resume (replay/resume.ts, lifecycle §8): the next turn this agent opens from idle,
   * whatever wakes it, is `turn/start {cause: {kind: 'resume', of}}`, and its first proposal owes a
   * request; `wake()` opens it even with nothing queued. Call before the first turn only.
   */
  armResume(of: number, maxResumeRuns?: number): void {
    this.#resumeOf = of
    this.resumeLimit = maxResumeRuns ?? null
  }

  /**
   * @internal Resume (replay/resume-plan.ts): `agent/error` to report when the owed work starts
   * (`wake()` or the first waking delivery), so listeners added with `agent.on` after
   * `resumeAgent({autoStart: false})` resolved hear it too.
   */
  deferReport(error: unknown, where: string): void {
    this.#deferred.push({ error, where })
  }

  #reportDeferred(): void {
    const held = this.#deferred
    if (held.length === 0) return
    this.#deferred = []
    for (const d of held) this.reportError(d.error, d.where)
  }

  on<K extends HookName>(name: K, listener: HookMap[K]): () => void {
    checkHook(name, listener)
    return this.hooks.on(name, listener as never)
  }

  subscribe(listener: (event: SessionEvent) => void): () => void {
    // the session's observers take LogEvent; extension events arrive too (see Agent.subscribe)
    return this.session.subscribe(listener as (event: LogEvent) => void)
  }

  whenIdle(): Promise<void> {
    if (this.#isQuiet()) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  whenSettled(): Promise<'idle' | 'parked'> {
    if (this.#status === 'parked' || this.#isQuiet() || this.#disposed) return Promise.resolve(this.#status === 'parked' ? 'parked' : 'idle')
    return new Promise((resolve) => this.#settleWaiters.push(resolve))
  }

  approvals(): OpenApproval[] {
    return openApprovalList(this)
  }

  async decide(approvalId: string, decision: ApprovalDecisionInput, options: { by?: { kind: 'user'; id?: string } } = {}): Promise<void> {
    this.#assertUsable()
    applyDecision(this, approvalId, toDecision(decision), toBy(options?.by))
    await this.flush()
  }

  /** @internal The store's write handle has a decision side channel (persistence opened it). */
  onDecisionChannel(channel: DecisionChannel): void {
    this.claimed.attach(channel)
  }

  /** @internal the agent's clock (epoch ms). */
  now(): number {
    return (this.options.clock ?? Date.now)()
  }

  /** @internal */
  hookCount(name: HookName): number {
    return this.hooks.count(name)
  }

  /** @internal Listeners of `name` that may decide (not re-execution pass-through gates). */
  decidingHookCount(name: HookName): number {
    return this.hooks.decidingCount(name)
  }

  /** @internal The running step parks (only decisions are owed) or goes on (lifecycle §9). */
  setParked(parked: boolean): void {
    const e = { type: parked ? 'PARK' : 'UNPARK' } as const
    this.turnActor.send(e)
    this.stepActor?.send(e)
    this.#setStatus(parked ? 'parked' : 'running')
    this.claimed.keepAlive(parked)
    if (parked) this.#settleIdle()
  }

  cancel(cause: CancelCause = { kind: 'user' }, options: CancelOptions = {}): void {
    if (this.#status === 'idle') return
    // Abort first: if clearing the inbox is refused (an observer calling in mid-append), the
    // cancel itself has still taken effect.
    this.turnActor.send({ type: 'ABORT', cause })
    this.step?.abort()
    if (this.abort && !this.abort.signal.aborted) this.abort.abort(cause)
    if (!options.keepInbox) {
      this.inboxDriver.send({ type: 'UNLATCH' })
      this.inboxDriver.clear()
    }
  }

  /** Resolves when every event committed so far is durable in `options.store` (at once without a store). */
  flush(): Promise<void> {
    return this.#persistence ? this.#persistence.flush() : Promise.resolve()
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return
    // lifecycle §9: a parked agent is not cancelled; the session stays parked (the log says what is owed)
    if (this.#status === 'parked') return this.#disposeParked()
    this.#disposing = true
    this.wakeups.close()
    this.cancel({ kind: 'disposed' })
    // A maintenance task is told at once (its signal aborts), then awaited within the grace period.
    const m = this.#maintenance
    const grace = m ? new GracePeriod(this, m.controller.signal, this.cancelGraceMs) : null
    m?.controller.abort({ kind: 'disposed' })
    // called from the agent/status listener as the status became running: the loop starts once
    // the listeners return, one microtask from now
    if (this.#turns.waking) await Promise.resolve()
    await this.#turns.running
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

  async #disposeParked(): Promise<void> {
    this.#disposing = true
    this.claimed.close()
    this.approvalRun?.detach()
    this.#disposed = true
    for (const off of this.#unsubscribePlugins) off()
    this.session.close()
    await this.#persistence?.close()
    this.#settleIdle()
  }

  async runMaintenance<T>(task: (signal: AbortSignal) => Promise<T> | T): Promise<T> {
    this.#assertUsable()
    if (this.#status !== 'idle' || !this.turnActor.getSnapshot().matches('idle')) {
      throw new TurnlogError('AGENT_BUSY', 'runMaintenance runs only from idle', { sessionId: this.sessionId })
    }
    this.turnActor.send({ type: 'MAINTAIN' })
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
      this.turnActor.send({ type: 'MAINTAINED' })
      // A wake latched during maintenance is replayed now (once), if work is still pending; never
      // after dispose() (which starts no queued work).
      const replay = !this.#disposing && !this.#disposed && !this.#halted && this.inboxDriver.latchedWork()
      this.inboxDriver.send({ type: 'UNLATCH' })
      if (replay) this.#wake()
      else this.#settleIdle()
    }
  }

  history(): readonly ModelMessage[] {
    return this.historyState.messages.slice()
  }

  transcript(): TranscriptState {
    return foldTranscript(this.session.events)
  }

  snapshot(): AgentSnapshot {
    return agentSnapshot(this, this.#status)
  }

  budgets(): BudgetStatus[] {
    return this.budget?.status() ?? []
  }

  // ---- Internal primitives (used by the step driver and plugins)

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
    return this.inboxDriver.splice(target, start, deleteCount, inserted, outcome)
  }

  /**
   * @internal Claims all of next-step and, when `takePrompt`, the first next-turn prompt: logged as
   * splices without outcome (next-step first), then applied as one CLAIM.
   */
  claim(turn: number, takePrompt: boolean): UserMessage[] {
    return this.inboxDriver.claim(turn, takePrompt)
  }

  // ---- Waking the turn loop

  #wake(): void {
    this.#reportDeferred()
    const ts = this.turnActor.getSnapshot()
    if (ts.matches('idle') && this.#status === 'idle' && this.restoreStep !== null) {
      this.#turns.restore(this.restoreStep) // the parked step first; the input waits for its boundary
      return
    }
    if (ts.matches('idle') && this.#status === 'idle') {
      const resumeOf = this.#resumeOf
      this.#resumeOf = null
      this.#turns.start(resumeOf)
      return
    }
    if (ts.matches('maintaining') || this.abort?.signal.aborted) this.inboxDriver.send({ type: 'LATCH' })
    // A running, healthy turn picks the input up at its next boundary.
  }

  #setStatus(s: AgentStatus): void {
    if (this.#status === s) return
    this.#status = s
    this.emit('agent/status', { status: s })
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

  #isQuiet(): boolean {
    return this.#status === 'idle' && this.#turns.running === null && !this.inboxDriver.latchedWork() && !this.turnActor.getSnapshot().matches('maintaining')
  }

  #settleIdle(): void {
    if (this.#status === 'parked' || this.#isQuiet() || this.#disposed) {
      const s = this.#settleWaiters
      this.#settleWaiters = []
      for (const w of s) w(this.#status === 'parked' ? 'parked' : 'idle')
    }
    if (!this.#isQuiet() && !this.#disposed) return
    const waiters = this.#idleWaiters
    this.#idleWaiters = []
    for (const w of waiters) w()
  }
}
