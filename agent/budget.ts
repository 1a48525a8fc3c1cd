/**
 * Budgets (docs/spec/lifecycle.md §10): the agent's live meter. It folds every committed event with the
 * budget fold of events/budget.ts (the one `verify` checks L20 with and `replay` shows), prices the
 * counted model calls with the user's `price` (inside a guard, only here, never on the append
 * path), and answers the turn driver's question before each request: is a limit reached? If so the
 * request is not made and the turn ends `{kind: 'budget', which, scope, limit, used}`. A request
 * that starts below every limit may end past one: the overshoot is at most that one request (and
 * its tool calls).
 *
 * `agent/budget` (a live event) is emitted when a limit's use crosses `warnAt × limit`, at the
 * check before a request or at a turn's end, once per crossing: the baseline is the use when the
 * agent was created (a resumed agent does not warn again about a crossing before the crash) and,
 * for a turn budget, zero at each turn that does not continue another (retry and resume turns do).
 *
 * A family (agent/budget-family.ts): the use of a limit is this log's plus its descendants' (their
 * events reach this meter through the links it gave them), and a child's meter also answers for
 * its ancestors' limits. A `toolCalls` limit is also checked per call (`callGate`): calls of a
 * response past it get a `BUDGET` result and never run.
 */
import {
  BUDGET_LIMITS, BUDGET_SCOPES, BudgetTracker, TurnlogError,
  type BudgetEndReason, type BudgetLimitName, type BudgetScope, type LogEvent, type ToolErrorInfo, type Usage,
} from '../events/index.js'
import { AccountLink, type Account, type AccountOwner } from './budget-family.js'

/** One budget: any of the limits, in one scope. */
export interface BudgetOptions {
  /** Prompt tokens: input + cache read + cache write (usage buckets are disjoint). */
  inputTokens?: number
  /** Output tokens: output + reasoning. */
  outputTokens?: number
  /** inputTokens + outputTokens. */
  totalTokens?: number
  /** Dollars, from `price`. Needs `price`. */
  costUsd?: number
  /** Tool calls that started (a call denied or aborted before it started does not count). */
  toolCalls?: number
  /** `'turn'`: each turn (with the retry and resume turns that continue it); `'session'`: the whole log. */
  scope: BudgetScope
  /**
   * The cost of one model call in dollars: `model` is the call's `config.model` (after
   * `agent/request`), `usage` its usage (disjoint buckets). User code, called synchronously inside a
   * guard before requests (never while an event is appended), once per call in log order, also for
   * the calls of a resumed log: keep it pure. A throw or a value that is not a finite number >= 0
   * is reported as `agent/error` (`BUDGET_PRICE`) and makes the cost unknown, which counts as the
   * cost limit reached (a broken price never lets spending run unbounded).
   */
  price?: (model: string, usage: Usage) => number
  /** The fraction of a limit at which `agent/budget` is emitted. Default 0.8; in (0, 1]. */
  warnAt?: number
}

/** `agent/budget`: a limit crossed its `warnAt` fraction. */
export interface BudgetWarning {
  which: BudgetLimitName
  scope: BudgetScope
  limit: number
  used: number
  warnAt: number
  /** The open turn, or the last one. */
  turn: number
}

/** One limit's state (`agent.budgets()`). */
export interface BudgetStatus {
  which: BudgetLimitName
  scope: BudgetScope
  limit: number
  /** Derived from the log; for `costUsd`, what `price` gave. */
  used: number
  /** Model calls whose price is unknown (cost limits only; they count as the limit reached). */
  unpriced: number
  /** `used >= limit` (or an unknown price): the next request would not be made. */
  reached: boolean
}

interface Limit {
  which: BudgetLimitName
  scope: BudgetScope
  limit: number
  warnAt: number
  tracker: BudgetTracker
  /** The index of its budget (its tracker in a descendant's account). */
  budget: number
  /** The use at the last warning check (see the file comment). */
  baseline: number
}

