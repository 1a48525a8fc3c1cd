/**
 * Usage roll-up over a session tree (docs/spec/lifecycle.md §10 "Usage rolls up"; docs/spec/api.md `agent.usage()`): a
 * session's own usage (the `usage` reducer's total over its log) plus its children's, each child's
 * already rolled up over its own children. Pure: the caller supplies the child trees (the live
 * agent from the children it ran, `usageTree` in replay/ from the child logs in the store).
 */
import type { LogEvent } from '../events/index.js'
import { emptyTotals, usageReducer, type UsageTotals } from './usage.js'

/** `agent.usage()`: own totals at the top level, `children` (their sum, rolled up) and `total` (both). */
export interface UsageRollUp extends UsageTotals {
  /** The sum of every child's rolled-up total (grandchildren included). */
  children: UsageTotals
  /** Own plus children. */
  total: UsageTotals
  /** Per child session id, that child's roll-up. */
  byChild: Record<string, UsageRollUp>
}

/** A session's own usage totals (the `usage` reducer's `total` over its log). */
export function ownUsage(events: readonly LogEvent[]): UsageTotals {
  const s = usageReducer.initial()
  for (const e of events) usageReducer.apply(s, e)
  return s.total
}

/** Adds `b` into a copy of `a` (every bucket). */
export function sumTotals(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    requests: a.requests + b.requests,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  }
}

/** Folds a session's own totals with its children's roll-ups. */
export function rollUpUsage(own: UsageTotals, children: Readonly<Record<string, UsageRollUp>>): UsageRollUp {
  let sum = emptyTotals()
  const byChild: Record<string, UsageRollUp> = {}
  for (const [id, c] of Object.entries(children)) {
    sum = sumTotals(sum, c.total)
    byChild[id] = c
  }
  return { ...own, children: sum, total: sumTotals(own, sum), byChild }
}

/** The child session ids a log spawned (`child/spawned`, in log order). */
export function spawnedChildren(events: readonly LogEvent[]): string[] {
  const out: string[] = []
  for (const e of events) if (e.type === 'child/spawned') out.push((e.data as { child: string }).child)
  return out
}
