/**
 * Token usage totals: the sum of every model call's `usage`, in disjoint buckets.
 *
 * What counts, once per model call:
 * - a successful request: its `assistant/message.usage` (or, when the message carries none, the
 *   `usage` chunk its stream reported);
 * - a failed or aborted request, which has no `assistant/message` (docs/spec/events.md: "their `usage` chunk
 *   is the record"): the step's `usage` chunk, counted at its `step/end`, and also into `failed`.
 *   Those tokens were billed, so leaving them out would under-report what a session cost;
 *   `failed` says how much of `total` they are;
 * - the summariser's call: `compaction/summary.usage`, also into `compaction`.
 * `byTurn` holds, per turn number, the requests of that turn (compaction inside a turn included;
 * a manual compaction from idle counts only in `total` and `compaction`).
 */
import type { EventOf, LogEvent, Usage } from '../events/index.js'
import type { Reducer } from './types.js'

/** Disjoint token buckets, every bucket present, plus the number of model calls counted. */
export interface UsageTotals {
  requests: number
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  reasoningTokens: number
}

export interface UsageState {
  total: UsageTotals
  /** The part of `total` that comes from failed or aborted requests (usage chunk, no message). */
  failed: UsageTotals
  /** The part of `total` that comes from compaction summaries. */
  compaction: UsageTotals
  /** Per turn number (as a JSON key). */
  byTurn: Record<string, UsageTotals>
  /** The open step's `usage` chunk not yet accounted for (internal: a request in flight). */
  pendingChunk: Usage | null
  /** The open turn, whose `byTurn` entry receives usage (internal). */
  turn: number | null
}

export function emptyTotals(): UsageTotals {
  return { requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }
}

/** Adds one model call's usage to `t` (in place). */
export function addUsage(t: UsageTotals, u: Usage | undefined | null): void {
  t.requests += 1
  if (!u) return
  t.inputTokens += u.inputTokens
  t.outputTokens += u.outputTokens
  if (u.cacheReadTokens !== undefined) t.cacheReadTokens += u.cacheReadTokens
  if (u.cacheWriteTokens !== undefined) t.cacheWriteTokens += u.cacheWriteTokens
  if (u.reasoningTokens !== undefined) t.reasoningTokens += u.reasoningTokens
}

function count(draft: UsageState, u: Usage | undefined | null, extra: UsageTotals | null): void {
  addUsage(draft.total, u)
  if (extra) addUsage(extra, u)
  if (draft.turn !== null) {
    const key = String(draft.turn)
    let t = draft.byTurn[key]
    if (t === undefined) {
      t = emptyTotals()
      draft.byTurn[key] = t
      t = draft.byTurn[key]!
    }
    addUsage(t, u)
  }
}

export const usageReducer: Reducer<UsageState> = {
  name: 'usage',
  initial: () => ({
    total: emptyTotals(),
    failed: emptyTotals(),
    compaction: emptyTotals(),
    byTurn: {},
    pendingChunk: null,
    turn: null,
  }),
  apply(draft, event: LogEvent) {
    switch (event.type) {
      case 'assistant/chunk': {
        const chunk = (event as EventOf<'assistant/chunk'>).data.chunk
        if (chunk.type === 'usage') draft.pendingChunk = chunk.usage
        return
      }
      case 'assistant/message': {
        const u = (event as EventOf<'assistant/message'>).data.usage
        count(draft, u ?? draft.pendingChunk, null)
        draft.pendingChunk = null
        return
      }
      case 'step/start':
        draft.pendingChunk = null
        return
      case 'step/end':
        if (draft.pendingChunk !== null) {
          count(draft, draft.pendingChunk, draft.failed)
          draft.pendingChunk = null
        }
        return
      case 'compaction/summary': {
        const u = (event as EventOf<'compaction/summary'>).data.usage
        if (u) count(draft, u, draft.compaction)
        return
      }
      case 'turn/start':
        draft.turn = (event as EventOf<'turn/start'>).data.turn
        return
      case 'turn/end':
        draft.turn = null
        return
    }
  },
}
