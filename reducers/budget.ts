/**
 * The budget slice of `ReplayState` (docs/spec/lifecycle.md §10): tokens and tool calls per scope (the
 * session, the open turn's chain), folded by events/budget.ts — the same fold the agent checks its
 * budget with and `verify` checks L20 with, so replay, resume and the live agent agree. Cost is not
 * here: it needs the user's price function (`BudgetTracker`, or `agent.budgets()` live).
 */
import { applyBudgetUsage, initialBudgetUsage, type BudgetUsageState } from '../events/budget.js'
import type { Reducer } from './types.js'

export type BudgetState = BudgetUsageState

export const budgetReducer: Reducer<BudgetState> = {
  name: 'budget',
  initial: initialBudgetUsage,
  apply(draft, event) {
    applyBudgetUsage(draft, event)
  },
}
