/**
 * The public types of the agent: options, hook payloads and decisions, live events. Each hook's
 * JSDoc says what a listener may return and what happens when it throws.
 * `AgentOptions`, `HookMap` and `Agent` document every option, hook and method in one place (the
 * options schema is typed against them); the hook payloads (hook-payloads.ts), the approval types
 * (approval-types.ts) and the feature types (budget.ts, wakeup-types.ts) live in their own files.
 * Over ~400 lines (467), knowingly: most of it is the doc comment of every public method and option,
 * which a user reads in one place; `Agent` and `AgentOptions` are the next seam to split.
 */
import type { UsageRollUp } from '../reducers/usage-tree.js'
import type {
  CancelCause, EventDraft, Failure, InboxTarget, LogEvent, RequestConfig, SessionEvent, StepOutcome, StreamChunk, ToolSpec, TurnlogError, UserMessage,
} from '../events/index.js'
import type { TranscriptState } from '../reducers/transcript.js'
import type { LifecycleState } from '../reducers/lifecycle.js'
import type { ModelAdapter } from '../models/index.js'
import type {
  AnyTool, ExecutePayload, PostExecuteDecision, PostExecutePayload, PreExecuteDecision, PreExecutePayload,
} from '../tools/types.js'
import type { InspectionEvent } from 'xstate'
import type { Next } from './hooks.js'
import type { WakeupHandle, WakeupOptions } from './wakeup-types.js'
import type { LogStore, LogWriter } from '../stores/types.js'
import type { BudgetOptions, BudgetStatus, BudgetWarning } from './budget.js'


export type { ApprovalDecisionInput, ApprovalOptions, OpenApproval } from './approval-types.js'
import type { ApprovalDecisionInput, ApprovalOptions, OpenApproval } from './approval-types.js'

/** What `followup`, `steer`, `inject` and `send` accept: text, or a user message (id and source optional). */
export type MessageInput =
  | string
  | { id?: string; role?: 'user'; content: UserMessage['content']; source?: UserMessage['source'] }

export interface RetryOptions {
  /** Retries per failure chain. Default 5. */
  maxRetries?: number
  /** First delay. Default 500 ms, doubling per attempt. */
  baseDelayMs?: number
  /** Delay cap, also for `Retry-After`. Default 10 s. */
  maxDelayMs?: number
  /** Relative jitter, 0..1. Default 0.1. */
  jitter?: number
  /** Failure codes that are retried. Default RATE_LIMIT, SERVER, TIMEOUT, TRANSPORT, EMPTY_RESPONSE. */
  retryOn?: readonly string[]
}

/** Time sources, injectable so tests and re-execution never sleep. */
export interface Timers {
  /** Resolves after `ms`, or rejects/resolves early when `signal` aborts (the caller checks `signal.aborted`). */
  sleep(ms: number, signal: AbortSignal): Promise<void>
  /** In [0, 1): jitter. */
  random(): number
  /** Calls `fn` once after `ms` (wakeups, grace periods); returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): unknown
  /** Cancels a `setTimeout` that has not fired (a handle already fired or cleared is ignored). */
  clearTimeout(handle: unknown): void
}

/**
 * What a plugin may use beyond the public `Agent` handle: exactly these members, no other internal
 * of the driver. `createAgent`'s agent (`TurnlogAgent`) provides them; `AgentPlugin.install`
 * receives the agent typed `Agent & PluginHost`, so a plugin needs no cast and no runtime probe.
 * Everything here reads live state (no copies) and is synchronous.
 */
