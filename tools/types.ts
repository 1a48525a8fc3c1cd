/**
 * Tool definitions and the seam between the driver and the tool scheduler. The driver hands the
 * scheduler the step's tool calls in model order and a `ToolEnv` that appends events, runs hooks
 * and queues contexts; the scheduler owns ordering, concurrency and every error result.
 *
 * Over ~400 lines (493), knowingly: most of it is the doc comment of every public field a tool
 * author reads (what a hook may do, what happens when it throws); the input rounds' types are the
 * next seam to split.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec'
import type { ApprovalBy, ApprovalDecision, Block, CancelCause, EventOf, InputAnswer, InputBy, InputRequests, ToolCallBlock, ToolErrorInfo, ToolSource, UserMessage } from '../events/index.js'

/** What a tool body gets besides its arguments. */
export interface ToolContext {
  /** Aborts when the turn is cancelled (reason: the cancel cause) or the call times out. */
  signal: AbortSignal
  callId: string
  turn: number
  step: number
  /** Ends the turn after this step's results are committed (the step ends `concluded`). */
  concludeTurn(): void
  /**
   * The answer to this call's last round (docs/spec/lifecycle.md §11), when the body is called
   * again after it; undefined on the call's first run.
   */
  input?: InputContext
  /**
   * Ends a round instead of returning a result: `return ctx.inputRequired({ requests, state?, expiresInMs? })`.
   * The round is logged (`tool/input-requested`); when a person (or the client, or another process)
   * answers, the body is called again with `ctx.input`. Nothing waits in memory: the next round may
   * run in another process. A malformed round (an unknown request kind, a form schema that is not
   * JSON Schema, `state` that is not JSON or larger than the cap) is the call's
   * `INVALID_INPUT_REQUEST` result. Typed `never` so that `return ctx.inputRequired(…)` fits any
   * body's return type; its value is an {@link InputRequired} the scheduler recognises.
   */
  inputRequired(spec: InputRequiredSpec): never
  /** @internal What `defineSubagent` needs of the running agent (absent outside one). */
  readonly [CHILD_HOST]?: ChildHost
}

/** The answer a body is called again with (docs/spec/lifecycle.md §11). */
export interface InputContext {
  /** The round this answers (1 for the call's first round). */
  round: number
  /** `accept` (responses by request key), `decline` (the person said no), `cancel` (nobody will answer:
   * it expired, new input superseded it, or the person dismissed it). */
  action: InputAnswer['action']
  responses?: Record<string, unknown>
  /** The `state` the body gave with the round. */
  state?: unknown
  /** Who answered. */
  by: InputBy
}

/** What a body passes to `ctx.inputRequired`. */
export interface InputRequiredSpec {
  /** What to ask, by key: `{kind: 'form', message, schema}`, `{kind: 'text', message}`,
   * `{kind: 'choice', message, options}`, `{kind: 'url', message, url}`. */
  requests: InputRequests
  /** Opaque JSON given back in `ctx.input.state` (logged; capped, default 64 KB). */
  state?: unknown
  /** Answered `cancel` `by: expired` after this long (the agent's clock). */
  expiresInMs?: number
}

/** @internal The brand of the value `ctx.inputRequired` returns. */
export const INPUT_REQUIRED: unique symbol = Symbol.for('turnlog.inputRequired')

/** The value a body returns to end a round (from `ctx.inputRequired`). */
export interface InputRequired {
  readonly [INPUT_REQUIRED]: true
  readonly spec: InputRequiredSpec
}

/** True for the value of `ctx.inputRequired` (read inside the caller's guard). */
export function isInputRequired(v: unknown): v is InputRequired {
  return typeof v === 'object' && v !== null && (v as { [INPUT_REQUIRED]?: unknown })[INPUT_REQUIRED] === true
}

/** @internal The key of {@link ChildHost} on a {@link ToolContext}. */
export const CHILD_HOST: unique symbol = Symbol.for('turnlog.childHost')

/**
 * @internal The key, on an error a body throws, of the result code it stands for instead of
 * `TOOL_ERROR`. Only `TOOL_OUTCOME_UNKNOWN` is honoured: a re-attached subagent call whose child
 * log is not its child (L19) has an unknown outcome, as repair says of it.
 */
