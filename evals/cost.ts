/** Usage and cost of a log's live part (everything after the inherited prefix). */
import type { LogEvent } from '../events/index.js'
import { emptyTotals, type UsageTotals } from '../reducers/usage.js'
import { replay } from '../replay/replay.js'
import type { Price } from './evaluate-types.js'

/** The usage of `events` minus that of its first `from` events. */
export function liveUsage(events: readonly LogEvent[], from: number): UsageTotals {
  const all = replay(events).usage.total
  const prefix = from > 0 ? replay(events.slice(0, from)).usage.total : emptyTotals()
  const out = emptyTotals()
  for (const k of Object.keys(out) as (keyof UsageTotals)[]) out[k] = all[k] - prefix[k]
  return out
}

/** USD for `u` at `price`, or null when no price is given. A throwing price function is the caller's error. */
export function costUsd(u: UsageTotals, price: Price | undefined): number | null {
  if (price === undefined) return null
  if (typeof price === 'function') return price(u)
  const m = 1_000_000
  return (u.inputTokens * price.input + u.outputTokens * price.output + u.cacheReadTokens * (price.cacheRead ?? price.input) +
    u.cacheWriteTokens * (price.cacheWrite ?? price.input) + u.reasoningTokens * (price.reasoning ?? price.output)) / m
}

/** Every token counted once (when there is no price). */
export function tokenCost(u: UsageTotals): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens + u.reasoningTokens
}
