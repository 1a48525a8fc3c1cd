/** What the log checker reports. */
export interface Violation {
  /** The invariant id of invariants.md: 'L1' … 'L16'. */
  invariant: string
  /** The seq of the first event at which the violation is decidable. */
  seq: number
  message: string
}

export interface CheckerOptions {
  /** The agent's step budget; a `step-limit` turn has exactly this many steps (L12). Default 64. */
  maxStepsPerTurn?: number
  /** The retry policy's maximum; `llm/retry.attempt` never exceeds it (L16). Default 5. */
  maxRetries?: number
}