export const RESULT_CODE: unique symbol = Symbol.for('turnlog.resultCode')

/**
 * @internal The key, on an agent's options, of the function that resumes a child session for a
 * re-attached subagent call (docs/spec/lifecycle.md §10). `resumeAgent` (replay/) sets it: agent/ cannot import
 * the repair it needs. An agent without it never restores a step to re-attach children.
 */
export const RESUME_CHILD: unique symbol = Symbol.for('turnlog.resumeChild')

/**
 * @internal Resumes the child session `options.sessionId` in `options.store` (created with
 * `parent` first when missing) and resolves to its agent, not yet woken.
 */
export type ChildResumer = (options: Record<string, unknown> & { store: unknown; sessionId: string }, parent: { session: string; seq: number; callId: string }) => Promise<unknown>

/**
 * @internal What a subagent call needs of its parent (docs/spec/lifecycle.md §10): the parent's session and
 * store, and the one append it may make while it runs, `child/spawned`.
 */
export interface ChildHost {
  readonly session: string
  /** The parent's store (a `LogStore`), or undefined for an agent without one. */
  readonly store: unknown
  /** Appends `child/spawned` for this call; returns its seq (the child's header names it, L19). */
  spawned(child: string): number
  /**
   * Registers the running child with its parent while the call runs (docs/spec/lifecycle.md §10): its open
   * approvals are listed and decided through the parent, and its parking parks the parent.
   * Returns the unregister (called when the call ends).
   */
  attach?(child: LiveChild): () => void
  /**
   * Present when this call was running when its parent's process died and the parent was resumed
   * (docs/spec/lifecycle.md §10): the call's child already exists (its `child/spawned` is logged, and `spawned`
   * returns that seq without appending), so the body resumes the child session with these options
   * (repair under its own lock, its interrupted turn re-run, a parked step restored) instead of
   * creating it. Resolves to the resumed child agent, not yet woken.
   */
  reattach?(child: string, options: unknown): Promise<unknown>
  /**
   * The links to the budgets of the parent and its ancestors the child's meter joins (a parent's
   * budget covers its children's usage, docs/spec/lifecycle.md §10): an opaque list the child's options carry.
   * Absent when no ancestor has a budget.
   */
  budget?(child: string): unknown[] | undefined
}

/**
 * @internal A running child session as its parent sees it (an agent handle; typed here so tools/
 * needs no agent/ import).
 */
export interface LiveChild {
  readonly sessionId: string
  readonly status: 'idle' | 'running' | 'parked'
  approvals(): ReadonlyArray<{ approvalId: string; session: string }>
  decide(approvalId: string, decision: unknown, options?: unknown): Promise<void>
  on(name: 'agent/status', listener: (p: { status: 'idle' | 'running' | 'parked' }) => void): () => void
  /** Its usage rolled up over its own children (`agent.usage()`), read when the call ends. */
  usage(): unknown
  /** Denies its open approvals (and its children's) `by: superseded`: its parent was steered. */
  supersedeApprovals?(): number
  /** Its open input rounds and its children's (`agent.inputs()`, docs/spec/lifecycle.md §11). */
  inputs?(): ReadonlyArray<{ requestId: string; session: string }>
  /** Answers one of them (`agent.answer`): logged in the log of the session that asked. */
  answer?(requestId: string, answer: unknown, options?: unknown): Promise<void>
  /** Answers its open rounds (and its children's) `cancel` `by: superseded`: its parent was steered. */
  supersedeInputs?(): number
  /** Parked with something owed to a person now (not a parked step about to take a held decision). */
  owesPerson?(): boolean
  /** Makes every event it committed durable (`agent.flush()`): a parent's `flush()` covers its running children. */
  flush?(): Promise<void>
  /** `agent.dispose()`: a parked family is disposed child first, each left parked (docs/spec/lifecycle.md §9, §10). */
  dispose?(): Promise<void>
}

/** The arguments a tool's body gets: the output side of its `parameters` schema. */
export type ToolArgs<P extends StandardSchemaV1> = StandardSchemaV1.InferOutput<P>

