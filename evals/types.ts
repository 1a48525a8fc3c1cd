/**
 * The public types of `turnlog/evals`: what `rerun` takes and returns (docs/spec/api.md "Golden sessions").
 * `evaluate`'s types are in evaluate-types.ts.
 */
import type { AgentOptions } from '../agent/types.js'
import type { LogEvent, StreamChunk } from '../events/index.js'
import type { LogHeader } from '../events/jsonl.js'
import type { ModelAdapter, ModelInfo, ModelRequest } from '../models/types.js'
import type { UsageTotals } from '../reducers/usage.js'
import type { VerifyResult } from '../replay/verify.js'
import type { AnyTool } from '../tools/types.js'

/** A golden session: a JSONL path, `{header, events}` (as `readLog` returns) or a bare event list. */
export type GoldenInput = string | { header?: LogHeader; events: readonly LogEvent[] } | readonly LogEvent[]

/** A loaded golden. */
export interface Golden {
  header: LogHeader
  events: readonly LogEvent[]
  /** The path it was read from, when it was read from a file. */
  path?: string
}

/**
 * Where the re-run goes live. `{turn}`: from the start of that turn (everything before it is the
 * recorded prefix). `{turn, step}` or `{seq}` (the step holding that seq): from that step; the
 * earlier steps of its turn are served as recorded (recorded model response, recorded tool
 * results), then the session runs with the change under test.
 */
export type RerunFrom = { turn: number; step?: number } | { seq: number }

/** A model step position. */
export interface StepAt { turn: number; step: number }

/**
 * A model that knows the lifecycle position of each request: `recordedModel(golden)` is one. The
 * re-run calls `streamStep` with the (turn, step) of the request (a plain `ModelAdapter` is called
 * through `stream`).
 */
