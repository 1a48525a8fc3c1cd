/** The public option and result types of `fuzzAgent`. */
import type fc from 'fast-check'
import type { Agent, AgentOptions, AgentPlugin } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import type { ModelRequest } from '../../models/index.js'
import type { AnyTool } from '../../tools/types.js'
import type { FuzzCensus } from './census.js'

export interface FuzzAgentOptions {
  /**
   * Your tools, or a factory called for every run (and once more up front, for the names and
   * schemas the arguments are generated from): use a factory when a tool keeps state, so no run
   * (and no shrinking step) sees another's. Calls get arguments generated from each tool's JSON
   * Schema (whatever library wrote it: zod, valibot, arktype, `jsonSchema()`), valid four times
   * out of five, deliberately invalid otherwise. The fuzzer adds its own
   * tools (`fuzz_parallel`, `fuzz_exclusive`, `fuzz_throw`) unless `ownToolsOnly`.
   */
  tools?: readonly AnyTool[] | (() => readonly AnyTool[])
  /** Your hooks (as `createAgent({ hooks })`), registered before the fuzzer's own; or a factory
   * called for every run, for hooks that keep state. */
  hooks?: AgentOptions['hooks'] | (() => AgentOptions['hooks'])
  ownToolsOnly?: boolean
  /** Runs (default 100). */
  numRuns?: number
  /** The fast-check seed (default random; every report names it). */
  seed?: number
  /** With `seed`: replays exactly the run a failure names (`FuzzFailure.path`), and stops at its failure. */
  path?: string
  /**
   * A run with no progress (no event logged, no scheduled task released, no tool body or hook
   * started or settled) for this long fails `STUCK`, naming what was pending. Default 5,000 ms.
   * Raise it when your tools or hooks legitimately wait longer (real I/O).
   */
  stuckAfterMs?: number
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
  /**
   * The hostile mix (default on): hooks of the fuzzer's own that cancel the turn, never settle or
   * return a decision with a throwing getter, and tool bodies that never settle, settle late
   * (after the cancel grace period abandoned them) or return an output with a throwing getter.
   * A planned hang is released by a cancel, as a user would; R5 must hold. `false`: the original
   * mix only.
   */
  hostile?: boolean
  /**
   * Budget trips (docs/spec/lifecycle.md §10): every scenario gets one budget (tokens, cost with a price that
   * sometimes throws, or tool calls; per turn or per session; small limits) and the responses
   * report usage. Checked: L20 (with the price) and that no model request starts while the budget
   * is reached (without plugins). Default false (fixed seeds keep their scenarios).
   */
  budgets?: boolean
  /**
   * Approvals (docs/spec/lifecycle.md §9): adds the fuzzer's tool `fuzz_approval` (needs approval, expires;
   * some calls are asked by `tools/pre-execute` with `ask`) and the commands that decide (approve,
   * edit, deny) and expire while parked; steers and cancels already come from the commands. With
   * or without it, a run that parks (your own `needsApproval` tools) is decided at its end, and
   * R9 (nothing runs while parked, a body never before its approve) and R10 (a body at most once
   * per call) are checked on every run. Default false.
   */
  approvals?: boolean
  /**
   * Input rounds (docs/spec/lifecycle.md §11): adds the fuzzer's tools `fuzz_ask` (its body asks
   * 0–3 rounds of form, text, choice and url requests, each expiring) and `fuzz_client` (a client
   * tool), and the commands that answer, decline, refuse an invalid answer and expire; while
   * parked a round is answered, declined, dismissed, expired, steered over, cancelled, or the
   * agent is disposed or crashed between rounds and the session resumed. With or without it,
   * R10 (a body at most once per call and round) and R11 (no body while its round is open; an
   * answer reaches its body once, after it is logged) are checked on every run, and L21 by
   * `verify`; the census counts the shapes reached (`input: …`). Default false.
   */
  inputs?: boolean
  /**
   * Child sessions (docs/spec/lifecycle.md §10): adds the fuzzer's subagent tool `fuzz_child` (a real
   * `defineSubagent`), whose every call runs a generated child session (text, calls of its own
   * tool, a terminal error, a grandchild, sometimes a small budget that trips) in an in-memory
   * store the run's agent writes to. The children stream and run tools under the same scheduler,
   * so the parent's cancels land mid-child. After each run the family is checked: L19 (each
   * child's header against its parent's `child/spawned`; one `tool/result` per spawning call),
   * every L invariant (L20 included) on each child's log, the call's result is the child's answer
   * (an error when the child did not complete), and no child is left running or starts anything
   * after its call's result. Default false (fixed seeds keep their scenarios).
   */
  children?: boolean
  /** Extra commands, mixed into the generated ones (e.g. a plugin's manual operation). */
  commands?: ReadonlyArray<fc.Arbitrary<FuzzCommand>>
  /** An extra check after each run (after the final followup); throw to fail the run. */
  check?: (run: FuzzRun) => void
}

/** What `fuzzAgent` resolves to when every run held every invariant. */
export interface FuzzReport {
  numRuns: number
  seed: number
  /** What the runs exercised: turn ends, step outcomes, tool results, bodies per tool, contained errors, cancels. */
  census: FuzzCensus
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
