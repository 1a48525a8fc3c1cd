/**
 * Wakeups in a re-execution (docs/spec/lifecycle.md §10; docs/spec/invariants.md P4: firings are recorded input, like
 * followups). The agent arms no timer (`wakeups: {timer: false}`); the pump issues each recorded
 * `schedule/created` through the agent's schedule path (`callId` kept: a `scheduleWakeup` call's
 * body is served from its recorded result), each `schedule/canceled` through `unschedule`, and
 * each `schedule/fired` at its recorded position with its recorded `due`, `missed` and message id.
 * Where the firing goes (`deliver`/`whenBusy`, dropped or not) is the agent's own decision, so a
 * changed rule diverges at the firing or its splice.
 */
import type { EventOf, LogEvent, ToolSpec } from '../../events/index.js'
import { scheduleWakeupTool } from '../../agent/wakeup-tool.js'
import type { Wakeups } from '../../agent/wakeups.js'
import type { AnyTool } from '../../tools/types.js'
import type { Host } from './state.js'

/** True for the schedule events the pump issues. */
export function isScheduleInput(e: LogEvent): boolean {
  return e.type === 'schedule/created' || e.type === 'schedule/fired' || e.type === 'schedule/canceled'
}

/** Issues one recorded schedule event through the agent. */
export function issueSchedule(rx: Host, e: LogEvent): void {
  const w = (rx.agent as unknown as { wakeups: Wakeups }).wakeups
  if (e.type === 'schedule/created') {
    const d = (e as EventOf<'schedule/created'>).data
    w.schedule({
      at: d.due, ...(d.every !== undefined ? { every: d.every } : {}), message: { content: [...d.content] },
      deliver: d.deliver, whenBusy: d.whenBusy, id: d.scheduleId,
    }, d.callId)
  } else if (e.type === 'schedule/canceled') {
    rx.agent.unschedule((e as EventOf<'schedule/canceled'>).data.scheduleId)
  } else {
    const d = (e as EventOf<'schedule/fired'>).data
    const next = rx.rec[e.seq + 1]
    const inserted = next?.type === 'agent/inbox/spliced' ? (next as EventOf<'agent/inbox/spliced'>).data.inserted : []
    const messageId = d.dropped ? undefined : inserted.find((m) => m.source.kind === 'schedule')?.id
    w.fireRecorded(d.scheduleId, d.due, d.missed ?? 0, messageId)
  }
}

/**
 * The built-in `scheduleWakeup` tool when the recording's first request offered one and the
 * caller's tools do not hold that name: its body is served like any tool's.
 */
export function recordedWakeupTool(header: EventOf<'request/header'> | undefined, tools: readonly AnyTool[]): AnyTool | null {
  const spec = header?.data.tools.find((t: ToolSpec) => t.name === 'scheduleWakeup')
  if (!spec || tools.some((t) => t.name === spec.name)) return null
  const map = new Map<string, AnyTool>()
  scheduleWakeupTool({ wakeups: null as unknown as Wakeups }, {}, map)
  return map.get('scheduleWakeup') ?? null
}
