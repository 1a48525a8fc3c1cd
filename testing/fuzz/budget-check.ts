/** The fuzzer's budget checks after a run (the comment of budget.ts says what they are). */
import { BudgetTracker } from '../../events/index.js'
import { verify } from '../../replay/verify.js'
import { budgetOptions, type FuzzBudget } from './budget.js'
import { failed } from './oracle.js'
import type { Run } from './run.js'

/** L20 with the price, and no model request made while the budget was reached. */
export function checkBudget(run: Run, b: FuzzBudget): void {
  const events = run.agent.events
  // the same throw at the same call: the checker prices calls in log order, as the agent did
  const opts = budgetOptions(b)
  const v = verify(events, { maxStepsPerTurn: Infinity, maxRetries: 5, ...(opts.price ? { price: opts.price } : {}) }).violations.filter((x) => x.invariant === 'L20')
  if (v.length > 0) throw failed(`L20: ${v[0]!.message} (seq ${v[0]!.seq})`, run)
  if (run.plugins.length > 0) return
  const replayed = budgetOptions(b)
  const tracker = new BudgetTracker(replayed.price ?? null)
  let seq = 0
  for (const r of run.requests) {
    for (; seq < r.at && seq < events.length; seq++) tracker.apply(events[seq]!)
    const used = tracker.used(b.which, b.scope)
    const unknown = b.which === 'costUsd' && tracker.unpriced(b.scope) > 0
    if (used >= b.limit || unknown) {
      throw failed(`L20: a model request was made at seq ${r.at} with the ${b.scope} ${b.which} budget reached (${used} of ${b.limit}${unknown ? ', a price unknown' : ''})`, run)
    }
  }
}