export interface PluginHost {
  /**
   * The options the agent was created with, as given (`model`, `system`, `config`, …). Read only:
   * changing them after creation has no defined effect.
   */
  readonly options: AgentOptions
  /**
   * The lifecycle position folded from the log, updated before `subscribe` observers run: the open
   * turn and step (`openTurn`, `openStep`, `lastTurn`), the open compaction bracket
   * (`openCompaction`), the last logged `request/header` (`header`), the pending tool calls. O(1)
   * to read; never mutate it.
   */
  readonly lifecycle: Readonly<LifecycleState>
  /** The tool schemas the agent sends when no `system-prompt/assemble` listener changes them. */
  readonly toolSpecs: readonly ToolSpec[]
  /** The base call configuration (`{ model: model.info?.name ?? 'model', ...options.config }`). */
  readonly baseConfig: RequestConfig
  /**
   * A fresh id from the agent's id source (`options.ids`, default `crypto.randomUUID`). Use it for
   * every id a plugin logs (message ids, compaction ids): re-execution serves ids from the log
   * through this source. Throws only if `options.ids` throws.
   */
  readonly newId: () => string
  /**
   * Appends one event to the session log (seq and time are assigned) and returns the committed,
   * frozen event; the agent's projections and then `subscribe` observers see it before it returns.
   * Throws a coded `TurnlogError` and changes nothing when the event is refused: `INVARIANT` (it
   * breaks an L invariant at this position, e.g. a `compaction/prune` not directly followed by its
   * replacing `tool/result`), `INVALID_EVENT` / `UNKNOWN_EVENT_TYPE` (schema), `NOT_LOSSLESS`,
   * `REENTRANT_APPEND` (called from a `subscribe` observer), `SESSION_CLOSED` (disposed agent, or a
   * re-execution that stopped at a divergence). Append only from the agent's own hooks or from
   * `runMaintenance`, where no step is writing; a plugin that appends elsewhere races the driver.
   */
  append(draft: EventDraft): LogEvent
  /**
   * Reports a non-fatal problem as the live `agent/error` event (`{error, where, turn}`, `turn` =
   * the open turn). Nothing is logged and nothing else happens; an `agent/error` listener that
   * throws is ignored, so this never throws.
   */
  reportError(error: unknown, where: string): void
}

/** A plugin (such as compaction) installs hooks when the agent is created. */
export interface AgentPlugin {
  name: string
  /**
   * Called once by `createAgent`, after `options.hooks` are registered and before the transient
   * retry policy (so a plugin's listeners run inside the app's creation-time listeners and
   * decide before the retry policy). May return an uninstall function, called by `dispose()`.
   * A throw propagates out of `createAgent`.
   */
  install(agent: Agent & PluginHost): void | (() => void)
}

