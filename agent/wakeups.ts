/**
 * The agent's wakeups (docs/spec/lifecycle.md §10): schedules the agent made for itself, fired from the log.
 *
 * - The pending schedules and their due times are the `schedules` reducer's fold of the log (the
 *   prefix of a resumed agent included), so nothing lives only in memory.
 * - ONE timer is armed for the earliest due time (at most `MAX_TIMER_MS` ahead; a later one
 *   re-arms), `unref`'d so it never keeps a process alive, and cleared on `dispose()`. The timer
 *   only tells the agent to look: whether a firing is owed is decided by `firingAt(schedule,
 *   clock())`, so a timer that fires early fires nothing and re-arms.
 * - A firing is `schedule/fired` followed by the ordinary splice of its message (a fresh id,
 *   source `{kind: 'schedule'}`), where `deliver` / `whenBusy` say (W3, events/invariants/schedules.ts).
 *   Missed periods are coalesced into one firing (`missed`).
 * - `fireDue()` (from `wake()`, which `resumeAgent` and the PostgreSQL workers call) fires what came
 *   due while no process ran. While a resume turn is armed and not yet opened, nothing fires (L13:
 *   only splices may stand between the interrupted turn's end and its resume turn).
 */
import type { EventDraft, LogEvent, UserMessage } from '../events/index.js'
import { TurnlogError } from '../events/errors.js'
import type { ScheduleDeliver, ScheduleWhenBusy } from '../events/schedules.js'
import { firingAt, nextDue, schedulesReducer, type PendingSchedule, type SchedulesState } from '../reducers/schedules.js'
import { toUserMessage } from './messages.js'
import type { MessageInput, Timers } from './types.js'
import { checkSpec, MAX_TIMER_MS, type ScheduleInfo, type ScheduleSpec } from './wakeup-types.js'

/** What the wakeups need of the agent (a narrow view, no import of agent.ts). */
export interface WakeupHost {
  readonly sessionId: string
  readonly timers: Timers
  readonly newId: () => string
  /** The agent's clock (the one that stamps `time`). */
  now(): number
  /** True while a turn is open in the log (the "busy" of `whenBusy`). */
  busy(): boolean
  /** False while nothing may fire: disposing, disposed, halted, or a resume turn is armed. */
  canFire(): boolean
  append(draft: EventDraft): LogEvent
  send(message: UserMessage, target: 'next-turn' | 'next-step', wake: boolean): string
  reportError(error: unknown, where: string): void
}

export class Wakeups {
  readonly state: SchedulesState = schedulesReducer.initial()
  #timer: unknown = undefined
  #timerDue: number | null = null
  #closed = false
  /** An agent created on a prefix (resume, fork) holds its wakeups until its owed work starts:
   * `wake()` or the first turn (so `resumeAgent({autoStart: false})` runs nothing before `wake()`). */
  #held: boolean

  constructor(readonly host: WakeupHost, readonly armTimer: boolean, held: boolean) {
    this.#held = held
  }

  /** The owed work started (`wake()`): due wakeups may fire from now on. */
  release(): void {
    this.#held = false
  }

