/**
 * Budget usage (docs/spec/lifecycle.md §10, L20): what a budget counts, folded from the log. One fold serves
 * the reducer (`reducers/budget.ts`, `replay(...).budget`), the invariant checker (L20,
 * `events/invariants/budget.ts`) and the live agent (`agent/budget.ts`), so a live agent, a
 * resumed one and `verify` derive the same numbers from the same events.
 *
 * What counts (decision record "budgets" (docs/decisions/ in the repository)):
 * - tokens: every model call the usage reducer counts (a successful request's `assistant/message`
 *   usage or its usage chunk; a failed request's usage chunk, at its `step/end`; a summary's
 *   `compaction/summary.usage`). `inputTokens` = input + cache read + cache write (every prompt
 *   token: the buckets are disjoint); `outputTokens` = output + reasoning; `totalTokens` = both.
 * - tool calls: every appended `tool/result` whose call was started, that is every result except
 *   the synthetic ones of calls that never started (`ABORTED_BEFORE_DISPATCH`, `TOOL_NOT_STARTED`,
 *   `DENIED`, `APPROVAL_EXPIRED`, and `BUDGET`: a call past a `toolCalls` limit). A replacing `tool/result` (compaction) is not a new call.
 * - cost: each counted model call priced by the user's `price(model, usage)`; `model` is the
 *   `config.model` of the last `request/header` (the header in force for that call). Pricing is the
 *   user's code, so it is done by `BudgetTracker`, never by the pure fold.
 *
 * Scopes: `session` is the whole log (an inherited prefix included). `turn` is the open turn plus
 * the turns it continues: a retry turn (`cause.kind === 'retry'`) and a resume turn (`'resume'`)
 * keep the turn counters of the turn they re-run, so a failure chain or a crash cannot reset a
 * per-turn budget. Every other `turn/start` starts them at zero.
 */
import type { BudgetLimitName, BudgetScope } from './data.js'
import type { EventOf, LogEvent } from './envelope.js'
import type { Usage } from './messages.js'

export { BUDGET_LIMITS, BUDGET_SCOPES, type BudgetLimitName, type BudgetScope } from './data.js'

/** Result codes of calls that never started: not counted as tool calls. */
const NOT_STARTED: ReadonlySet<string> = new Set(['ABORTED_BEFORE_DISPATCH', 'TOOL_NOT_STARTED', 'DENIED', 'APPROVAL_EXPIRED', 'BUDGET'])

/** What one scope has used, apart from cost. */
export interface BudgetCounts {
  /** Model calls counted (successful, failed with a usage chunk, summaries). */
  requests: number
  /** input + cacheRead + cacheWrite. */
  inputTokens: number
  /** output + reasoning. */
  outputTokens: number
  /** Started tool calls (their appended results). */
  toolCalls: number
}

/** The fold's state: JSON data (a slice of `ReplayState`). */
export interface BudgetUsageState {
  session: BudgetCounts
  /** The open turn's chain (the last turn's once it ended; zero before the first turn). */
  turn: BudgetCounts
  /** `config.model` of the last `request/header`, or null before the first. */
  model: string | null
  /** The open step's usage chunk not yet counted (a request in flight). */
  pendingChunk: Usage | null
  /** Whether a turn is open (usage outside a turn, e.g. a manual compaction, is session-only). */
  inTurn: boolean
}

/** One model call that was counted: what pricing needs. */
export interface CountedCall {
  model: string | null
  usage: Usage
  /** Counted into the open turn's chain as well as the session. */
  inTurn: boolean
}

export function emptyCounts(): BudgetCounts {
  return { requests: 0, inputTokens: 0, outputTokens: 0, toolCalls: 0 }
}

export function initialBudgetUsage(): BudgetUsageState {
  return { session: emptyCounts(), turn: emptyCounts(), model: null, pendingChunk: null, inTurn: false }
}

function addTokens(c: BudgetCounts, u: Usage): void {
  c.requests += 1
  c.inputTokens += u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0)
  c.outputTokens += u.outputTokens + (u.reasoningTokens ?? 0)
}

function count(s: BudgetUsageState, u: Usage): CountedCall {
  addTokens(s.session, u)
  if (s.inTurn) addTokens(s.turn, u)
  return { model: s.model, usage: u, inTurn: s.inTurn }
}

/**
 * Folds one event (in place). Returns the model call it counted, if any (for pricing), else null.
 * Pure and total: never throws on an event that passed validation.
 */
