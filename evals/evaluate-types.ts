/** The public types of `evaluate` (docs/spec/api.md "Golden sessions"): options, graders, the report. */
import type { LogEvent } from '../events/index.js'
import type { LogHeader } from '../events/jsonl.js'
import type { ModelAdapter } from '../models/types.js'
import type { ReplayState } from '../replay/replay.js'
import type { UsageTotals } from '../reducers/usage.js'
import type { Golden, GoldenInput, RerunDivergence, RerunOptions, RerunResult, StepModel } from './types.js'

/** A log as graders see it: its header, events and the folded state (surface, history, transcript, inbox, lifecycle, usage). */
export interface GradedLog {
  header: LogHeader
  events: readonly LogEvent[]
  state: ReplayState
}

/** What a grader gets besides the two logs. */
export interface GraderContext {
  /** The re-run: divergence, tool-sequence diff, usage delta, verify, unrecorded calls, re-issued inputs. */
  run: RerunResult
  /** The golden's name in the report. */
  name: string
  /** The trial, from 0. */
  trial: number
  /** The cost of the live part of each log (USD with `price`, else tokens). */
  cost: { golden: number; rerun: number; unit: 'usd' | 'tokens' }
}

/**
 * A grader's answer: `true`/`false`; a score in [0, 1] (passes at 1, or at the grader's
 * `threshold`); or `{ pass, score?, reason? }`.
 */
export type GraderScore = boolean | number | { pass: boolean; score?: number; reason?: string }

/** A function of the re-run's log and the golden. A throw fails the trial (the reason names it); it never stops the evaluation. */
export type GraderFn = (log: GradedLog, golden: GradedLog, ctx: GraderContext) => GraderScore | Promise<GraderScore>

/** A named grader (built-ins are these). */
export interface Grader {
  name: string
  grade: GraderFn
  /** A numeric score passes at or above this (default 1). */
  threshold?: number
}

/** USD per million tokens, by bucket; or a function of a usage total. */
export type Price =
  | { input: number; output: number; cacheRead?: number; cacheWrite?: number; reasoning?: number }
  | ((usage: UsageTotals) => number)

export interface EvaluateOptions extends Omit<RerunOptions, 'model'> {
  /** The model under test, or a factory called per trial (a fresh adapter, e.g. one per seed). */
  model: ModelAdapter | StepModel | ((ctx: { golden: Golden; name: string; trial: number }) => ModelAdapter | StepModel)
  /** Default: `noInvariantBroken()`, `sameToolSequence()`, `sameFinalAnswer()`. */
  graders?: ReadonlyArray<Grader | GraderFn>
  /** Re-runs per golden (default 1). */
  trials?: number
  /** A golden passes when `'all'` its trials pass (pass^k = 1, the default: flaky fails) or `'any'` does (pass@k = 1). */
  passWhen?: 'all' | 'any'
  /** Prices, for costs in USD (`maxCostUsd`, `costWithin`). */
  price?: Price
  /** Stop starting trials once the re-runs together cost this much (needs `price`). */
  maxCostUsd?: number
  /** Called after each trial (progress; the CLI keeps the first failing run for its report). */
  onTrial?: (t: { name: string; trial: number; trials: number; index: number; goldens: number; result: TrialResult; run: RerunResult | null }) => void
}

export interface GraderResult {
  name: string
  pass: boolean
  score?: number
  reason?: string
}

export interface TrialResult {
  trial: number
  pass: boolean
  graders: GraderResult[]
  divergence: Omit<RerunDivergence, 'expected' | 'actual'> | null
  /** Live-part usage of the re-run. */
  usage: UsageTotals
  /** With `price`. */
  costUsd?: number
  durationMs: number
  /** The re-run threw (bad golden, bad options) or timed out. */
  error?: string
}

export interface GoldenReport {
  name: string
  path?: string
  trials: TrialResult[]
  /** Trials run (fewer than asked when `maxCostUsd` stopped the evaluation). */
  n: number
  /** Trials that passed every grader. */
  passed: number
  /** pass@k for k = 1..n: the chance that at least one of k trials drawn from the n passes. */
  passAtK: Record<string, number>
  /** pass^k for k = 1..n: the chance that all k trials drawn from the n pass. */
  passHatK: Record<string, number>
  /** Some trials passed and some failed. */
  flaky: boolean
  pass: boolean
  costUsd?: number
}

export interface EvalReport {
  goldens: GoldenReport[]
  summary: {
    goldens: number
    passed: number
    failed: number
    flaky: number
    trials: number
    costUsd?: number
    /** Why trials were left unrun. */
    stopped?: 'maxCostUsd'
  }
  /** True when every golden passed. */
  ok: boolean
}

export type GoldenSet = ReadonlyArray<GoldenInput> | Readonly<Record<string, GoldenInput>>
