/**
 * Wakeups as a durable projection (docs/spec/lifecycle.md §10): the pending schedules and the next due time
 * of each, folded from `schedule/created`, `schedule/fired` and `schedule/canceled`. Due times come
 * from the log only, never from a clock, so a resumed agent, a PostgreSQL worker and `replay` all
 * derive the same ones; `firingAt` (pure, given `now`) says which firing is owed at a moment,
 * coalescing the periods missed while no process ran into one.
 */
import type { Block, EventOf, LogEvent } from '../events/index.js'
import type { ScheduleDeliver, ScheduleWhenBusy } from '../events/schedules.js'
import type { Reducer } from './types.js'

/** One pending schedule: what `agent.schedules()` lists. */
export interface PendingSchedule {
  scheduleId: string
  /** The next due time (epoch ms, the agent's clock). */
  due: number
  /** The period of a repeating schedule (ms); absent for a one-shot. */
  every?: number
  content: Block[]
  deliver: ScheduleDeliver
  whenBusy: ScheduleWhenBusy
  /** Firings so far (dropped ones included). */
  fired: number
  /** The seq of its `schedule/created`. */
  createdSeq: number
  /** The `scheduleWakeup` call that made it, when the model did. */
  callId?: string
}

export interface SchedulesState {
  /** Pending schedules, in creation order. */
  pending: PendingSchedule[]
}

export const schedulesReducer: Reducer<SchedulesState> = {
  name: 'schedules',
  initial: () => ({ pending: [] }),
  apply(draft, event: LogEvent) {
    switch (event.type) {
      case 'schedule/created': {
        const d = (event as EventOf<'schedule/created'>).data
        // a second created of a pending id (a broken log) replaces nothing: the first stands
        if (draft.pending.some((p) => p.scheduleId === d.scheduleId)) return
        const p: PendingSchedule = {
          scheduleId: d.scheduleId, due: d.due, content: d.content as Block[], deliver: d.deliver, whenBusy: d.whenBusy,
          fired: 0, createdSeq: event.seq,
        }
        if (d.every !== undefined) p.every = d.every
        if (d.callId !== undefined) p.callId = d.callId
        draft.pending.push(p)
        return
      }
      case 'schedule/fired': {
        const d = (event as EventOf<'schedule/fired'>).data
        const i = draft.pending.findIndex((p) => p.scheduleId === d.scheduleId)
        if (i < 0) return
        const p = draft.pending[i]!
        if (p.every === undefined) {
          draft.pending.splice(i, 1)
          return
        }
        p.fired++
        // the next period after the firing's own due time (the firing coalesced the missed ones)
        p.due = Math.max(p.due, d.due) + p.every
        return
      }
      case 'schedule/canceled': {
        const id = (event as EventOf<'schedule/canceled'>).data.scheduleId
        const i = draft.pending.findIndex((p) => p.scheduleId === id)
        if (i >= 0) draft.pending.splice(i, 1)
        return
      }
      default:
        return
    }
  },
}

/** The earliest due time among the pending schedules, or null (what a timer or a worker waits for). */
export function nextDue(state: SchedulesState): number | null {
  let min: number | null = null
  for (const p of state.pending) if (min === null || p.due < min) min = p.due
  return min
}

/**
 * The firing owed at `now`, or null when `p` is not due yet. A one-shot fires at its due time. A
 * repeating schedule whose due times passed while nothing fired them fires once, for the latest
 * due time not after `now`; `missed` counts the earlier ones it stands for (docs/spec/lifecycle.md §10:
 * coalesced, never once per missed period).
 */
export function firingAt(p: Pick<PendingSchedule, 'due' | 'every'>, now: number): { due: number; missed: number } | null {
  if (!(now >= p.due)) return null
  if (p.every === undefined) return { due: p.due, missed: 0 }
  const missed = Math.floor((now - p.due) / p.every)
  return { due: p.due + missed * p.every, missed }
}