export interface AgentOptions {
  model: ModelAdapter
  tools?: readonly AnyTool[]
  /** The base system prompt (`system-prompt/assemble` may change it per request). */
  system?: string
  /** The base call configuration (`agent/request` may change it per request). Default `{ model: model.info?.name ?? 'model' }`. */
  config?: Partial<RequestConfig>
  sessionId?: string
  /**
   * Persist the log: every committed event is appended to session `sessionId` of this store, in
   * batches; `agent.flush()` resolves when everything so far is durable. The session is created if
   * it does not exist; an existing empty one is used; one holding events is refused
   * (`SESSION_EXISTS`: that is `resumeAgent`'s job). A store failure (open, append, fsync) is
   * reported as `agent/error`, makes `flush()` reject with the coded error, cancels the open turn
   * (`{kind:'hook', reason:'persistence failed: CODE'}`, inbox kept) and refuses new input
   * (`PERSISTENCE_FAILED`). Default: none (the log lives in memory only).
   */
  store?: LogStore
  /**
   * An already open write handle to persist to (resumeAgent passes the one it repaired under);
   * its length must equal the prefix length. The agent owns it and closes it on `dispose()`.
   */
  storeWriter?: LogWriter
  /** Events already in the log (resume, fork); turn numbering continues after them. */
  prefix?: readonly LogEvent[]
  maxParallelToolCalls?: number
  maxStepsPerTurn?: number
  /**
   * The longest chain of resume turns (docs/spec/lifecycle.md §8) the log may hold (L13, checked on append).
   * `resumeAgent` re-runs an interrupted turn only while the chain is shorter. Default 3.
   */
  maxResumeRuns?: number
  /** The built-in transient retry policy, or `false` to turn it off. */
  retry?: RetryOptions | false
  plugins?: readonly AgentPlugin[]
  /** A compaction plugin, e.g. `basicCompaction({ contextWindow: 128_000 })` from `turnlog/compaction`.
   * Installed like a plugin, before `plugins`. */
  compaction?: AgentPlugin
  /** Epoch milliseconds for `time`. Default `Date.now`. */
  clock?: () => number
  /** Message ids. Default `crypto.randomUUID`. */
  ids?: () => string
  timers?: Partial<Timers>
  /**
   * How long after a cancel (or `dispose()`) the driver still waits for user code that has not
   * settled: a hook (`agent/pre-step`, `system-prompt/assemble`, `agent/request`, `llm/stream`,
   * `agent/request-error`, `agent/turn-stopping`, `tools/pre-execute`, `tools/execute`,
   * `tools/post-execute`) or a tool body that ignores its signal. Every hook and tool gets the
   * turn's `AbortSignal`; what is still pending when this period (measured with `timers`) runs out
   * is abandoned: the step and turn end `aborted`, an abandoned call gets its `tool/result`
   * `ABORTED`, `agent/error` reports `ABANDONED`, and a late settlement is ignored (reported as
   * `LATE_SETTLEMENT`). So `cancel()` → `whenIdle()` and `dispose()` always return. Default 5000.
   */
  cancelGraceMs?: number
  /** Listeners registered at creation, same as `agent.on`. */
  hooks?: Partial<{ [K in keyof HookMap]: HookMap[K] | readonly HookMap[K][] }>
  /**
   * How the driver checks "model-visible means logged" (R3) before each model call.
   * `'log'` (default): system, tools and config equal the last logged `request/header` and the
   * messages are the live surface projection at this seq. `'full'`: also re-folds the whole log
   * and compares message by message (O(log) per request: for tests and fuzzers).
   */
  checkRequests?: 'log' | 'full'
  /** Wakeups (docs/spec/lifecycle.md §10): the timer, the built-in `scheduleWakeup` tool. */
  wakeups?: WakeupOptions
  /** XState inspection of the turn, step and inbox actors (visualisers, coverage tests). */
  inspect?: (event: InspectionEvent) => void
  /** Approvals while parked (docs/spec/lifecycle.md §9): what a steer does to open requests. */
  approvals?: ApprovalOptions
  /** Input rounds (docs/spec/lifecycle.md §11): what a steer does to open rounds, the cap of a round's state. */
  inputs?: InputOptions
  /**
   * Budgets (docs/spec/lifecycle.md §10): one or a list of `{ inputTokens?, outputTokens?, totalTokens?,
   * costUsd?, toolCalls?, scope: 'turn' | 'session', price?, warnAt? }`. Checked from the usage
   * derived from the log before each request: a request that would start with a limit reached is
   * not made, and the turn ends `{kind: 'budget', which, scope, limit, used}` (its claimed input
   * stays consumed, as for `blocked`). `agent/budget` is emitted when a limit crosses `warnAt`.
   * Give the same budget to `resumeAgent` and `reexecute`: the log records the ends, not the budget.
   */
  budget?: BudgetOptions | readonly BudgetOptions[]
}

export type { AssemblePayload, AssembleResult, PreStepDecision, ProposalKind, RequestErrorDecision, RequestPayload, StreamPayload } from './hook-payloads.js'
import type { AssemblePayload, AssembleResult, PreStepDecision, ProposalKind, RequestErrorDecision, RequestPayload, StreamPayload } from './hook-payloads.js'

// Hook payloads that carry the agent (the others are in hook-payloads.ts)

