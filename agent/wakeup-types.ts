/**
 * The public shapes of wakeups (docs/spec/lifecycle.md §10, docs/spec/api.md "Approvals, children, budgets, wakeups"):
 * what `agent.schedule` takes, what `agent.schedules()` lists, the `wakeups` option, and the
 * runtime check of a schedule spec (a zod schema: plain JavaScript callers get coded errors too).
 */
import { z } from 'zod'
import { TurnlogError } from '../events/errors.js'
import { ScheduleDeliver, ScheduleWhenBusy } from '../events/schedules.js'
import type { PendingSchedule } from '../reducers/schedules.js'
import type { Block, MessageSource } from '../events/messages.js'

/** What a schedule delivers: the same forms as `MessageInput` (agent/types.ts; not imported: types.ts imports this file). */
export type ScheduleMessage = string | { id?: string; role?: 'user'; content: Block[]; source?: MessageSource }

/** What `agent.schedule` takes. Give `in` or `at` (the first due time), `every` (a period), or both. */
export interface ScheduleSpec {
  /** The first firing this many ms from now (the agent's clock). */
  in?: number
  /** The first firing at this time: epoch ms, a `Date`, or an ISO 8601 string. */
  at?: number | Date | string
  /** Repeat every this many ms (an integer ≥ 1). Without `in`/`at` the first firing is one period from now. */
  every?: number
  /** The message each firing delivers (a fresh message id per firing). */
  message: ScheduleMessage
  /** How a firing is delivered when no turn is open. Default `'followup'`. */
  deliver?: ScheduleDeliver
  /** What a firing does while a turn is open: `'queue'` (default) waits in next-turn for a turn of
   * its own, `'steer'` joins the open turn at its next step boundary, `'drop'` skips this firing. */
  whenBusy?: ScheduleWhenBusy
  /** The schedule's id. Default: a fresh id from `options.ids`. */
  id?: string
}

/** A pending wakeup, as `agent.schedules()` lists it (a copy: changing it changes nothing). */
export type ScheduleInfo = PendingSchedule

/** The wakeup handle of an `Agent` (docs/spec/api.md): schedule, list, cancel. */
export interface WakeupHandle {
  /**
   * Schedules a wakeup: appends `schedule/created` and returns its id. The firing is
   * `schedule/fired` followed by the ordinary splice of its message; due times are derived from the
   * log, so a resumed agent (or a PostgreSQL worker) fires what came due while no process ran, once.
   * Bad input is `INVALID_ARGUMENT` naming the field; nothing is logged then.
   */
  schedule(spec: ScheduleSpec): string
  /** The pending wakeups with their next due time, earliest first. */
  schedules(): ScheduleInfo[]
  /** Cancels a pending wakeup (`schedule/canceled`); false (nothing logged) when it is not pending. */
  unschedule(scheduleId: string): boolean
}

/** `createAgent({ wakeups })`. */
export interface WakeupOptions {
  /**
   * Arm a timer for the next due wakeup (default true). `false`: wakeups fire only when `wake()` is
   * called (resumeAgent and PostgreSQL workers call it), for an app that drives firings itself.
   */
  timer?: boolean
  /** Add the built-in `scheduleWakeup` tool, so the model can schedule wakeups itself. */
  tool?: boolean | ScheduleToolOptions
}

export interface ScheduleToolOptions {
  /** The tool's name. Default `'scheduleWakeup'`. */
  name?: string
  /** Shortest delay the model may ask for (ms). Default 1000. */
  minDelayMs?: number
  /** Longest delay the model may ask for (ms). Default 30 days. */
  maxDelayMs?: number
  /** How its wakeups are delivered. Default `'followup'` / `'queue'`. */
  deliver?: ScheduleDeliver
  whenBusy?: ScheduleWhenBusy
}

/** The longest single timer the agent arms (setTimeout's limit is 2^31 - 1 ms); a later due time re-arms. */
export const MAX_TIMER_MS = 2 ** 31 - 1

const SpecSchema = z.strictObject({
  in: z.number().finite().nonnegative().optional(),
  at: z.union([z.number().int().nonnegative(), z.date(), z.string().min(1)]).optional(),
  every: z.number().int().positive().optional(),
  message: z.unknown(),
  deliver: ScheduleDeliver.optional(),
  whenBusy: ScheduleWhenBusy.optional(),
  id: z.string().min(1).optional(),
})

/** A checked spec: the first due time resolved against `now`. */
export interface CheckedSpec {
  due: number
  every?: number
  deliver: ScheduleDeliver
  whenBusy: ScheduleWhenBusy
  message: ScheduleMessage
  id?: string
}

/** Checks `spec` (`INVALID_ARGUMENT` naming the field) and resolves its first due time against `now`. */
export function checkSpec(spec: unknown, now: number, sessionId: string): CheckedSpec {
  const bad = (message: string, field: string) => new TurnlogError('INVALID_ARGUMENT', `schedule: ${message}`, { sessionId, field })
  if (typeof spec !== 'object' || spec === null) throw bad('expected { in | at | every, message, deliver?, whenBusy? }', 'spec')
  const r = SpecSchema.safeParse(spec)
  if (!r.success) {
    const issue = r.error.issues[0]!
    throw bad(issue.message, issue.path.map(String).join('.') || 'spec')
  }
  const s = r.data
  if (s.message === undefined) throw bad('a message is required', 'message')
  if (s.in !== undefined && s.at !== undefined) throw bad('give `in` or `at`, not both', 'at')
  if (s.in === undefined && s.at === undefined && s.every === undefined) throw bad('give `in`, `at` or `every`', 'in')
  let due: number
  if (s.in !== undefined) due = Math.ceil(now + s.in)
  else if (s.at !== undefined) {
    const t = s.at instanceof Date ? s.at.getTime() : typeof s.at === 'string' ? Date.parse(s.at) : s.at
    if (!Number.isFinite(t) || t < 0) throw bad(`\`at\` is not a valid time: ${String(s.at)}`, 'at')
    due = Math.ceil(t)
  } else due = Math.ceil(now + s.every!)
  if (!Number.isSafeInteger(due)) throw bad('the due time is out of range', s.in !== undefined ? 'in' : 'at')
  return {
    due,
    ...(s.every !== undefined ? { every: s.every } : {}),
    deliver: s.deliver ?? 'followup',
    whenBusy: s.whenBusy ?? 'queue',
    message: s.message as ScheduleMessage,
    ...(s.id !== undefined ? { id: s.id } : {}),
  }
}
