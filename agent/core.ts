/**
 * What the drivers see of an agent: the options read once, the session log, the live projections
 * and the running turn's and step's handles, with the primitives every driver uses (append, emit,
 * report, wait within the grace period). agent.ts builds the public `Agent` handle on top of it;
 * the split keeps the handle's private state (status, waking, maintenance, dispose) apart from the
 * state the drivers and plugins read and write.
 */
import type { MachineRunner } from '../machines/lean-actor.js'
import { Session, type EventDraft, type LogEvent, type RequestConfig, type ToolSpec, type UserMessage } from '../events/index.js'
import type { StepContext, StepEvent } from '../machines/step.js'
import { approvalsReducer } from '../reducers/approvals.js'
import { inputsReducer } from '../reducers/inputs.js'
import { historyReducer } from '../reducers/history.js'
import { lifecycleReducer } from '../reducers/lifecycle.js'
import { toolSpec } from '../tools/define.js'
import type { AnyTool, ApprovalRun } from '../tools/types.js'
import { ClaimedDecisions } from './claimed-decisions.js'
import type { GracePeriod } from './grace.js'
import { HookRegistry } from './hooks.js'
import { randomId } from './ids.js'
import { assertModel, checkLimits } from './options.js'
import { AGENT_OPTION_FIELDS, checkOptionFields } from './options-schema.js'
import type { RestoredStep } from './restore.js'
import { realTimers, resolveRetry, type ResolvedRetry } from './retry-policy.js'
import type { StepRun } from './step-driver.js'
import type { AgentOptions, HookName, Timers } from './types.js'
import { scheduleWakeupTool } from './wakeup-tool.js'
import type { Wakeups } from './wakeups.js'

export abstract class AgentCore {
  readonly sessionId: string
  /** @internal */ readonly session: Session
  /** @internal */ readonly hooks = new HookRegistry()
  /** @internal */ readonly options: AgentOptions
  /** @internal */ readonly timers: Timers
  /** @internal */ readonly tools: ReadonlyMap<string, AnyTool>
  /** @internal */ readonly toolSpecs: readonly ToolSpec[]
  /** @internal */ readonly baseConfig: RequestConfig
  /** @internal */ readonly newId: () => string
  /** @internal */ readonly maxParallelToolCalls: number
  /** @internal `options.cancelGraceMs`, checked. */
  readonly cancelGraceMs: number
  /** @internal `options.maxStepsPerTurn`, checked. */
  readonly maxStepsPerTurn: number
  /** @internal the retry policy, or null with `retry: false`. */
  readonly retry: ResolvedRetry | null
  /** @internal the live projections the driver reads (O(1) per event). */
  readonly historyState = historyReducer.initial()
  /** @internal */ readonly lifecycle = lifecycleReducer.initial()
  /** @internal the approvals of the log (docs/spec/lifecycle.md §9), folded live. */
  readonly approvalsState = approvalsReducer.initial()
  /** @internal the input rounds of the log (docs/spec/lifecycle.md §11), folded live. */
  readonly inputsState = inputsReducer.initial()
  /** @internal `options.inputs`. */
  get inputOptions(): AgentOptions['inputs'] {
    return this.options.inputs
  }
  /** @internal the running step's approvals (tools/approval-gate.ts), or null. */
  approvalRun: ApprovalRun | null = null
  /**
   * @internal the id of a new request for a call, when a re-run must reuse a recorded one
   * (turnlog/evals: the golden's approval ids, so that an unchanged re-run logs the same request);
   * else the id source draws it.
   */
  approvalIdFor: ((turn: number, step: number, callId: string) => string | undefined) | null = null
  /** @internal likewise the id of a call's input round (docs/spec/lifecycle.md §11: the golden's request ids). */
  inputIdFor: ((turn: number, step: number, callId: string, round: number) => string | undefined) | null = null
  /** @internal decisions through the store's side channel (agent/claimed-decisions.ts). */
  readonly claimed = new ClaimedDecisions(this)
  /** @internal a parked step of the prefix, restored at the first wake (docs/spec/lifecycle.md §9; agent/restore.ts). */
  restoreStep: RestoredStep | null = null
  /** @internal the wakeups: pending schedules folded from the log, the one timer (agent/wakeups.ts). */
  abstract readonly wakeups: Wakeups
  /** @internal the open turn's cancel signal. */
  abort: AbortController | null = null
  /** @internal the open turn's cancel grace period (agent/grace.ts). */
  grace: GracePeriod | null = null
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

  /** Checks the options (throws INVALID_OPTION before anything is created) and opens the session. */
  constructor(options: AgentOptions) {
    assertModel(options)
    checkOptionFields(options, AGENT_OPTION_FIELDS, 'createAgent')
    this.options = options
    this.timers = { ...realTimers, ...options.timers }
    this.newId = options.ids ?? randomId
    const limits = checkLimits(options)
    this.maxStepsPerTurn = limits.maxStepsPerTurn
    this.maxParallelToolCalls = limits.maxParallelToolCalls
    this.cancelGraceMs = limits.cancelGraceMs
    const tools = limits.tools
    // the built-in scheduleWakeup tool (docs/spec/lifecycle.md §10), when asked for (agent/wakeup-tool.ts)
    const wt = options.wakeups?.tool
    if (wt) scheduleWakeupTool(this, wt === true ? {} : wt, tools as Map<string, AnyTool>)
    this.tools = tools
    this.toolSpecs = [...tools.values()].map(toolSpec)
    this.baseConfig = { model: options.model.info?.name ?? 'model', ...options.config } as RequestConfig
    this.retry = options.retry === false ? null : resolveRetry(options.retry)
    this.sessionId = options.sessionId ?? randomId()
    this.session = new Session({
      id: this.sessionId,
      clock: options.clock,
      prefix: options.prefix,
      check: { maxStepsPerTurn: this.maxStepsPerTurn, maxRetries: this.retry?.maxRetries ?? 5, maxResumeRuns: options.maxResumeRuns ?? 3 },
      onObserverError: (error) => this.reportError(error, 'subscribe'),
    })
    this.resumed = this.session.length > 0
  }

  // ---- Internal primitives (used by the drivers and plugins)

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

  /** @internal */
  reportError(error: unknown, where: string): void {
    const turn = this.lifecycle.openTurn ?? undefined
    this.hooks.emit('agent/error', { error, where, turn }, () => {})
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
}