/** Checks `options.budget` (a budget or a list of them). Throws `INVALID_OPTION` naming the field. */
export function normaliseBudgets(budget: BudgetOptions | readonly BudgetOptions[]): BudgetOptions[] {
  const list = Array.isArray(budget) ? (budget as readonly BudgetOptions[]) : [budget as BudgetOptions]
  return list.map((b, i) => {
    const at = Array.isArray(budget) ? `budget.${i}` : 'budget'
    const bad = (field: string, what: string): never => {
      throw new TurnlogError('INVALID_OPTION', `createAgent: options.${at}.${field} ${what}`, { field: `${at}.${field}` })
    }
    if (!BUDGET_SCOPES.includes(b.scope)) bad('scope', `must be 'turn' or 'session'`)
    let any = false
    for (const which of BUDGET_LIMITS) {
      const v = b[which]
      if (v === undefined) continue
      any = true
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(which, 'must be a finite number >= 0')
      if (which === 'toolCalls' || which.endsWith('Tokens')) {
        if (!Number.isInteger(v)) bad(which, 'must be an integer')
      }
    }
    if (!any) bad('costUsd', `is missing: a budget needs at least one of ${BUDGET_LIMITS.join(', ')}`)
    if (b.costUsd !== undefined && typeof b.price !== 'function') bad('price', 'is missing: a costUsd budget needs price(model, usage) => usd')
    const w = b.warnAt ?? 0.8
    if (typeof w !== 'number' || !(w > 0 && w <= 1)) bad('warnAt', 'must be a number in (0, 1]')
    return b
  })
}

/** The live meter (see the file comment). */
export class BudgetMeter implements AccountOwner {
  readonly #limits: Limit[] = []
  readonly #emit: (w: BudgetWarning) => void
  /** Makes a descendant's account: one tracker per budget, with that budget's price. */
  readonly #newTrackers: () => BudgetTracker[]
  /** Descendant sessions' accounts (agent/budget-family.ts); null until the first child. */
  #accounts: Map<string, Account> | null = null
  /** The turn chain: bumped at each `turn/start` that does not continue another. */
  #gen = 0
  /** Links to the ancestors' accounts for this session. */
  readonly #up: readonly AccountLink[]
  #turn = 0

  /**
   * `report` hears a price that failed (`agent/error`); `emit` sends `agent/budget`. `prefix`: the
   * log so far (resume, fork), folded first.
   */
  constructor(
    budgets: readonly BudgetOptions[],
    report: (error: unknown, where: string) => void,
    emit: (w: BudgetWarning) => void,
    up: readonly AccountLink[] = [],
  ) {
    this.#emit = emit
    this.#up = up
    const tracker = (b: BudgetOptions) => {
      const price = b.price
      return new BudgetTracker(price === undefined ? null : (model, usage) => price(model, usage), (err, model) => {
        report(new TurnlogError('BUDGET_PRICE', `budget price failed for model ${JSON.stringify(model)}: ${text(err)}`, {
          info: { model },
        }, { cause: err }), 'budget/price')
      })
    }
    this.#newTrackers = () => budgets.map(tracker)
    budgets.forEach((b, budget) => {
      const t = tracker(b)
      for (const which of BUDGET_LIMITS) {
        const limit = b[which]
        if (limit !== undefined) this.#limits.push({ which, scope: b.scope, limit, warnAt: b.warnAt ?? 0.8, tracker: t, budget, baseline: 0 })
      }
    })
  }

