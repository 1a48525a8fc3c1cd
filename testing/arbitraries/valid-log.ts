/** `arbValidLog`: fast-check arbitrary of complete, valid session logs. */
import fc from 'fast-check'
import type { LogEvent } from '../../events/envelope.js'
import type { CheckerOptions } from '../../events/invariants/types.js'
import { buildLog } from './builder.js'
import { arbLogPlan, type LogPlan, type StepKind } from './plan.js'

export interface ValidLogOptions {
  /** Most planned turns (retry turns count). Default 6; `big` makes it 120. */
  maxTurns?: number
  /** Fewest planned turns. Default 1 (`big`: half of maxTurns). */
  minTurns?: number
  /** Most planned steps per turn. Default `maxStepsPerTurn + 1` (so `step-limit` happens). */
  maxSteps?: number
  /** The step budget the logs obey; pass the same to the checker. Default 3 (small, so budgets are hit). */
  maxStepsPerTurn?: number
  /** The retry maximum the logs obey; pass the same to the checker. Default 3. */
  maxRetries?: number
  /** Big logs: many turns (thousands of events). */
  big?: boolean
  /** Relative weights of the step kinds. */
  stepWeights?: Partial<Record<StepKind, number>>
}

export const DEFAULT_MAX_STEPS_PER_TURN = 3
export const DEFAULT_MAX_RETRIES = 3

/** The checker options a log of `arbValidLog(opts)` is valid under. */
export function checkerOptionsFor(opts: ValidLogOptions = {}): Required<Omit<CheckerOptions, 'price'>> {
  return {
    maxStepsPerTurn: opts.maxStepsPerTurn ?? DEFAULT_MAX_STEPS_PER_TURN,
    maxRetries: opts.maxRetries ?? DEFAULT_MAX_RETRIES,
    maxResumeRuns: 3,
  }
}

/** A plan and the log it builds (shrinks through the plan). */
export function arbValidLogWithPlan(opts: ValidLogOptions = {}): fc.Arbitrary<{ plan: LogPlan; log: LogEvent[] }> {
  const check = checkerOptionsFor(opts)
  const maxTurns = opts.maxTurns ?? (opts.big ? 120 : 6)
  return arbLogPlan({
    maxTurns,
    minTurns: Math.min(opts.minTurns ?? (opts.big ? maxTurns >> 1 : 1), maxTurns),
    maxSteps: opts.maxSteps ?? check.maxStepsPerTurn + 1,
    ...(opts.stepWeights ? { stepWeights: opts.stepWeights } : {}),
  }).map((plan) => ({ plan, log: buildLog(plan, check) }))
}

/**
 * A valid, complete event list (seq from 0, time non-decreasing, every turn closed) of any shape
 * the lifecycle allows. Valid under `checkerOptionsFor(opts)`.
 */
export function arbValidLog(opts: ValidLogOptions = {}): fc.Arbitrary<LogEvent[]> {
  return arbValidLogWithPlan(opts).map(({ log }) => log)
}