/**
 * A tool. Its schemas may come from any Standard Schema v1 library (zod 4, zod 3.25+ classic or
 * `zod/v4`, valibot, arktype, …) or be plain JSON Schema through `jsonSchema()`. Other members may
 * be added by later versions; a definition is checked by `defineTool`.
 */
export interface Tool<P extends StandardSchemaV1 = StandardSchemaV1, O = unknown> {
  name: string
  description: string
  /**
   * Schema of the arguments; the model sees its JSON Schema (`toolSpec`), and arguments that fail
   * it are the call's `INVALID_ARGS` result naming each bad field.
   */
  parameters: P
  /**
   * Optional schema of the output; an output that fails it is `INVALID_TOOL_OUTPUT`. The body
   * returns the schema's *input* side (`O`), because its value goes through the schema: with a
   * transforming schema such as `z.number().transform(String)` the body returns a number and the
   * result holds the transformed string.
   */
  output?: StandardSchemaV1<O, unknown>
  /** The body. Its return value becomes the result text (strings as is, other values as JSON), or
   * return `{ content: Block[] }` for rich results (`{ content, isError: true }`: an error result the
   * model sees, with its blocks, coded `TOOL_ERROR`). A throw is a `TOOL_ERROR` result. Returning
   * `ctx.inputRequired(…)` ends a round instead (docs/spec/lifecycle.md §11). */
  execute(args: ToolArgs<P>, ctx: ToolContext): Promise<O> | O
  /**
   * A client tool (docs/spec/lifecycle.md §11): no body here. Its call logs one `client` round, and
   * the accepted response (validated against `output` when given) is the call's result.
   */
  client?: boolean
  /** A client tool's round: `timeoutMs` answers it `cancel` `by: expired` (the call's `INPUT_EXPIRED` result) after this long. */
  input?: { timeoutMs?: number }
  /** Exactly `true` makes the call parallel-safe; anything else (or a throw) makes it exclusive. */
  isConcurrencySafe?(args: ToolArgs<P>): boolean
  /** Per-call timeout; past it the call's signal aborts and the result is `TOOL_TIMEOUT`. */
  timeoutMs?: number
  /**
   * Whether a call needs a person's decision before its body runs (docs/spec/lifecycle.md §9): `true`, or a
   * policy over the validated arguments, evaluated right after the step's assistant message for
   * every call in model order. Only exactly `true` asks; a policy that throws or answers anything
   * but a boolean is that call's `HOOK_ERROR` result (its body never runs).
   */
  needsApproval?: boolean | ApprovalPolicy<ToolArgs<P>>
  /** `timeoutMs`: how long a request waits (from the agent's clock) before it is decided `by: expired`. */
  approval?: { timeoutMs?: number }
  /**
   * Where the tool came from when it is not the app's own (an MCP server's tool, set by
   * `turnlog/mcp`): logged with the tool's definition in `request/header` (docs/spec/lifecycle.md §12).
   */
  source?: ToolSource
}

/**
 * @internal The key, on a tool, of its crash rule (docs/spec/lifecycle.md §8, §12): `true` when a call of it
 * that a crash interrupted may be issued again by the resumed agent (an idempotent MCP tool). Resume
 * then leaves the step open and the call's body runs again, once; any other interrupted call is
 * `TOOL_OUTCOME_UNKNOWN`.
 */
export const REISSUE: unique symbol = Symbol.for('turnlog.reissue')

/** @internal True when a tool's interrupted calls are issued again on resume ({@link REISSUE}). */
export function reissues(tool: unknown): boolean {
  try {
    return typeof tool === 'object' && tool !== null && (tool as { [REISSUE]?: unknown })[REISSUE] === true
  } catch {
    return false
  }
}

/** @internal The key, on a tool, of the live list it belongs to ({@link ToolCatalog}). */
export const TOOL_CATALOG: unique symbol = Symbol.for('turnlog.toolCatalog')

/**
 * @internal A tool list that changes while an agent runs (an MCP server's, docs/spec/lifecycle.md §12).
 * Every tool of the list carries it under {@link TOOL_CATALOG}; the agent reads `current` again at
 * each step boundary when `version` moved (and at its first step), so a change reaches the model
 * only there, as a `request/header {reason: 'change'}`.
 */