export interface PreStepPayload {
  turn: number
  /** The step that would start. */
  step: number
  /** The claimed batch: next-step items, then (first proposal) the next-turn prompt. */
  messages: readonly UserMessage[]
  proposal: ProposalKind
  /** True in the first proposal of a retry turn (a request is owed even with no messages). */
  retry: boolean
  /**
   * True in the first proposal of a resume turn (`turn/start {cause: {kind: 'resume'}}`, lifecycle
   * §8): the interrupted turn's input is re-requested; a request is owed even with no messages.
   * A listener may reject it like any proposal.
   */
  resume: boolean
  signal: AbortSignal
  agent: Agent
}

export interface RequestErrorPayload {
  turn: number
  step: number
  failure: Failure
  /** `llm/retry` events already written in this failure chain. */
  retries: number
  signal: AbortSignal
  agent: Agent
}

export interface TurnStoppingPayload { turn: number; step: number; outcome: StepOutcome; signal: AbortSignal; agent: Agent }


/** Every hook with its listener signature. */
export interface HookMap {
  /**
   * Waterfall around entering the claimed batch. Return `next()` (enter as proposed),
   * `{kind:'enter', messages}` (enter other messages; `[]` ends a first proposal `completed`) or
   * `{kind:'reject'}` (the claimed batch stays removed, the turn ends `blocked`).
   * Throwing ends the turn `error {HOOK_ERROR}` and emits `agent/error`; the agent goes on.
   */
  'agent/pre-step': (p: PreStepPayload, next: Next<PreStepPayload, PreStepDecision>) => PreStepDecision | Promise<PreStepDecision>
  /**
   * Waterfall: return the system prompt and tool schemas for this request (default: unchanged).
   * Throwing fails the step `HOOK_ERROR` and ends the turn `error` (not offered to request-error).
   */
  'system-prompt/assemble': (p: AssemblePayload, next: Next<AssemblePayload, AssembleResult>) => AssembleResult | Promise<AssembleResult>
  /**
   * Waterfall over the call configuration (model, temperature, max tokens…); never the messages.
   * Throwing fails the step `HOOK_ERROR` and ends the turn `error`.
   */
  'agent/request': (p: RequestPayload, next: Next<RequestPayload, RequestConfig>) => RequestConfig | Promise<RequestConfig>
  /**
   * Waterfall around the model call: return `next()`'s stream, or a stream that wraps it.
   * Throwing before returning a stream fails the step `HOOK_ERROR`; a wrapper that throws while
   * streaming is a stream failure like an adapter's.
   */
  'llm/stream': (p: StreamPayload, next: Next<StreamPayload, AsyncIterable<StreamChunk>>) => AsyncIterable<StreamChunk> | Promise<AsyncIterable<StreamChunk>>
  /**
   * Waterfall after a failed step's `step/end`: return `{kind:'retry'}` to end the turn `error`
   * and open a fresh retry turn, or `next()` / `undefined` to let the failure stand. A cancel wins
   * over a retry. Throwing leaves the failure terminal and emits `agent/error`.
   * Order: listeners run in registration order (creation-time `hooks`, plugins, then `agent.on`,
   * whenever called); the built-in transient retry policy is always the innermost, asked last
   * (only when every listener before it called `next()`).
   */
  'agent/request-error': (p: RequestErrorPayload, next: Next<RequestErrorPayload, RequestErrorDecision>) => RequestErrorDecision | Promise<RequestErrorDecision>
  /**
   * Serial checkpoint before a turn completes: listeners may `steer` or `inject`; pending next-step
   * input then continues the turn. Throwing ends the turn `error {HOOK_ERROR}`.
   */
  'agent/turn-stopping': (p: TurnStoppingPayload) => void | Promise<void>
  /** Waterfall before a tool body: `allow`, `deny {reason}` or `ask`. Runs serially in model order. */
  'tools/pre-execute': (p: PreExecutePayload, next: Next<PreExecutePayload, PreExecuteDecision>) => PreExecuteDecision | Promise<PreExecuteDecision>
  /** Waterfall around a tool body; return `next()`'s output or another output. A throw is a `TOOL_ERROR` result. */
  'tools/execute': (p: ExecutePayload, next: Next<ExecutePayload, unknown>) => unknown
  /** Waterfall after a call settled, in model order: `accept` (with `additionalContexts`) or `block {feedback}`. */
  'tools/post-execute': (p: PostExecutePayload, next: Next<PostExecutePayload, PostExecuteDecision>) => PostExecuteDecision | Promise<PostExecuteDecision>
  // Live events (emit mode): observers only; a throw is reported as `agent/error`, never breaks the agent.
  'agent/status': (e: { status: AgentStatus }) => void
  /** A new approval request (docs/spec/lifecycle.md §9); the status becomes `parked` when only decisions are owed. */
  'agent/approval': (e: { approval: OpenApproval }) => void
  /** A new input round (docs/spec/lifecycle.md §11); the status becomes `parked` when only people are owed. */
  'agent/input': (e: { input: OpenInput }) => void
  'agent/inbox/spliced': (e: { target: InboxTarget; start: number; removedCount: number; inserted: readonly UserMessage[]; outcome?: 'canceled' }) => void
  'agent/inbox/inserted': (e: { target: InboxTarget; message: UserMessage }) => void
  'agent/inbox/discarded': (e: { target: InboxTarget; message: UserMessage; outcome: 'canceled' }) => void
  'agent/inbox/claimed': (e: { message: UserMessage; turn: number }) => void
  'agent/error': (e: { error: unknown; where: string; turn?: number }) => void
  'agent/assistant-stream': (e: { turn: number; step: number; chunk: StreamChunk }) => void
  /** A budget limit crossed its `warnAt` fraction (once per crossing; `options.budget`). */
  'agent/budget': (e: BudgetWarning) => void
}