export interface StepModel {
  info?: ModelInfo
  streamStep(at: StepAt, request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamChunk>
}

/** A recorded tool call the re-run asked for, as the tool-result source sees it. */
export interface ToolCallAt {
  turn: number
  step: number
  callId: string
  name: string
  /** The parsed arguments (validated by the tool's schema). */
  args: unknown
  /** `name` + canonical arguments (keys sorted). */
  canonical: string
  /** How many calls with the same name and canonical arguments came before in the re-run. */
  occurrence: number
  /**
   * The golden's output for this call (matched by name, canonical arguments, occurrence), for a
   * mock that changes only some calls: a recorded error is thrown, an unrecorded call follows
   * `onUnrecorded`.
   */
  recorded(): unknown
}

/** A tool's body output, given for a call: what a tool's `execute` may return. */
export type ToolMock = (call: ToolCallAt) => unknown

export interface RerunOptions {
  /** Where the re-run goes live. Default `{ turn: 1 }` (the whole session, inputs re-issued). */
  from?: RerunFrom
  /** The model under test: a `ModelAdapter`, or a `StepModel` such as `recordedModel(golden)`. */
  model: ModelAdapter | StepModel
  /** Today's tools (names, schemas, classifiers, timeouts). Their bodies run only when `toolResults` says so. */
  tools?: readonly AnyTool[]
  /**
   * Hooks, as `createAgent({ hooks })`, or a factory called once per re-run (stateful hooks: every
   * trial of `evaluate` gets fresh ones). A throwing hook behaves as in a live agent.
   */
  hooks?: AgentOptions['hooks'] | (() => AgentOptions['hooks'])
  /** Plugins (e.g. `basicCompaction(...)`), or a factory called once per re-run. */
  plugins?: AgentOptions['plugins'] | (() => AgentOptions['plugins'])
  /** The base system prompt from `from` on. Default: the golden's (its last `request/header` before `from`). */
  system?: string
  /** The base call configuration. Default: the golden's (its last `request/header` before `from`). */
  config?: AgentOptions['config']
  /**
   * Where tool results come from after `from`: `'recorded'` (default): the golden's results, matched
   * by (name, canonical arguments, occurrence); `'live'`: the tools' own bodies; a function
   * `(call) => output`, or an object of such functions by tool name (unlisted tools: recorded).
   */
  toolResults?: 'recorded' | 'live' | ToolMock | Readonly<Record<string, ToolMock>>
  /**
   * A call the golden has no result for (with `toolResults: 'recorded'`): `'fail'` (default: the
   * call's result is a `TOOL_ERROR` naming it and the re-run is marked failed, `unrecorded`),
   * `'live'` (the tool's body runs) or a function giving the output.
   */
  onUnrecorded?: 'fail' | 'live' | ToolMock
  maxParallelToolCalls?: number
  maxStepsPerTurn?: number
  retry?: AgentOptions['retry']
  /** The re-run's session id (default: a new UUID). */
  sessionId?: string
  /** Time source for the new log (default `Date.now`). The comparison ignores `time`. */
  clock?: () => number
  /** Timers (default real ones; tests pass instant sleeps). */
  timers?: AgentOptions['timers']
  /** A re-run with no progress for this long is stopped (its turn cancelled) and reported. Default 60 s. */
  timeoutMs?: number
}

/** Where the re-run first differs from the golden (`time` ignored). */
export interface RerunDivergence {
  seq: number
  /** The turn and step of the differing event (the golden's, else the re-run's). */
  turn: number | null
  step: number | null
  expected: LogEvent | null
  actual: LogEvent | null
  /** `mismatch` (another event), `missing` (the re-run ended before), `extra` (the re-run went on). */
  kind: 'mismatch' | 'missing' | 'extra'
  /** A header line and one line per differing path. */
  diff: string
}

/** One entry of the tool-sequence diff (golden vs re-run, from `from` on, longest common subsequence). */
export interface ToolSequenceEntry {
  op: 'same' | 'removed' | 'added'
  name: string
  /** Canonical arguments (JSON, keys sorted). */
  arguments: string
  /** The turn of the call (the golden's for `same` and `removed`). */
  turn: number
}

/** Usage of the re-run minus the golden's (whole logs: the shared prefix cancels out). */
export interface UsageDelta {
  golden: UsageTotals
  rerun: UsageTotals
  delta: UsageTotals
}

/** A recorded input the re-run issued, or could not issue. */
export interface ReissuedInput {
  /** The golden seq it came from. */
  seq: number
  kind: 'send' | 'edit' | 'cancel' | 'wake' | 'decision' | 'answer' | 'schedule'
  /** The lifecycle position it was recorded at (e.g. `turn 2 after step/end of step 1`). */
  at: string
  /**
   * `issued` at its position; `late` (its position never came: issued at the turn's end or when
   * idle); `dropped` (a cancel whose turn was over, an edit of messages no longer pending, a send
   * whose id is pending, a decision for a call the re-run does not wait on); `made-by-hooks` (the re-run's own hooks sent the same message in that turn).
   */
  outcome: 'issued' | 'late' | 'dropped' | 'made-by-hooks'
  /** The re-run's log length when it was issued. */
  issuedAt?: number
}

export interface RerunResult {
  /** The new log: a fork of the golden (`parent` in its header), the prefix verbatim, then the re-run. */
  log: { header: LogHeader; events: readonly LogEvent[] }
  golden: Golden
  /** The first seq the re-run wrote (the prefix is `0..liveFrom-1`). */
  liveFrom: number
  /** The first difference from the golden, or null when the re-run reproduced it (`time` aside). */
  divergence: RerunDivergence | null
  toolSequenceDiff: readonly ToolSequenceEntry[]
  usageDelta: UsageDelta
  /** `verify` of the new log (every L invariant). */
  verify: VerifyResult
  /** Calls the golden had no result for (`toolResults: 'recorded'`). */
  unrecorded: readonly ToolCallAt[]
  /** The recorded inputs after `from`, as re-issued. */
  inputs: readonly ReissuedInput[]
  /** Errors the agent reported (`agent/error`), as messages. */
  errors: readonly string[]
  /** True when the re-run stopped at `timeoutMs`. */
  timedOut: boolean
}