export interface ToolCatalog {
  /** Moves whenever the list may have changed. */
  readonly version: number
  /**
   * The list's tools now. `offered(source)`: the hash of the definition the session first offered
   * the model for that source (from its log), or undefined: what drift is measured against.
   */
  current(offered: (mcp: string, tool: string) => string | undefined): readonly AnyTool[]
}

/** A `needsApproval` policy (declared as a method type, so a tool's policy over its own argument type
 * is assignable to `AnyTool`, as `execute` is). */
export type ApprovalPolicy<A> = { policy(args: A, ctx: ApprovalContext): boolean | Promise<boolean> }['policy']

/** What a `needsApproval` policy gets besides the arguments. */
export interface ApprovalContext {
  callId: string
  turn: number
  step: number
  /** The turn's cancel signal. */
  signal: AbortSignal
}

export type AnyTool = Tool<StandardSchemaV1, unknown>

/** `tools/pre-execute` decision. `ask` asks a person (docs/spec/lifecycle.md §9: `tool/approval-requested` after the call's
 * `tool/call`; the body waits for the decision); an already approved call's `ask` is an `allow`. */
export type PreExecuteDecision = { kind: 'allow' } | { kind: 'deny'; reason: string } | { kind: 'ask'; question?: string }

/** `tools/post-execute` decision. `block` replaces the result by an error carrying `feedback`. */
export type PostExecuteDecision =
  | { kind: 'accept'; additionalContexts?: readonly UserMessage[] }
  | { kind: 'block'; feedback: string; additionalContexts?: readonly UserMessage[] }

/** What a settled call produced, before post-execute and commit. */
export interface ToolOutcome {
  content: Block[]
  error?: { code: string; message: string }
  /** The output was a JSON value (not text, not `{content}` blocks): `content` is its JSON text. */
  json?: true
  /** @internal The body ended a round (`ctx.inputRequired`): not a result yet. */
  required?: unknown
}

/** `signal` in the tool hooks: the turn's cancel signal (for `tools/execute`, the call's own, which also aborts on its timeout). */
export interface PreExecutePayload { call: ToolCallBlock; args: unknown; tool: AnyTool | undefined; turn: number; step: number; signal: AbortSignal }
export interface ExecutePayload { call: ToolCallBlock; args: unknown; tool: AnyTool; signal: AbortSignal; turn: number; step: number }
export interface PostExecutePayload { call: ToolCallBlock; outcome: ToolOutcome; turn: number; step: number; signal: AbortSignal }

