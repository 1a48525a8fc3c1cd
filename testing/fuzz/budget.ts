/**
 * Budget trips in the fuzzer (`fuzzAgent({ budgets: true })`, docs/spec/lifecycle.md §10, L20): each scenario
 * gets one budget (a limit, a scope, a small limit so it trips often; for cost, a price that
 * sometimes throws) and the model's responses get usage so token limits count. After the run
 * (budget-check.ts):
 * - L20 with the price (`verify(events, { price })`): every budget end names a limit the derived
 *   usage reaches, and its `used` is the derived one;
 * - "no request past a reached limit": every model request was made while the usage derived from
 *   the log at that moment was below the limit (the overshoot is at most the one request that
 *   crossed it). Checked without plugins only: a compaction plugin's summary call runs in
 *   `agent/pre-step`, after the check, and may itself cross the limit.
 */
import fc from 'fast-check'
import type { BudgetOptions } from '../../agent/budget.js'
import type { BudgetLimitName, BudgetScope, Usage } from '../../events/index.js'

/** One generated budget. */
export interface FuzzBudget {
  which: BudgetLimitName
  scope: BudgetScope
  limit: number
  /** costUsd only: the price throws for this model call index (counted over the run), or never (-1). */
  priceThrowsAt: number
}

/** Usage the fuzzer's responses report when budgets are on (a response's own usage wins). */
export const FUZZ_USAGE: Usage = Object.freeze({ inputTokens: 40, outputTokens: 10 })

export function arbBudget(): fc.Arbitrary<FuzzBudget> {
  return fc.oneof(
    fc.record({ which: fc.constant<BudgetLimitName>('toolCalls'), scope: fc.constantFrom<BudgetScope>('turn', 'session'), limit: fc.integer({ min: 0, max: 6 }), priceThrowsAt: fc.constant(-1) }),
    // responses report 40 input and 10 output tokens (FUZZ_USAGE): limits of a few requests
    ...(['inputTokens', 'outputTokens', 'totalTokens'] as const).map((which) => fc.record({
      which: fc.constant<BudgetLimitName>(which), scope: fc.constantFrom<BudgetScope>('turn', 'session'),
      limit: fc.integer({ min: 0, max: which === 'outputTokens' ? 50 : 250 }), priceThrowsAt: fc.constant(-1),
    })),
    fc.record({
      which: fc.constant<BudgetLimitName>('costUsd'), scope: fc.constantFrom<BudgetScope>('turn', 'session'),
      limit: fc.integer({ min: 0, max: 40 }).map((n) => n / 10), // a price that throws in one cost budget of two (was one of five: on some seeds 400 runs ended no
      // budget unpriced)
      priceThrowsAt: fc.oneof({ weight: 1, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 6 }) }),
    }),
  )
}

/** The fuzz price: a tenth of a cent per token; deterministic in the call's usage. */
export function fuzzPrice(_model: string, u: Usage): number {
  return (u.inputTokens + u.outputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0) + (u.reasoningTokens ?? 0)) / 1000
}

/** The agent's `budget` option for a generated budget (its price counts calls to throw at one). */
export function budgetOptions(b: FuzzBudget): BudgetOptions {
  if (b.which !== 'costUsd') return { [b.which]: b.limit, scope: b.scope }
  let calls = 0
  return {
    costUsd: b.limit, scope: b.scope,
    price: (model, usage) => {
      if (calls++ === b.priceThrowsAt) throw new Error('fuzz: the price list is down')
      return fuzzPrice(model, usage)
    },
  }
}
