/**
 * A family's budget (docs/spec/lifecycle.md §10): a parent's budget covers its children's usage,
 * rolled up live, and a child may have a tighter budget of its own. The parent's meter keeps one
 * account per descendant session (the budget fold of events/budget.ts over that session's events,
 * priced with the parent's price); a child's meter holds a link to each ancestor's account for it
 * and (1) forwards every event it commits to them and (2) asks them, after its own limits, whether
 * the family reached an ancestor's limit before each request and before each tool call.
 *
 * The link is the child's whole log (a child lives inside one call of its parent, so its session
 * lies inside the parent's turn): a child stopped by an ancestor's budget ends its turn
 * `{kind: 'budget', which, scope: 'session', limit, used, outside}`, with `used` the family's use
 * and `outside` the part other logs recorded, so L20 holds on each log alone.
 */
import type { BudgetEndReason, LogEvent } from '../events/index.js'
import type { BudgetTracker } from '../events/index.js'

/** One descendant session's usage as an ancestor's meter counts it (one tracker per budget). */
export interface Account {
  readonly trackers: readonly BudgetTracker[]
  /** The ancestor's turn chain the account was opened in (a turn budget counts only its own chain's children). */
  readonly gen: number
}

/** What a link needs of the ancestor's meter. */
export interface AccountOwner {
  /** The account of session `id`, opened in chain `gen` if new. */
  account(id: string, gen: number): Account
  /** The first of the owner's limits the family reached, as the end reason of the session whose account is `own`. */
  reachedFor(own: Account): BudgetEndReason | null
  /** How many more tool calls the owner's `toolCalls` limits allow the family (Infinity without one). */
  callRoom(): number
}

/** One ancestor's account for one descendant session. */
export class AccountLink {
  readonly #account: Account
  constructor(readonly owner: AccountOwner, readonly session: string, readonly gen: number) {
    this.#account = owner.account(session, gen)
  }

  /** An event the linked session committed. */
  apply(e: LogEvent): void {
    for (const t of this.#account.trackers) t.apply(e)
  }

  /** The owner's first limit the family reached, as the linked session's end reason, or null. */
  reached(): BudgetEndReason | null {
    return this.owner.reachedFor(this.#account)
  }

  callRoom(): number {
    return this.owner.callRoom()
  }

  /** The same ancestor's account for a child of the linked session (same chain). */
  link(child: string): AccountLink {
    return new AccountLink(this.owner, child, this.gen)
  }
}

/** The option member a subagent call gives its child: the links of every ancestor with a budget. */
export const PARENT_BUDGET: unique symbol = Symbol.for('turnlog.parentBudget')