/** The driver's side of the seam. Every method is provided by the agent. */
export interface ToolEnv {
  turn: number
  step: number
  tools: ReadonlyMap<string, AnyTool>
  maxParallelToolCalls: number
  /** The turn's signal: aborted by `cancel` with the cause as `reason`. */
  signal: AbortSignal
  /** Appends `tool/call` (at start, or synthetically for a call that never started). */
  appendCall(call: ToolCallBlock): EventOf<'tool/call'>
  /** Appends `tool/result` citing `[callSeq]`. */
  appendResult(call: ToolCallBlock, callSeq: number, outcome: ToolOutcome): EventOf<'tool/result'>
  /** Queues a context message into next-step (an inbox splice). */
  queueContext(message: UserMessage): void
  /** Child sessions (docs/spec/lifecycle.md §10): given to each call's context; absent in bare tool runs. */
  children?: {
    session: string
    store: unknown
    spawned(callId: string, child: string): number
    attach?(child: LiveChild): () => void
    /** The re-attachment of a call restored with its running child ({@link ChildHost.reattach}), else undefined. */
    reattach?(callId: string): ((child: string, options: unknown) => Promise<unknown>) | undefined
    /** {@link ChildHost.budget}. */
    budget?(child: string): unknown[] | undefined
  }
  /**
   * A `toolCalls` budget (docs/spec/lifecycle.md §10): asked right before each call starts; an error means the
   * call is past the limit, gets that error (`BUDGET`) as its result and never runs. Absent: no limit.
   */
  budgetRefusal?(name: string): ToolErrorInfo | null
  /** The three tool hooks (waterfalls); a throwing listener is the scheduler's to turn into a result. */
  preExecute(p: PreExecutePayload, innermost: () => PreExecuteDecision): Promise<PreExecuteDecision>
  execute(p: ExecutePayload, innermost: (p: ExecutePayload) => Promise<unknown>): Promise<unknown>
  postExecute(p: PostExecutePayload, innermost: () => PostExecuteDecision): Promise<PostExecuteDecision>
  /** Reports a non-fatal problem (a throwing hook) as a live `agent/error`. */
  reportError(error: unknown, where: string): void
  /**
   * Waits for user code (a hook's result, a body's promise) within the cancel grace period: rejects
   * with the agent's `Abandoned` when the period after the turn's abort ran out first. Absent: waits
   * as long as it takes.
   */
  within?<T>(value: Promise<T>, where: string): Promise<T>
  /** Tells whether a rejection of `within` is an abandonment. */
  isAbandoned?(error: unknown): boolean
  /** Approvals (docs/spec/lifecycle.md §9); absent: `ask` is a denial, `needsApproval` is not read. */
  approvals?: ApprovalEnv
  /** A parked step restored from the log: where each call stands (with `approvals`). */
  restored?: {
    calls: readonly RestoredCall[]
    decidedSinceParked: boolean
    /**
     * The step stands parked (docs/spec/lifecycle.md §9; the default). False for a step restored because a
     * subagent call was running at a crash (docs/spec/lifecycle.md §10): it runs on, status `running`.
     */
    parked?: boolean
  }
  /** Timers, injectable so tests don't sleep. */
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

/**
 * The driver's side of approvals (docs/spec/lifecycle.md §9). Absent: an `ask` verdict is a `DENIED` result
 * ("nobody answered") and `needsApproval` is not evaluated (a bare `runToolCalls`).
 */
export interface ApprovalEnv {
  /** Appends `tool/approval-requested` for the call and returns its id and expiry. */
  request(call: ToolCallBlock, question: string | undefined, timeoutMs: number | undefined): { approvalId: string; expiresAt?: number }
  /**
   * Claims a decision before it is logged (the store's side channel decides which decision wins
   * across processes, docs/spec/lifecycle.md §9): returns the winner, ours or one claimed first elsewhere.
   */
  claim(approvalId: string, decision: ApprovalDecision, by: ApprovalBy): { won: boolean; decision: ApprovalDecision; by: ApprovalBy }
  /** Appends `tool/approval-decided`. */
  appendDecision(call: ToolCallBlock, approvalId: string, decision: ApprovalDecision, by: ApprovalBy): void
  /** Appends `step/parked` (and sets the status `parked` the first time). */
  park(approvalIds: string[]): void
  /** The step runs again (status `running`). */
  unpark(): void
  /** A restored parked step: status `parked`, nothing appended (the log already stands parked). */
  parkedAlready(): void
  /** The agent's clock (epoch ms). */
  now(): number
  /**
   * Resolves when everything appended so far is durable (the store); null when it is already (or
   * there is no store). Every body waits for it before it starts (R10, §8: repair's
   * TOOL_NOT_STARTED stays true).
   */
  durable(): Promise<void> | null
  /** A `tools/pre-execute` listener exists, so a verdict may be `ask`: each call's verdict is then
   * awaited before the next call starts (no call after an undecided one starts, L17). */
  askable: boolean
  /** The run registers (and unregisters with null) the entry point that decisions reach it by. */
  attach(run: ApprovalRun | null): void
  /** Input rounds (docs/spec/lifecycle.md §11); absent: a body's `inputRequired` is its `INVALID_INPUT_REQUEST` result. */
  inputs?: InputEnv
}

/** The driver's side of input rounds (docs/spec/lifecycle.md §11). */
export interface InputEnv {
  /**
   * Appends `tool/input-requested` for the call's round and returns its id and its `expiresAt`:
   * the event's time plus `expiresInMs`, from one clock reading (the log says `expiresAt = time + ms`).
   */
  request(call: ToolCallBlock, round: number, requests: InputRequests, state: unknown, expiresInMs: number | undefined): { requestId: string; expiresAt?: number }
  /** Claims an answer before it is logged (first answer wins across processes). */
  claim(requestId: string, answer: InputAnswer, by: InputBy): { won: boolean; answer: InputAnswer; by: InputBy }
  /** Appends `tool/input-provided`. */
  appendAnswer(call: ToolCallBlock, requestId: string, round: number, answer: InputAnswer, by: InputBy): void
  /** The cap of a round's `state` (bytes of its JSON text). */
  maxStateBytes: number
  /** A steer while rounds are open: supersede them (default) or keep them open. */
  onSteer: 'supersede' | 'queue'
}

/** A running step's approvals, as the agent reaches them. */
export interface ApprovalRun {
  /**
   * Applies a decision (already validated): claims it, appends the winner and wakes the step.
   * `'lost'`: another decision had been claimed first (that one was logged instead).
   */
  decide(approvalId: string, decision: ApprovalDecision, by: ApprovalBy): 'decided' | 'lost' | 'unknown' | 'already-decided'
  /** Decides every open request `deny` `by: superseded` (a steer while parked). Returns how many. */
  supersede(): number
  /** The open requests' approval ids and tool names (for validation of edited arguments). */
  /** `provider`: a provider-executed call (issue 23), whose arguments a decision cannot edit. */
  open(): Array<{ approvalId: string; callId: string; name: string; ask: boolean; provider?: true }>
  /** True while the step is parked. */
  readonly parked: boolean
  /** Applies an answer (already validated): claims it, appends the winner, wakes the body's next round. */
  answer?(requestId: string, answer: InputAnswer, by: InputBy): 'answered' | 'lost' | 'unknown' | 'already-answered'
  /** The open rounds. */
  openInputs?(): OpenRound[]
  /** A steer: answers every open round `cancel` `by: superseded` (unless the rounds queue steers). Returns how many. */
  supersedeInputs?(): number
  /** Stops the expiry timer (dispose of a parked agent: the session stays parked). */
  detach(): void
}

/** An open round of a running step. */
export interface OpenRound {
  requestId: string
  callId: string
  name: string
  round: number
  requests: InputRequests
  /** The tool's output schema, for a client round's accepted response (validated when given). */
  client: boolean
}

/** A call's round as the log holds it (a restored step). */
export interface RestoredRound {
  requestId: string
  round: number
  requests: InputRequests
  state?: unknown
  expiresAt?: number
  answered: { answer: InputAnswer; by: InputBy } | null
}

/**
 * A call of a parked step restored from the log (docs/spec/lifecycle.md §9: resume restores the parked step as
 * it is). In model order, one per tool-call block of the step's assistant message.
 */
export interface RestoredCall {
  block: ToolCallBlock
  /** Seq of its `tool/call` and the arguments it carried; null: not started. */
  callSeq: number | null
  calledArguments: string | null
  /** It has its `tool/result`. */
  committed: boolean
  approval: { id: string; ask: boolean; expiresAt?: number; decided: { decision: ApprovalDecision; by: ApprovalBy } | null } | null
  /**
   * A started call whose body was running a child session at a crash (its `child/spawned` seq and
   * the child's id, docs/spec/lifecycle.md §10): the scheduler runs its body again, which re-attaches the child
   * (its pre-execute verdict was `allow` before the crash, so the hooks are not asked again).
   */
  child?: { id: string; seq: number }
  /** Its last round (docs/spec/lifecycle.md §11), when it asked one and has no result yet. */
  input?: RestoredRound
  /**
   * A started call without a result at a crash whose tool is issued again ({@link REISSUE}): the
   * scheduler runs its body again (its pre-execute allowed it before the crash).
   */
  reissue?: true
  /**
   * A started call that ran beside a re-attached child at a crash (docs/spec/lifecycle.md §8, §10): its body may
   * have run, so it is not run again; this is its result (`TOOL_OUTCOME_UNKNOWN`), committed in model
   * order without `tools/post-execute` (nothing ran in this process for a hook to see).
   */
  unknown?: { code: string; message: string }
}

/** What the scheduler reports back to the step. */
export interface ToolRunResult {
  /** A committed result's tool called `concludeTurn()`. */
  concluded: boolean
  /** The turn was cancelled while tools ran (started calls drained, the rest ABORTED_BEFORE_DISPATCH). */
  aborted: boolean
  cause?: CancelCause
}
