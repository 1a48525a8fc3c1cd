/** What the log checker reports. */
export interface Violation {
  /** The invariant id of docs/spec/invariants.md: 'L1' … 'L16' ('SCHEMA' from `verify` for an event that failed validation). */
  invariant: string
  /** The seq of the first event at which the violation is decidable (the event's position in the log). */
  seq: number
  message: string
  /** For 'SCHEMA' violations: the offending field, when known (`data.turn`). */
  field?: string
  /** The rule of the invariant that was broken, for invariants with coded rules (L21: `INPUT_ROUND`, …). */
  rule?: string
}

export interface CheckerOptions {
  /** The agent's step budget; a `step-limit` turn has exactly this many steps (L12). Default 64. */
  maxStepsPerTurn?: number
  /** The retry policy's maximum; `llm/retry.attempt` never exceeds it (L16). Default 5. */
  maxRetries?: number
  /** The resume bound: a chain of resume turns is at most this long (L13, docs/spec/lifecycle.md §8). Default 3. */
  maxResumeRuns?: number
  /**
   * The price function of the session's cost budget (`budget.price`), to check L20 for `costUsd`
   * budget ends against the derived cost. Without it those ends are checked against their own
   * numbers only. Called once per model call, in log order; a throw counts as an unknown price.
   */
  price?: (model: string, usage: import('../messages.js').Usage) => number
}

/** The L invariant ids, in order. */
export type LogInvariant =
  | 'L1' | 'L2' | 'L3' | 'L4' | 'L5' | 'L6' | 'L7' | 'L8' | 'L9' | 'L10' | 'L11' | 'L12' | 'L13' | 'L14' | 'L15' | 'L16' | 'L17' | 'L18'
  | 'L19'
  | 'L20'
  | 'L21'

/** The wakeup rules (events/invariants/schedules.ts): W1–W3 of docs/spec/invariants.md. */
export type ScheduleInvariant = 'W1' | 'W2' | 'W3'

/** How a rule group reports a violation at the event being checked. */
export type Emit = (invariant: LogInvariant | ScheduleInvariant, message: string, rule?: string) => void