  /** Folds one committed event (prefix or live); re-arms the timer when a schedule event changed the due times. */
  fold(e: LogEvent): void {
    if (e.type.startsWith('schedule/')) {
      schedulesReducer.apply(this.state, e)
      this.arm()
    } else if (e.type === 'turn/start') {
      this.#held = false
      // a timer that found nothing allowed to fire (a resume turn armed) looks again once a turn opens
      if (this.#timer === undefined && this.host.canFire()) this.arm()
    }
  }

  schedule(spec: ScheduleSpec, callId?: string): string {
    const h = this.host
    const c = checkSpec(spec, h.now(), h.sessionId)
    // the message is checked now (a bad one is refused before anything is logged); its id is per firing
    const content = toUserMessage(c.message as MessageInput, () => 'check').content
    if (content.length === 0) {
      throw new TurnlogError('INVALID_ARGUMENT', 'schedule: the message has no content', { sessionId: h.sessionId, field: 'message' })
    }
    const scheduleId = c.id ?? h.newId()
    h.append({
      type: 'schedule/created',
      data: {
        scheduleId, due: c.due, ...(c.every !== undefined ? { every: c.every } : {}), content,
        deliver: c.deliver, whenBusy: c.whenBusy, ...(callId !== undefined ? { callId } : {}),
      },
    })
    return scheduleId
  }

  list(): ScheduleInfo[] {
    return this.state.pending
      .map((p) => structuredClone(p) as ScheduleInfo)
      .sort((a, b) => a.due - b.due || a.createdSeq - b.createdSeq)
  }

  unschedule(scheduleId: string): boolean {
    if (!this.state.pending.some((p) => p.scheduleId === scheduleId)) return false
    this.host.append({ type: 'schedule/canceled', data: { scheduleId } })
    return true
  }

  /** Fires every schedule due now, in the order of the firings' due times; returns how many fired. */
  fireDue(): number {
    if (this.#closed || this.#held || !this.host.canFire()) return 0
    let fired = 0
    // each firing changes the state (a one-shot leaves, a period moves on): pick again each time
    for (;;) {
      const now = this.host.now()
      const due = this.state.pending
        .map((p) => ({ p, f: firingAt(p, now) }))
        .filter((x) => x.f !== null)
        .sort((a, b) => a.f!.due - b.f!.due || a.p.createdSeq - b.p.createdSeq)[0]
      // ends: a firing moves its schedule's next due time past `now` (or removes it)
      if (due === undefined) break
      this.#fire(due.p, due.f!.due, due.f!.missed)
      fired++
    }
    this.arm()
    return fired
  }

  /** One firing: `schedule/fired`, then (unless dropped) the splice of its message. */
  #fire(p: PendingSchedule, due: number, missed: number, messageId?: string): void {
    const h = this.host
    const busy = h.busy()
    const dropped = busy && p.whenBusy === 'drop'
    const scheduleId = p.scheduleId
    const { target, wake } = delivery(p.deliver, p.whenBusy, busy)
    // the message is built before anything is logged: the firing and its splice go together (W3)
    const message: UserMessage = {
      id: messageId ?? h.newId(), role: 'user', content: p.content, source: { kind: 'schedule', scheduleId },
    }
    h.append({ type: 'schedule/fired', data: { scheduleId, due, ...(missed > 0 ? { missed } : {}), ...(dropped ? { dropped: true as const } : {}) } })
    if (!dropped) h.send(message, target, wake)
  }

  /**
   * @internal Re-execution: the recorded firing, as recorded (its `due`, `missed` and the message
   * id of its splice). The agent's own timer does not run there (`armTimer` false).
   */
  fireRecorded(scheduleId: string, due: number, missed: number, messageId: string | undefined): void {
    const p = this.state.pending.find((x) => x.scheduleId === scheduleId)
    if (!p) throw new TurnlogError('INVALID_ARGUMENT', `no pending schedule ${scheduleId}`, { sessionId: this.host.sessionId, field: 'scheduleId' })
    this.#fire(p, due, missed, messageId)
  }

  /** Arms the one timer for the earliest due time (or clears it when nothing is pending). */
  arm(): void {
    if (!this.armTimer || this.#closed || this.#held) return
    const due = nextDue(this.state)
    if (due === this.#timerDue && this.#timer !== undefined) return
    this.#clear()
    if (due === null) return
    const t = this.host.timers
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, due - this.host.now()))
    this.#timerDue = due
    this.#timer = t.setTimeout(() => this.#onTimer(), delay)
    try {
      // a pending wakeup never keeps the process alive: the log keeps it, the next process fires it
      ;(this.#timer as { unref?: () => void } | null)?.unref?.()
    } catch {
      // an injected timer without unref
    }
  }

  #onTimer(): void {
    this.#timer = undefined
    this.#timerDue = null
    try {
      // fires what is due and re-arms; while nothing may fire (a resume turn armed, disposing) it
      // does not re-arm: the next turn/start or wake() does
      this.fireDue()
    } catch (err) {
      this.host.reportError(err, 'wakeup')
    }
  }

  #clear(): void {
    if (this.#timer !== undefined) this.host.timers.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#timerDue = null
  }

  /** Clears the timer for good (`dispose()`). */
  close(): void {
    this.#closed = true
    this.#clear()
  }
}

/** Where a firing goes (the agent side of W3). */
export function delivery(deliver: ScheduleDeliver, whenBusy: ScheduleWhenBusy, busy: boolean): { target: 'next-turn' | 'next-step'; wake: boolean } {
  const wake = deliver !== 'inject'
  if (busy && whenBusy === 'queue') return { target: 'next-turn', wake }
  if (!busy && deliver === 'followup') return { target: 'next-turn', wake }
  return { target: 'next-step', wake }
}