  /** Folds one committed event (O(1); pricing waits for the next check), and hands it to the ancestors' accounts. */
  apply(e: LogEvent): void {
    const seen = new Set<BudgetTracker>()
    const restart = e.type === 'turn/start' && (e.data as { cause?: unknown }).cause === undefined
    for (const l of this.#limits) {
      if (!seen.has(l.tracker)) {
        seen.add(l.tracker)
        l.tracker.apply(e)
      }
      if (restart && l.scope === 'turn') l.baseline = 0
    }
    if (restart) this.#gen++
    if (e.type === 'turn/start') this.#turn = (e.data as { turn: number }).turn
    for (const u of this.#up) u.apply(e)
  }

  /**
   * The links a child session (a subagent call's) gets: this meter's account for it (when this
   * agent has limits) and its ancestors' (agent/budget-family.ts).
   */
  link(child: string): AccountLink[] {
    return [...(this.#limits.length > 0 ? [new AccountLink(this, child, this.#gen)] : []), ...this.#up.map((u) => u.link(child))]
  }

  /** @internal (AccountOwner) */
  account(id: string, gen: number): Account {
    const map = (this.#accounts ??= new Map())
    let a = map.get(id)
    if (a === undefined) map.set(id, (a = { trackers: this.#newTrackers(), gen }))
    return a
  }

  /** @internal (AccountOwner) */
  reachedFor(own: Account): BudgetEndReason | null {
    for (const l of this.#limits) {
      const used = this.#used(l)
      const unpriced = this.#unpriced(l)
      if (used >= l.limit || unpriced > 0) {
        // the descendant's whole log counts (it lies inside this session's turn)
        const mine = own.trackers[l.budget]!.used(l.which, 'session')
        return reason(l, used, unpriced, used - mine, 'session')
      }
    }
    return null
  }

  /**
   * Before a step's tool calls run: a gate called right before each call starts, answering a
   * `BUDGET` error for a call past a `toolCalls` limit (of this agent or an ancestor), or null.
   * Undefined when no `toolCalls` limit applies. The room is taken when the step's calls begin;
   * each call let through takes one (a call a pre-execute hook then refuses takes one too).
   */
  callGate(): ((name: string) => ToolErrorInfo | null) | undefined {
    let room = this.callRoom()
    for (const u of this.#up) room = Math.min(room, u.callRoom())
    if (room === Infinity) return undefined
    const limits = this.#limits.filter((l) => l.which === 'toolCalls')
    const which = limits.length > 0 ? `the ${limits[0]!.scope} toolCalls budget (${limits[0]!.limit})` : `the toolCalls budget of a parent session`
    return (name) => {
      if (room > 0) {
        room--
        return null
      }
      return { code: 'BUDGET', message: `Tool '${name}' was not run: ${which} is spent.` }
    }
  }

  /** @internal (AccountOwner) */
  callRoom(): number {
    let room = Infinity
    for (const l of this.#limits) if (l.which === 'toolCalls') room = Math.min(room, Math.max(0, l.limit - this.#used(l)))
    return room
  }

  /** A limit's use: this log's in its scope plus its descendants' (a turn limit: those of this chain). */
  #used(l: Limit): number {
    let used = l.tracker.used(l.which, l.scope)
    if (this.#accounts !== null) {
      for (const a of this.#accounts.values()) if (l.scope === 'session' || a.gen === this.#gen) used += a.trackers[l.budget]!.used(l.which, 'session')
    }
    return used
  }

  #unpriced(l: Limit): number {
    if (l.which !== 'costUsd') return 0
    let n = l.tracker.unpriced(l.scope)
    if (this.#accounts !== null) {
      for (const a of this.#accounts.values()) if (l.scope === 'session' || a.gen === this.#gen) n += a.trackers[l.budget]!.unpriced('session')
    }
    return n
  }

  /** After the prefix: what was used before this agent counts as already warned about. */
  startBaselines(): void {
    for (const l of this.#limits) l.baseline = this.#effective(l)
  }

  /**
   * Before a request: emits the warnings due, and returns the first reached limit (budgets in the
   * order given, limits in `BUDGET_LIMITS` order) as the turn's end reason, or null.
   */
  check(): BudgetEndReason | null {
    this.warn()
    for (const l of this.#limits) {
      const used = this.#used(l)
      const unpriced = this.#unpriced(l)
      if (used >= l.limit || unpriced > 0) return reason(l, used, unpriced, used - l.tracker.used(l.which, l.scope))
    }
    // then the ancestors' limits, over the family's use (agent/budget-family.ts)
    for (const u of this.#up) {
      const r = u.reached()
      if (r !== null) return r
    }
    return null
  }

  /** Emits `agent/budget` for every limit whose use crossed `warnAt × limit` since the last check. */
  warn(): void {
    for (const l of this.#limits) {
      const now = this.#effective(l)
      const threshold = l.warnAt * l.limit
      if (l.baseline < threshold && now >= threshold) {
        this.#emit({ which: l.which, scope: l.scope, limit: l.limit, used: this.#used(l), warnAt: l.warnAt, turn: this.#turn })
      }
      l.baseline = now
    }
  }

  /** Every limit's state now (`agent.budgets()`). */
  status(): BudgetStatus[] {
    return this.#limits.map((l) => {
      const used = this.#used(l)
      const unpriced = this.#unpriced(l)
      return { which: l.which, scope: l.scope, limit: l.limit, used, unpriced, reached: used >= l.limit || unpriced > 0 }
    })
  }

  /** The use compared with thresholds: an unknown price counts as past every threshold. */
  #effective(l: Limit): number {
    if (this.#unpriced(l) > 0) return Infinity
    return this.#used(l)
  }
}

/** A limit's end reason: `outside` is the part of `used` other logs of the family recorded. */
function reason(l: Limit, used: number, unpriced: number, outside: number, scope: BudgetScope = l.scope): BudgetEndReason {
  return {
    kind: 'budget', which: l.which, scope, limit: l.limit, used,
    ...(unpriced > 0 ? { unpriced } : {}), ...(outside > 0 ? { outside } : {}),
  }
}

function text(err: unknown): string {
  try {
    return err instanceof Error ? err.message : String(err)
  } catch {
    return 'an unprintable error'
  }
}
