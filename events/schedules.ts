/**
 * The wakeup vocabulary (docs/spec/lifecycle.md §10, docs/spec/events.md `schedule/*`): a schedule an agent made for
 * itself, each firing, and a cancel. Kept out of data.ts (which spreads these in) so the other
 * §10 work (children, budgets) and approvals add their types without touching the same lines.
 *
 * Times are epoch milliseconds from the agent's clock (the clock that stamps `time`), integers.
 */
import { z } from 'zod'
import { Block } from './messages.js'

const epochMs = z.number().int().nonnegative()

/** How a firing is delivered when no turn is open: the verb it is sent with (docs/spec/lifecycle.md §1). */
export const ScheduleDeliver = z.enum(['followup', 'steer', 'inject'])
export type ScheduleDeliver = z.infer<typeof ScheduleDeliver>

/**
 * What a firing does when a turn is open: `queue` → next-turn (its own turn after the open one;
 * an `inject` schedule still does not wake), `steer` → next-step (joins the open turn at its next
 * step boundary), `drop` → the firing is logged `dropped` and delivers nothing.
 */
export const ScheduleWhenBusy = z.enum(['queue', 'steer', 'drop'])
export type ScheduleWhenBusy = z.infer<typeof ScheduleWhenBusy>

export const SCHEDULE_EVENT_DATA = {
  /** A wakeup: first due at `due`, then every `every` ms when set. `callId`: made by the model
   * through the built-in `scheduleWakeup` tool (that call). */
  'schedule/created': z.strictObject({
    scheduleId: z.string().min(1),
    due: epochMs,
    every: z.number().int().positive().optional(),
    content: z.array(Block).min(1),
    deliver: ScheduleDeliver,
    whenBusy: ScheduleWhenBusy,
    callId: z.string().min(1).optional(),
  }),
  /**
   * One firing, at or after `due` (a due time of the schedule). `missed`: earlier due times of an
   * `every` schedule that passed while nothing could fire them, coalesced into this one (absent
   * when none). Unless `dropped`, the next event is the splice that delivers its message (source
   * `{kind: 'schedule', scheduleId}`).
   */
  'schedule/fired': z.strictObject({
    scheduleId: z.string().min(1),
    due: epochMs,
    missed: z.number().int().positive().optional(),
    dropped: z.literal(true).optional(),
  }),
  /** The schedule will not fire again (`agent.unschedule`). */
  'schedule/canceled': z.strictObject({ scheduleId: z.string().min(1) }),
} as const
