/**
 * `createAgent` and the `Agent` handle. The agent owns the session log, the live folds and the
 * machines; its drivers perform the effects each machine state asks for (appends, hooks, the
 * model, tools) and report results back to the machines, which decide: turn-driver.ts (the turn
 * loop), step-driver.ts (one step), inbox-driver.ts (the inbox). Every durable fact is appended to
 * the session log first; memory follows the log.
 *
 * The handle's parts, each in its own file: what the drivers see (core.ts), the status and its
 * waiters (status.ts), waking the turn loop and resume's armed turn (waking.ts), `runMaintenance`
 * (maintenance.ts), the per-feature set-up and the one fold per event (setup.ts), the live folds
 * and read-only views (live-state.ts), approvals (approvals.ts). This file keeps the private
 * lifecycle flags (disposing, disposed, halted) that every public method checks.
 *
 * Over ~400 lines (532), knowingly for now: what is left here reads and writes those private flags
 * and the status cell together (dispose, parking, cancel), and so do the parts' views (one small
 * object per part whose methods reach those flags, instead of closures per agent: B6); moving
 * disposal or parking out first needs the flags in a small class of their own that both sides share.
 */
import { runMachine, type MachineRunner } from '../machines/lean-actor.js'
import { TurnlogError, type CancelCause, type EventDraft, type InboxTarget, type LogEvent, type ModelMessage, type SessionEvent, type UserMessage } from '../events/index.js'
import { checkMessageSize } from '../events/input-size.js'
import { turnMachine, type TurnContext, type TurnEvent } from '../machines/turn.js'
import type { TranscriptState } from '../reducers/transcript.js'
import { ownUsage, rollUpUsage, type UsageRollUp } from '../reducers/usage-tree.js'
import { applyDecision, openApprovalList, toBy, toDecision } from './approvals.js'
import type { BudgetMeter, BudgetStatus } from './budget.js'
import { AgentCore } from './core.js'
import { InboxDriver, type InboxHost } from './inbox-driver.js'
import { installHooks } from './install.js'
import { agentSnapshot, foldTranscript } from './live-state.js'
import { Maintenance, type MaintenanceControl } from './maintenance.js'
import { toUserMessage } from './messages.js'
import { checkHook } from './options-schema.js'
import { Persistence, type DecisionChannel } from './persistence.js'
import { applyAnswer, openInputList, type InputAnswerInput, type OpenInput } from './inputs.js'
import { resumesChildren, restoredStep, runningChildren, standsParked } from './restore.js'
import { reissues } from '../tools/types.js'
import { isSubagent } from './subagent-mark.js'
import { LiveChildren } from './children.js'
import { budgetMeter, installFold, wakeups } from './setup.js'
import { StatusCell, type StatusHost } from './status.js'
import { TurnLoop, type LoopControl } from './turn-driver.js'
import { Waking } from './waking.js'
import type { WakeupHost, Wakeups } from './wakeups.js'
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