export function applyBudgetUsage(s: BudgetUsageState, e: LogEvent): CountedCall | null {
  switch (e.type) {
    case 'turn/start': {
      const cause = (e as EventOf<'turn/start'>).data.cause
      if (cause === undefined) s.turn = emptyCounts()
      s.inTurn = true
      return null
    }
    case 'turn/end':
      s.inTurn = false
      return null
    case 'request/header': {
      const model = (e as EventOf<'request/header'>).data.config.model
      s.model = typeof model === 'string' ? model : null
      return null
    }
    case 'step/start':
      s.pendingChunk = null
      return null
    case 'assistant/chunk': {
      const chunk = (e as EventOf<'assistant/chunk'>).data.chunk
      if (chunk.type === 'usage') s.pendingChunk = chunk.usage
      return null
    }
    case 'assistant/message': {
      const u = (e as EventOf<'assistant/message'>).data.usage ?? s.pendingChunk
      s.pendingChunk = null
      // counted as a request even without usage (0 tokens), like the usage reducer
      return count(s, u ?? ZERO)
    }
    case 'step/end': {
      const u = s.pendingChunk
      if (u === null) return null
      s.pendingChunk = null
      return count(s, u)
    }
    case 'compaction/summary': {
      const u = (e as EventOf<'compaction/summary'>).data.usage
      return u ? count(s, u) : null
    }
    case 'tool/result': {
      if (e.surfaceOp !== 'append') return null
      const code = (e as EventOf<'tool/result'>).data.error?.code
      if (code !== undefined && NOT_STARTED.has(code)) return null
      s.session.toolCalls += 1
      if (s.inTurn) s.turn.toolCalls += 1
      return null
    }
    default:
      return null
  }
}

const ZERO: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0 })

/** A scope's count for a limit other than `costUsd`. */
export function countedUsage(c: BudgetCounts, which: Exclude<BudgetLimitName, 'costUsd'>): number {
  switch (which) {
    case 'inputTokens': return c.inputTokens
    case 'outputTokens': return c.outputTokens
    case 'totalTokens': return c.inputTokens + c.outputTokens
    case 'toolCalls': return c.toolCalls
  }
}

/** A price function as the tracker calls it: may throw or return anything (user code). */
export type PriceFn = (model: string, usage: Usage) => unknown

/** Cost so far in each scope, and how many calls could not be priced. */
export interface BudgetCost {
  sessionUsd: number
  turnUsd: number
  /** Calls whose price threw or was not a finite number >= 0 (then the cost is unknown: a cost limit counts as reached). */
  sessionUnpriced: number
  turnUnpriced: number
}

/**
 * The fold plus cost. Pricing is deferred to `settle()` (called where the agent checks its budget,
 * never inside an append), so user code never runs on the append path. `onPriceError` hears each
 * price that threw or returned a bad value; it must not throw.
 */
export class BudgetTracker {
  readonly state = initialBudgetUsage()
  readonly cost: BudgetCost = { sessionUsd: 0, turnUsd: 0, sessionUnpriced: 0, turnUnpriced: 0 }
  readonly #price: PriceFn | null
  readonly #onPriceError: (error: unknown, model: string) => void
  /** Counted calls not priced yet, with the turn-chain generation they were counted in. */
  #queue: Array<{ call: CountedCall; gen: number }> = []
  /** Bumped whenever the turn counters restart (a `turn/start` without a cause). */
  #gen = 0

  constructor(price: PriceFn | null, onPriceError: (error: unknown, model: string) => void = () => {}) {
    this.#price = price
    this.#onPriceError = onPriceError
  }

  apply(e: LogEvent): void {
    if (e.type === 'turn/start' && (e as EventOf<'turn/start'>).data.cause === undefined) {
      // calls still queued belong to the previous chain: when priced they count for the session only
      this.#gen++
      this.cost.turnUsd = 0
      this.cost.turnUnpriced = 0
    }
    const call = applyBudgetUsage(this.state, e)
    if (call !== null && this.#price !== null) this.#queue.push({ call, gen: this.#gen })
  }

  /** Prices every counted call not priced yet (in log order). */
  settle(): void {
    if (this.#queue.length === 0) return
    const queue = this.#queue
    this.#queue = []
    for (const { call, gen } of queue) {
      const model = call.model ?? 'unknown'
      let usd: unknown
      let error: unknown = null
      try {
        usd = this.#price!(model, call.usage)
      } catch (err) {
        error = err ?? new Error('price threw')
      }
      const inTurn = call.inTurn && gen === this.#gen
      if (error === null && typeof usd === 'number' && Number.isFinite(usd) && usd >= 0) {
        this.cost.sessionUsd += usd
        if (inTurn) this.cost.turnUsd += usd
      } else {
        this.cost.sessionUnpriced += 1
        if (inTurn) this.cost.turnUnpriced += 1
        this.#onPriceError(error ?? new Error(`price returned ${describe(usd)}, not a finite number >= 0`), model)
      }
    }
  }

  /** What a scope has used of a limit (settles pending prices first for `costUsd`). */
  used(which: BudgetLimitName, scope: BudgetScope): number {
    if (which === 'costUsd') {
      this.settle()
      return scope === 'session' ? this.cost.sessionUsd : this.cost.turnUsd
    }
    return countedUsage(scope === 'session' ? this.state.session : this.state.turn, which)
  }

  /** Calls of a scope whose price is unknown (after `settle`). */
  unpriced(scope: BudgetScope): number {
    this.settle()
    return scope === 'session' ? this.cost.sessionUnpriced : this.cost.turnUnpriced
  }
}

function describe(v: unknown): string {
  if (typeof v === 'number') return String(v)
  if (v === null) return 'null'
  return typeof v
}
