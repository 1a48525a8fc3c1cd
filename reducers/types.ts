/**
 * A reducer is a pure draft recipe over one event, plus the initial state. The same recipe serves
 * the live agent (applied to a plain mutable state, O(1) amortised per event) and bulk replay
 * (applied inside one immer `produce` per batch). Recipes never read the log, only their state.
 */
import type { LogEvent } from '../events/index.js'

export interface Reducer<S> {
  readonly name: string
  initial(): S
  /** Mutates `draft` to account for `event`. Must not keep references to mutable parts of `event`
   * (events are frozen, so sharing them is safe) and must not throw on any event that passed the
   * log checker. */
  apply(draft: S, event: LogEvent): void
}
