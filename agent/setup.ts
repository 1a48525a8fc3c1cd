/**
 * The constructor's per-feature set-up, each returning what the agent keeps: the budget meter,
 * the wakeups, and the one fold per committed event that feeds them with the live projections
 * (run once over an inherited prefix, then per append). Split from agent.ts so the constructor
 * reads as a list of features.
 */
import type { LogEvent, Session } from '../events/index.js'
import { inboxReducer, type InboxState } from '../reducers/inbox.js'
import { BudgetMeter, normaliseBudgets } from './budget.js'
import { PARENT_BUDGET, type AccountLink } from './budget-family.js'
import { foldLive, type LiveFolds } from './live-state.js'
import type { HookName, AgentOptions } from './types.js'
import { Wakeups, type WakeupHost } from './wakeups.js'

/**
 * `options.budget`'s live meter, with the links to its ancestors' budgets a subagent call gave it
 * (agent/budget-family.ts), or null when neither applies (agent/budget.ts).
 */
export function budgetMeter(
  options: AgentOptions,
  reportError: (error: unknown, where: string) => void,
  emit: (name: HookName, payload: unknown) => void,
): BudgetMeter | null {
  const up = (options as { [PARENT_BUDGET]?: readonly AccountLink[] })[PARENT_BUDGET] ?? []
  if (options.budget === undefined && up.length === 0) return null
  return new BudgetMeter(options.budget === undefined ? [] : normaliseBudgets(options.budget), reportError, (w) => emit('agent/budget', w), up)
}

/** The wakeups (docs/spec/lifecycle.md §10): one timer unless `wakeups.timer: false`; held while a prefix waits for its first wake. */
export function wakeups(options: AgentOptions, host: WakeupHost, hasPrefix: boolean): Wakeups {
  return new Wakeups(host, options.wakeups?.timer !== false, hasPrefix)
}

/** What the one fold writes. */
export interface FoldTargets extends LiveFolds {
  readonly session: Session
  readonly budget: BudgetMeter | null
  readonly wakeups: Wakeups
}

/**
 * One pass over an inherited prefix (the live projections, the budget meter, the wakeups and the
 * pending inbox it left), then one fold per committed event for all of them. Returns the pending
 * inbox of the prefix.
 */
export function installFold(agent: FoldTargets): InboxState {
  const meter = agent.budget
  const fold = (e: LogEvent) => {
    foldLive(agent, e)
    meter?.apply(e)
    agent.wakeups.fold(e)
  }
  const pending = inboxReducer.initial()
  for (const e of agent.session.events) {
    fold(e)
    inboxReducer.apply(pending, e)
  }
  meter?.startBaselines()
  agent.session.addFold(fold)
  return pending
}
