/**
 * L20: a `budget` turn end names a limit that the usage derived up to that point reaches
 * (docs/spec/invariants.md; docs/spec/lifecycle.md §10). The usage is the budget fold of events/budget.ts, the same
 * one the agent checks before each request, so a live agent, a resumed one and `verify` agree.
 *
 * For token and tool-call limits the derived number must reach `limit` and equal `used` exactly.
 * A cost limit needs the user's `price` (`CheckerOptions.price`, `verify(events, { price })`):
 * with it, the derived cost (or a call whose price is unknown) must reach `limit` and `used` must
 * equal the derived cost; without it the log's own numbers are checked (`used >= limit`, or
 * `unpriced` calls), since nothing in the log says what a token cost.
 *
 * A family's budget (a parent's covers its children): `outside` is the part of `used` that other
 * logs of the family recorded; the derived usage plus `outside` is what must reach the limit and
 * equal `used`.
 */
import { BudgetTracker, type PriceFn } from '../budget.js'
import type { SessionEvent } from '../envelope.js'
import type { Emit } from './types.js'

export class BudgetCheck {
  readonly #tracker: BudgetTracker
  readonly #priced: boolean

  constructor(price: PriceFn | undefined) {
    this.#priced = price !== undefined
    this.#tracker = new BudgetTracker(price ?? null)
  }

  check(e: SessionEvent, emit: Emit): void {
    if (e.type !== 'turn/end' || e.data.reason.kind !== 'budget') return
    const r = e.data.reason
    const t = this.#tracker
    const outside = r.outside ?? 0
    if (r.which === 'costUsd') {
      const unpriced = this.#priced ? t.unpriced(r.scope) : r.unpriced ?? 0
      const used = this.#priced ? t.used('costUsd', r.scope) + outside : r.used
      if (used < r.limit && unpriced === 0) {
        emit('L20', `turn ended budget costUsd (${r.scope}) at ${r.used} of ${r.limit}, but the cost derived so far is ${used}, below the limit`)
      } else if (this.#priced && !close(used, r.used)) {
        emit('L20', `turn ended budget costUsd (${r.scope}) naming used ${r.used}, but the cost derived so far is ${used}`)
      }
      return
    }
    const used = t.used(r.which, r.scope) + outside
    if (used < r.limit) {
      emit('L20', `turn ended budget ${r.which} (${r.scope}) at limit ${r.limit}, but the usage derived so far is ${used}${outside > 0 ? ` (with ${outside} outside this log)` : ''}, below it`)
    } else if (used !== r.used) {
      emit('L20', `turn ended budget ${r.which} (${r.scope}) naming used ${r.used}, but the usage derived so far is ${used}${outside > 0 ? ` (with ${outside} outside this log)` : ''}`)
    }
  }

  apply(e: SessionEvent): void {
    this.#tracker.apply(e)
  }
}

/** Sums of the same prices in the same order are equal; a tolerance keeps a re-serialised float honest. */
function close(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))
}
