/** R6 (overflow retries only after a replacement; bounded; cancellation beats retry) over a log. */
import type { EventOf, LogEvent } from '../../events/index.js'
import type { OverflowDecision } from './types.js'

/**
 * R6 over a log: returns the first violation, or null.
 * - From the log: a retry turn (`turn/start {cause: retry}`) of a turn that ended with
 *   `CONTEXT_WINDOW_EXCEEDED` follows a surface replacement logged after that turn's failed step.
 * - From the `agent/request-error` decisions (`decisions`, recorded by an outermost listener): an
 *   overflow retry only when a replacement was logged while the listeners ran and the turn was not
 *   cancelled; with `maxOverflowRetries`, at most that many overflow retries between resets (a
 *   non-interrupted `assistant/message`, or the agent going idle: `idleAt` = log lengths then).
 */
export function checkR6(
  events: readonly LogEvent[],
  opts: { decisions?: readonly OverflowDecision[]; idleAt?: readonly number[]; maxOverflowRetries?: number } = {},
): string | null {
  const replaced = (e: LogEvent) => e.surfaceOp !== undefined && e.surfaceOp !== 'append'
  const resets = [
    ...events.filter((e) => e.type === 'assistant/message' && e.surfaceOp === 'append' && !(e.data as { interrupted?: true }).interrupted).map((e) => e.seq),
    ...(opts.idleAt ?? []).map((at) => at - 1),
  ].sort((a, b) => a - b)
  let streak = 0
  let lastAt = -1
  for (const d of opts.decisions ?? []) {
    // a reset at or after the previous decision's start (a turn that failed and went idle at once
    // has its last event at that very seq) and before this one
    if (resets.some((r) => r >= lastAt && r < d.from)) streak = 0
    lastAt = d.from
    if (d.code !== 'CONTEXT_WINDOW_EXCEEDED' || !d.retry) continue
    if (!events.slice(d.from, d.to).some(replaced)) return `R6: an overflow retry at seq ${d.from} without a replacement`
    if (d.aborted) return `R6: an overflow retry at seq ${d.from} of a cancelled turn`
    if (opts.maxOverflowRetries !== undefined && ++streak > opts.maxOverflowRetries) {
      return `R6: ${streak} overflow retries in one chain (cap ${opts.maxOverflowRetries})`
    }
  }
  for (const e of events) {
    if (e.type !== 'turn/start' || !(e as EventOf<'turn/start'>).data.cause) continue
    const end = events[e.seq - 1] as EventOf<'turn/end'> | undefined
    if (end?.type !== 'turn/end' || end.data.reason.kind !== 'error' || end.data.reason.failure.code !== 'CONTEXT_WINDOW_EXCEEDED') continue
    let ok = false
    for (let i = end.seq - 1; i >= 0 && events[i]!.type !== 'step/end'; i--) if (replaced(events[i]!)) ok = true
    if (!ok) return `R6: retry turn at seq ${e.seq} after an overflow with no replacement`
  }
  return null
}