export type HookName = keyof HookMap

/** Readonly views of the two pending lists, plus the inbox edits. Edits never wake the agent. */
export interface InboxHandle {
  readonly nextTurn: readonly UserMessage[]
  readonly nextStep: readonly UserMessage[]
  /** Adds a message at the end of `target`'s list; returns its id. */
  append(target: InboxTarget, m: MessageInput): string
  /** Adds a message at the front of `target`'s list (claimed first); returns its id. */
  prepend(target: InboxTarget, m: MessageInput): string
  /** Swaps in place in whichever list holds `id`; false if not pending. */
  replace(id: string, m: MessageInput): boolean
  /** Removes a pending message; false if not pending. */
  remove(id: string): boolean
  /** The general form, with `Array.prototype.splice` coordinates; returns the removed messages. */
  splice(target: InboxTarget, start: number, deleteCount?: number, ...messages: MessageInput[]): UserMessage[]
  /** Cancels everything pending: next-step first, then next-turn. */
  clear(): void
}

export interface CancelOptions {
  /** Keep the pending lists (default false: both are cleared and any latched wake dropped). */
  keepInbox?: boolean
}

/** The handle an app embeds. */
export interface Agent extends WakeupHandle {
  /** The session's id (the log's name in the store; generated when `options.sessionId` is absent). */
  readonly sessionId: string
  /** `idle`, `running`, or `parked` (only decisions of people are owed; docs/spec/lifecycle.md §9). */
  readonly status: AgentStatus
  /** The two pending lists (next turn, next step) and their edits. */
  readonly inbox: InboxHandle
  /**
   * The log, typed by event type: `e.type === 'tool/result'` narrows `e.data` (docs/spec/api.md). Events of
   * plugin-registered extension types (none unless a plugin registers one) are in it too; read
   * them as `LogEvent` (`agent.events as readonly LogEvent[]`).
   */
  readonly events: readonly SessionEvent[]
  /**
   * The general form of `followup`/`steer`/`inject`: queues `message` on `target`
   * (`'next-turn'` or `'next-step'`), waking the agent when `wake` and it is idle; returns the
   * message's id. Throws `AGENT_DISPOSED` after `dispose`, `PERSISTENCE_FAILED` after the store failed.
   */
  send(message: MessageInput, target: InboxTarget, wake: boolean): string
  /**
   * Queues a prompt for the next turn (waking the agent when idle) and returns the id the logged
   * message carries, at once. With a store, the message is NOT durable yet when this returns: it
   * is accepted (a crash can no longer lose it; `resumeAgent`/`openAgent` answer it) once
   * `await agent.flush()` resolves. The same holds for `steer`, `inject`, `send` and inbox edits.
   */
  followup(message: MessageInput): string
  /**
   * Queues a message for the next step of the running turn (the model reads it at its next
   * request; a steer while approvals are open follows `options.approvals.onSteer`). Idle: it opens
   * a turn. Returns the message's id; durable once `flush()` resolves.
   */
  steer(message: MessageInput): string
  /**
   * Like `steer` (next step of the running turn) but never wakes an idle agent: the message waits
   * for the next turn that runs. Returns the message's id; durable once `flush()` resolves.
   */
  inject(message: MessageInput): string
  /** Opens a turn for prompts already queued (resume, parked work); false when idle work is not there. */
  wake(): boolean
  /**
   * Adds a listener for a hook or live event (`HookMap`); returns a disposer. A name that is not
   * a hook (a misspelling such as `agent/prestep`) or a listener that is not a function throws
   * `INVALID_OPTION` at once (with "did you mean"), so a policy never silently fails to run.
   */
  on<K extends HookName>(name: K, listener: HookMap[K]): () => void
  /**
   * Calls `listener` with each event committed from now on, after the agent's own projections
   * saw it; returns an unsubscribe function. Typed like `events`: `e.type === 'tool/result'`
   * narrows `e.data` (events of plugin-registered types arrive too; a listener may take
   * `LogEvent` and test with `isCore(e, type)`). A throwing listener is reported as `agent/error`
   * (where `'subscribe'`); it never breaks the agent. It must not append (`REENTRANT_APPEND`).
   */
  subscribe(listener: (event: SessionEvent) => void): () => void
  /**
   * Resolves when the agent is idle: no turn runs and nothing queued would start one (a pending
   * wakeup is not waited for). While parked it does not resolve (a decision is owed): use
   * `whenSettled`. It does not wait for durability: `flush()` does. After `dispose` it resolves at once.
   */
  whenIdle(): Promise<void>
  /**
   * Resolves with the status when the agent is idle (as `whenIdle`) or parked: waiting for
   * people and nothing else (an open approval, its own or a running child's), so a process may
   * `flush()` and exit, and a later process resumes the session when the decision comes
   * (docs/spec/lifecycle.md §9). It does not wait for durability (`flush()` does) and never rejects.
   */
  whenSettled(): Promise<'idle' | 'parked'>
  /**
   * Token usage rolled up (docs/spec/lifecycle.md §10; reducers/usage-tree.ts): own totals at the top level,
   * `children` (every child this agent ran, each rolled up over its own children), `total` (both),
   * `byChild`. Children run by an earlier process are not known to the handle: `usageTree(store,
   * id)` (turnlog/replay) reads them from the store.
   */
  usage(): UsageRollUp
  /** The open approval requests of the session and of its running children (with their session ids), in request order (docs/spec/lifecycle.md §9, §10). */
  approvals(): OpenApproval[]
  /**
   * Decides an open approval. Resolves when the decision is durable (in the store). Refused, with
   * nothing logged: `UNKNOWN_APPROVAL` (no such open request in this agent), `APPROVAL_DECIDED`
   * (already decided: the first decision wins), `INVALID_ARGS` (edited arguments the tool's schema
   * refuses, or edits of an `ask` call whose `tool/call` is logged), `INVALID_ARGUMENT` (not a decision).
   */
  decide(approvalId: string, decision: ApprovalDecisionInput, options?: { by?: { kind: 'user'; id?: string } }): Promise<void>
  /** The open input rounds of the session and of its running children, in request order (docs/spec/lifecycle.md §11). */
  inputs(): OpenInput[]
  /**
   * Answers an open input round: `{ action: 'accept', responses }` (one response per requested key,
   * each checked against its request), `{ action: 'decline' }` or `{ action: 'cancel' }`. Resolves when
   * the answer is durable. Refused, with nothing logged: `UNKNOWN_INPUT`, `INPUT_ANSWERED` (the first
   * answer wins), `INVALID_INPUT` (naming the field), `INVALID_ARGUMENT` (not an answer).
   */
  answer(requestId: string, answer: InputAnswerInput, options?: { by?: { kind: 'user'; id?: string } }): Promise<void>
  /**
   * Resolves when every event committed so far is durable in the store (at once without one), its
   * running children's included: the prompts `followup` returned ids for are then accepted, and a
   * crash can no longer lose them. It waits for the appends already handed to the store, not for
   * the turn (events committed later need another `flush`). Rejects with the store's coded error
   * when persistence failed (`SESSION_EXISTS`, `SESSION_OWNED`, an I/O error, …); the agent then
   * takes no new work.
   */
  flush(): Promise<void>
  /**
   * Cancels the running turn (docs/spec/lifecycle.md §7): the model request is aborted, running tool bodies
   * get the abort signal and the cancel grace period, open approvals are denied `by: canceled`,
   * and the turn ends `aborted` with `cause` (default `{ kind: 'user' }`). Both pending lists are
   * cleared unless `options.keepInbox`. Idle or disposed: does nothing. Returns at once; await
   * `whenIdle()` for the turn's end.
   */
  cancel(cause?: CancelCause, options?: CancelOptions): void
  /**
   * Stops the agent and releases its store handle. A running turn is cancelled
   * (`aborted {kind: 'disposed'}`; tool bodies get the grace period, a `runMaintenance` task its
   * aborted signal), awaited to its end, then the log is flushed and closed. A parked agent, or
   * one parked by its children, is not cancelled: its open approvals stay open in the log, and a
   * later `resumeAgent`/`openAgent` picks the session up where it parked (docs/spec/lifecycle.md
   * §9, §10). Resolves when the log is closed; rejects, after everything is released, with the
   * coded persistence failure (`SESSION_EXISTS`, `SESSION_OWNED`, `FSYNC_FAILED`…) as `flush()`
   * does. Calling it again resolves at once; every other method then throws `AGENT_DISPOSED`.
   */
  dispose(): Promise<void>
  /**
   * Runs `task` while idle with the turn loop held (docs/spec/lifecycle.md §3, `maintaining`: e.g. a
   * compaction an app starts itself); prompts queued meanwhile start their turn after it.
   * Resolves with the task's result (rejects with its error). `AGENT_BUSY` unless idle.
   * `dispose` aborts `signal` and waits the cancel grace period for the task.
   */
  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T> | T): Promise<T>
  /** The model-visible history (what the next request would send), a fresh array per call. */
  history(): readonly import('../events/index.js').ModelMessage[]
  /** The human transcript, folded from the log (a fresh object per call). */
  transcript(): TranscriptState
  /** The three machines' positions, the pending lists and the open calls, for inspection (a fresh, plain object). */
  snapshot(): AgentSnapshot
  /** Each limit of `options.budget`: what its scope used, derived from the log ([] without a budget). */
  budgets(): BudgetStatus[]
}

export type { InputOptions, OpenInput, InputAnswerInput } from './input-types.js'
import type { InputOptions, OpenInput, InputAnswerInput } from './input-types.js'
export type { AgentSnapshot, AgentStatus, TurnPhase, TurnStateValue } from './snapshot-types.js'
import type { AgentSnapshot, AgentStatus } from './snapshot-types.js'

export type { TurnlogError }