export class TurnlogAgent extends AgentCore implements Agent {
  /** @internal `options.budget`'s live meter (agent/budget.ts), or null without a budget. */
  readonly budget: BudgetMeter | null = null
  /** @internal the turn machine's runner (restarted at idle after a driver defect). */
  turnActor: MachineRunner<TurnContext, TurnEvent>
  /** @internal the wakeups: pending schedules folded from the log, the one timer (agent/wakeups.ts). */
  readonly wakeups: Wakeups
  /** @internal the inbox machine, its logged splices and the public handle (agent/inbox-driver.ts). */
  readonly inboxDriver: InboxDriver
  /** The status and its waiters (agent/status.ts). */
  readonly #status: StatusCell
  /** Runs the turn machine (agent/turn-driver.ts). */
  readonly #turns: TurnLoop
  /** `runMaintenance` and its running task (agent/maintenance.ts). */
  readonly #maintenance: Maintenance
  #disposed = false
  #disposing = false
  /** The running step is parked by its own approvals (not only by a parked child). */
  #ownParked = false
  /** @internal running children (docs/spec/lifecycle.md §10; agent/children.ts): their approvals, their parking. */
  readonly children = new LiveChildren(() => this.#childrenChanged())
  readonly #unsubscribePlugins: Array<() => void>
  /** Forwards committed events to `options.store` (agent/persistence.ts). */
  readonly #persistence: Persistence | null = null
  /** Set when persistence failed: no new turn, no new input. */
  #halted: TurnlogError | null = null
  /** Waking the turn loop; resume's armed turn and held errors (agent/waking.ts). */
  readonly #waking: Waking

  constructor(options: AgentOptions) {
    super(options)
    this.#status = new StatusCell(new TurnlogAgent.#StatusView(this))
    this.#waking = new Waking(this, () => this.#turns)
    this.budget = budgetMeter(options, (err, where) => this.reportError(err, where), (n, p) => this.emit(n, p))
    this.wakeups = wakeups(options, new TurnlogAgent.#WakeupView(this), this.session.length > 0)
    const pending = installFold(this)
    // a crash while subagent calls (docs/spec/lifecycle.md §10) or calls of a re-issued tool (§12) ran
    const kids = this.lifecycle.openTurn !== null
      ? runningChildren(this.session.events, this.lifecycle,
        (name) => resumesChildren(options) && (options.tools ?? []).some((t) => isSubagent(t) && t.name === name),
        (name) => reissues(this.tools.get(name)))
      : null
    if (this.lifecycle.openTurn !== null && standsParked(this.lifecycle, this.approvalsState)) {
      this.restoreStep = restoredStep(this.session.events, this.lifecycle, this.approvalsState)
    } else if (kids !== null) {
      // a crash while subagent calls ran (docs/spec/lifecycle.md §10): resumeAgent left the step open, its calls re-attach their children
      this.restoreStep = restoredStep(this.session.events, this.lifecycle, this.approvalsState, kids)
    } else if (this.lifecycle.openTurn !== null) {
      throw new TurnlogError('INVALID_OPTION', 'the prefix ends inside an open turn: repair it first', {
        field: 'prefix', seq: this.session.length - 1, sessionId: this.sessionId,
      })
    }
    this.turnActor = runMachine(turnMachine, { lastTurn: this.lifecycle.lastTurn, maxStepsPerTurn: this.maxStepsPerTurn }, options.inspect)
    this.inboxDriver = new InboxDriver(new TurnlogAgent.#InboxView(this), pending, options.inspect)
    this.#turns = new TurnLoop(this, new TurnlogAgent.#LoopView(this))
    this.#maintenance = new Maintenance(this, new TurnlogAgent.#MaintenanceView(this))
    // after every check that can throw, so a refused agent never takes the store's lock
    if (options.store || options.storeWriter) {
      this.#persistence = new Persistence(this, { store: options.store, writer: options.storeWriter })
    }

    this.#unsubscribePlugins = installHooks(this, options, this.retry)
  }

  // ---- What the parts see of the agent: one small object each, whose methods reach the private
  // state, instead of an object of closures per part (an idle agent's memory, benchmark B6)

  static readonly #StatusView = class implements StatusHost {
    constructor(readonly a: TurnlogAgent) {}
    quiet(): boolean { return this.a.#isQuiet() }
    disposed(): boolean { return this.a.#disposed }
    notify(status: AgentStatus): void { this.a.emit('agent/status', { status }) }
    // 'parked' settles only while a person owes something (docs/spec/lifecycle.md §9): a step
    // restored parked whose decisions are already in the log goes on in a moment, and so does its parent
    holding(): boolean { return this.a.claimed.deliverable() || (this.a.#status.value === 'parked' && !this.a.#owed()) }
  }

  static readonly #WakeupView = class implements WakeupHost {
    constructor(readonly a: TurnlogAgent) {}
    get sessionId(): string { return this.a.sessionId }
    get timers(): Timers { return this.a.timers }
    get newId(): () => string { return this.a.newId }
    now(): number { return this.a.now() }
    busy(): boolean { return this.a.lifecycle.openTurn !== null }
    canFire(): boolean { const a = this.a; return !a.#disposing && !a.#disposed && a.#halted === null && !a.#waking.armed }
    append(draft: EventDraft): LogEvent { return this.a.append(draft) }
    send(m: UserMessage, target: 'next-turn' | 'next-step', wake: boolean): string { return this.a.send(m, target, wake) }
    reportError(error: unknown, where: string): void { this.a.reportError(error, where) }
  }

  static readonly #InboxView = class implements InboxHost {
    constructor(readonly a: TurnlogAgent) {}
    get sessionId(): string { return this.a.sessionId }
    get newId(): () => string { return this.a.newId }
    append(draft: EventDraft): LogEvent { return this.a.append(draft) }
    emit(name: HookName, payload: unknown): void { this.a.emit(name, payload) }
    assertUsable(): void { this.a.#assertUsable() }
  }

  static readonly #LoopView = class implements LoopControl {
    constructor(readonly a: TurnlogAgent) {}
    setStatus(s: AgentStatus): void { this.a.#status.set(s) }
    settleIdle(): void { this.a.#status.settle() }
    opening(): Promise<void> | null | undefined { return this.a.#persistence?.opening }
    winding(): boolean { return this.a.#disposing || this.a.#halted !== null }
  }

  static readonly #MaintenanceView = class implements MaintenanceControl {
    constructor(readonly a: TurnlogAgent) {}
    assertUsable(): void { this.a.#assertUsable() }
    idle(): boolean { return this.a.#status.value === 'idle' }
    winding(): boolean { const a = this.a; return a.#disposing || a.#disposed || a.#halted !== null }
    wake(): void { this.a.#waking.now() }
    settle(): void { this.a.#status.settle() }
  }

  // ---- Public handle

  /** The inbox's public handle (built on first use: agent/inbox-driver.ts). */
  get inbox(): InboxHandle {
    return this.inboxDriver.handle
  }

  get status(): AgentStatus {
    return this.#status.value
  }

  get events(): readonly SessionEvent[] {
    // Extension events (plugin-registered types) are in the log too; see Agent.events.
    return this.session.events as readonly SessionEvent[]
  }

  send(message: MessageInput, target: InboxTarget, wake: boolean): string {
    this.#assertUsable()
    const m = toUserMessage(message, this.newId)
    // the one input limit, as on every store's send and decision (decision record "input-size-limit" (docs/decisions/ in the repository))
    checkMessageSize(m, 'message', this.sessionId)
    // Waking input never joins an aborted turn: it is re-targeted to next-turn and latched.
    const aborting = this.#status.value === 'running' && this.abort?.signal.aborted === true
    const t = wake && aborting ? 'next-turn' : target
    this.splice(t, this.inboxDriver.list(t).length, 0, [m])
    // docs/spec/lifecycle.md §9, §10: a steer supersedes the open approvals, its running children's too (never approves them) unless told to queue
    if (wake && t === 'next-step' && this.options.approvals?.onSteer !== 'queue') this.supersedeApprovals()
    // docs/spec/lifecycle.md §11: and its open input rounds, its running children's too (answered `cancel` `by: superseded`) unless told to queue
    if (wake && t === 'next-step') this.supersedeInputs()
    if (wake) this.#waking.now(m.id)
    return m.id
  }

  /** @internal Denies every open approval `by: superseded`, this agent's and its running children's (a steer). */
  supersedeApprovals(): number {
    return (this.approvalRun?.supersede() ?? 0) + this.children.supersede()
  }

  /** @internal Answers every open round `cancel` `by: superseded`, this agent's and its running children's (a steer). */
  supersedeInputs(): number {
    if (this.options.inputs?.onSteer === 'queue') return 0
    return (this.approvalRun?.supersedeInputs?.() ?? 0) + this.children.supersedeInputs()
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
    this.#waking.reportDeferred()
    const wasIdle = this.#status.value === 'idle'
    const woke = this.#waking.queued()
    // then the wakeups that came due while no process ran (docs/spec/lifecycle.md §10), after the resume turn
    // opened (L13), so with a turn open they follow `whenBusy`
    this.wakeups.release()
    this.wakeups.fireDue()
    return woke || (wasIdle && this.#status.value !== 'idle')
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
   * @internal Resume (replay/resume.ts, docs/spec/lifecycle.md §8): the next turn this agent opens from idle,
   * whatever wakes it, is `turn/start {cause: {kind: 'resume', of}}`, and its first proposal owes a
   * request; `wake()` opens it even with nothing queued. Call before the first turn only.
   */
  armResume(of: number, maxResumeRuns?: number): void {
    this.#waking.arm(of, maxResumeRuns)
  }

  /** @internal The limit the resume turn records on its cause (docs/spec/lifecycle.md §8; `armResume`). */
  get resumeLimit(): number | null {
    return this.#waking.limit
  }

  /**
   * @internal Resume (replay/resume-plan.ts): `agent/error` to report when the owed work starts
   * (`wake()` or the first waking delivery), so listeners added with `agent.on` after
   * `resumeAgent({autoStart: false})` resolved hear it too.
   */
  deferReport(error: unknown, where: string): void {
    this.#waking.defer(error, where)
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
    return this.#status.whenIdle()
  }

  whenSettled(): Promise<'idle' | 'parked'> {
    return this.#status.whenSettled()
  }

  usage(): UsageRollUp {
    return rollUpUsage(ownUsage(this.session.events), this.children.usage())
  }

  approvals(): OpenApproval[] {
    return [...openApprovalList(this), ...this.children.approvals()]
  }

  async decide(approvalId: string, decision: ApprovalDecisionInput, options: { by?: { kind: 'user'; id?: string } } = {}): Promise<void> {
    this.#assertUsable()
    // a running child's approval is decided in the child (logged there; docs/spec/lifecycle.md §10)
    const inChild = typeof approvalId === 'string' && !Object.hasOwn(this.approvalsState.byId, approvalId) ? this.children.owner(approvalId) : undefined
    if (inChild !== undefined) return inChild.decide(approvalId, decision, options)
    applyDecision(this, approvalId, toDecision(decision), toBy(options?.by))
    await this.flush()
  }

  inputs(): OpenInput[] {
    return [...openInputList(this), ...(this.children.inputs() as OpenInput[])]
  }

  async answer(requestId: string, answer: InputAnswerInput, options: { by?: { kind: 'user'; id?: string } } = {}): Promise<void> {
    this.#assertUsable()
    // a running child's round is answered in the child (logged there; docs/spec/lifecycle.md §10, §11)
    const inChild = typeof requestId === 'string' && !Object.hasOwn(this.inputsState.byId, requestId) ? this.children.inputOwner(requestId) : undefined
    if (inChild?.answer !== undefined) return inChild.answer(requestId, answer, options)
    await applyAnswer(this, requestId, answer, options?.by)
    await this.flush()
  }

  /** @internal The store's write handle has a decision side channel (persistence opened it). */
  onDecisionChannel(channel: DecisionChannel): void {
    this.claimed.attach(channel)
  }

  /** @internal Releases the `whenSettled` waiters the status satisfies (claimed-decisions.ts). */
  settleStatus(): void {
    this.#status.settle()
  }

  /** @internal The running step parks (only decisions are owed) or goes on (docs/spec/lifecycle.md §9). */
  setParked(parked: boolean): void {
    const e = { type: parked ? 'PARK' : 'UNPARK' } as const
    this.turnActor.send(e)
    this.stepActor?.send(e)
    this.#ownParked = parked
    this.#status.set(parked || this.children.anyParked ? 'parked' : 'running')
    this.claimed.keepAlive(parked)
    if (parked) this.#status.settle()
  }

  /**
   * @internal Parked and settled: something is owed to a person (its own open requests, or a
   * running child's). `whenSettled()` resolves 'parked' exactly then.
   */
  owesPerson(): boolean {
    return this.#status.value === 'parked' && this.#status.settledParked
  }

  /**
   * Something is owed to a person: an approval of this session the log holds open, or a running
   * child that owes one, or an input round the log holds open (docs/spec/lifecycle.md §9–§11).
   */
  #owed(): boolean {
    return this.approvalsState.open.length > 0 || this.inputsState.open.length > 0 || this.children.owesPerson()
  }

  /** @internal True when the agent is parked only because a running child is (docs/spec/lifecycle.md §10). */
  get parkedByChild(): boolean {
    return this.#status.value === 'parked' && !this.#ownParked
  }

  /** A running child parked or went on: the parent's status follows (its own parking aside). */
  #childrenChanged(): void {
    if (this.#status.value === 'idle' || this.#ownParked || this.#disposed) return
    const parked = this.children.anyParked
    this.#status.set(parked ? 'parked' : 'running')
    if (parked) this.#status.settle()
  }

  cancel(cause: CancelCause = { kind: 'user' }, options: CancelOptions = {}): void {
    // disposed: nothing runs any more, and a parked one's session stays parked (docs/spec/lifecycle.md §9): a
    // late cancel decides nothing and logs nothing (its log is closed)
    if (this.#status.value === 'idle' || this.#disposed) return
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

  /**
   * Resolves when every event committed so far is durable in `options.store` (at once without a
   * store), its running children's included (docs/spec/lifecycle.md §10: a process that exits after a parent's
   * flush leaves each child's log as complete as the parent's).
   */
  async flush(): Promise<void> {
    await Promise.all([this.#persistence?.flush(), this.children.flush()])
  }

  /** What a tool body waits for (R10): this session's events durable; null when they are (or no store). @internal */
  durableWait(): Promise<void> | null {
    return this.#persistence?.pending() ?? null
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return
    // docs/spec/lifecycle.md §9: a parked agent is not cancelled; the session stays parked (the log says what is owed)
    if (this.#status.value === 'parked' && this.#ownParked) return this.#disposeParked()
    if (this.#status.value === 'parked' && this.children.allParked) return this.#disposeParkedFamily()
    this.#disposing = true
    this.wakeups.close()
    this.cancel({ kind: 'disposed' })
    // A maintenance task is told at once (its signal aborts), then awaited within the grace period.
    const maintained = this.#maintenance.abort(this.cancelGraceMs)
    // called from the agent/status listener as the status became running: the loop starts once
    // the listeners return, one microtask from now
    if (this.#turns.waking) await Promise.resolve()
    await this.#turns.running
    await maintained()
    this.#disposed = true
    for (const off of this.#unsubscribePlugins) off()
    this.session.close()
    await this.#persistence?.close()
    this.#status.settle()
    this.#throwIfPersistenceFailed()
  }

  /**
   * Parked because every running child is (docs/spec/lifecycle.md §10): each child is disposed parked (its log
   * keeps its `step/parked` and open approvals), then this agent as a parked one: its subagent
   * calls stay running in its log, and a resumed parent re-attaches the children. Nothing is
   * cancelled, decided or closed. A child's failed dispose is rethrown after this agent's.
   */
  async #disposeParkedFamily(): Promise<void> {
    this.#disposing = true
    let failed: { error: unknown } | null = null
    try {
      await this.children.disposeAll()
    } catch (error) {
      failed = { error }
    }
    await this.#disposeParked()
    if (failed !== null) throw failed.error
  }

  async #disposeParked(): Promise<void> {
    this.#disposing = true
    this.claimed.close()
    this.approvalRun?.detach()
    this.#disposed = true
    for (const off of this.#unsubscribePlugins) off()
    this.session.close()
    await this.#persistence?.close()
    this.#status.settle()
    this.#throwIfPersistenceFailed()
  }

  /**
   * `dispose()` flushes, so it rejects as `flush()` does: a persistence that failed (the store
   * refused the session, an fsync failed) is never silent (issue: SESSION_EXISTS seen only by flush).
   */
  #throwIfPersistenceFailed(): void {
    const failed = this.#persistence?.failed
    if (failed) throw failed
  }

  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T> | T): Promise<T> {
    return this.#maintenance.run(task)
  }

  history(): readonly ModelMessage[] {
    return this.historyState.messages.slice()
  }

  transcript(): TranscriptState {
    return foldTranscript(this.session.events)
  }

  snapshot(): AgentSnapshot {
    return agentSnapshot(this, this.#status.value)
  }

  budgets(): BudgetStatus[] {
    return this.budget?.status() ?? []
  }

  /** @internal Persistence failed: cancel the open turn (keeping the inbox), start nothing new. */
  halt(error: TurnlogError): void {
    if (this.#halted) return
    this.#halted = error
    this.cancel({ kind: 'hook', reason: `persistence failed: ${error.code}` }, { keepInbox: true })
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
    return this.#status.value === 'idle' && this.#turns.running === null && !this.inboxDriver.latchedWork() && !this.turnActor.getSnapshot().matches('maintaining')
  }
}
