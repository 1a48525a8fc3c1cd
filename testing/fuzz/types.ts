/** The public option and result types of `fuzzAgent`. */
import type fc from 'fast-check'
import type { Agent, AgentOptions, AgentPlugin } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import type { ModelRequest } from '../../models/index.js'
import type { AnyTool } from '../../tools/types.js'

export interface FuzzAgentOptions {
  /** Your tools; the fuzzer adds its own (`fuzz_parallel`, `fuzz_exclusive`, `fuzz_throw`) unless `ownToolsOnly`. */
  tools?: readonly AnyTool[]
  /** Your hooks, registered before the fuzzer's own. */
  hooks?: AgentOptions['hooks']
  ownToolsOnly?: boolean
  numRuns?: number
  seed?: number
  /** Commands per scenario (default 1..12). */
  maxCommands?: number
  maxStepsPerTurn?: number
  /** Called after each run that passed, with the run's log (for coverage statistics). */
  onRun?: (events: readonly LogEvent[]) => void
  /**
   * Plugins passed to `createAgent`: a list (each instance is installed on every run's agent), a
   * factory called per run, or an arbitrary (fast-check generates the plugins per run, e.g. over a
   * plugin's options; the plugins are reported with a failing scenario).
   */
  plugins?: readonly AgentPlugin[] | (() => readonly AgentPlugin[]) | fc.Arbitrary<readonly AgentPlugin[]>
  /** Adds `CONTEXT_WINDOW_EXCEEDED` failures (in band, and thrown with status 413) and text responses
   * with `usage` to the generated model responses. */
  overflow?: boolean
  /** The fuzzer's tools return text of these sizes (picked by the call's `n`) instead of `{ok: true}`;
   * `true` = 100, 1,500, 4,000 and 12,000 characters. */
  largeOutputs?: boolean | readonly number[]
  /**
   * R6 checks (`checkR6`): an overflow retry only when a replacement was logged during the
   * `agent/request-error` listeners and the turn was not cancelled, a retry turn after an overflow
   * only after a replacement in the failed turn, and at most `maxOverflowRetries` (when given) per
   * failure chain. Default: on when a plugin named `compaction` is installed.
   */
  r6?: boolean | { maxOverflowRetries?: number }
  /** Extra commands, mixed into the generated ones (e.g. a plugin's manual operation). */
  commands?: ReadonlyArray<fc.Arbitrary<FuzzCommand>>
  /** An extra check after each run (after the final followup); throw to fail the run. */
  check?: (run: FuzzRun) => void
}

/** A user command: `run` gets the agent and may hand back work the run must wait for (`defer`). */
export interface FuzzCommand {
  run(agent: Agent, ctx: { plugins: readonly AgentPlugin[]; defer(work: Promise<unknown>): void }): void | Promise<void>
  toString(): string
}

/** An `agent/request-error` decision as the outermost listener saw it. */
export interface OverflowDecision {
  /** The failure code. */
  code: string
  /** Log length when the listeners started, and when they returned. */
  from: number
  to: number
  retry: boolean
  /** The turn's signal was aborted when they returned. */
  aborted: boolean
}

/** What `check` gets after a run. */
export interface FuzzRun {
  agent: Agent
  events: readonly LogEvent[]
  plugins: readonly AgentPlugin[]
  /** Every `agent/request-error` decision, in order (recorded when R6 is checked). */
  decisions: readonly OverflowDecision[]
  /** Log length at each `agent/status` idle. */
  idleAt: readonly number[]
  /** Model requests with purpose `compaction`, with the log length when each was made. */
  summaryRequests: ReadonlyArray<{ request: ModelRequest; at: number }>
}
