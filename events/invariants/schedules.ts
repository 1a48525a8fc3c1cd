/**
 * The wakeup rules (docs/spec/lifecycle.md §10; W1–W3 of
 * docs/spec/invariants.md "Wakeups"):
 *
 * - **W1** a `schedule/created` id is new to the log; `schedule/fired` and `schedule/canceled`
 *   name a pending schedule (created, not canceled, a one-shot not fired yet).
 * - **W2** a firing is due: its `due` is the schedule's next due time or, for a repeating
 *   schedule, a later one of its period (`missed` counts the ones in between, absent when none),
 *   and its `time` is not before `due` (a wakeup never fires early).
 * - **W3** delivery follows `whenBusy`: a firing with no turn open delivers as its `deliver` says
 *   (`followup` → next-turn, `steer`/`inject` → next-step) and is never `dropped`; with a turn open,
 *   `queue` → next-turn, `steer` → next-step, `drop` → `dropped`. A waking next-step delivery may
 *   land in next-turn instead: the agent re-targets waking input while a turn is aborting. The event right after a firing that is not dropped is the
 *   splice that inserts its message alone (source `{kind: 'schedule', scheduleId}`, no removal,
 *   no outcome); a schedule-sourced message is inserted nowhere else.
 *
 * State is O(pending schedules); every check is O(1) but the lookup by id (pending schedules are few).
 */
import type { SessionEvent } from '../envelope.js'
import type { ScheduleDeliver, ScheduleWhenBusy } from '../schedules.js'
import type { TurnState } from './structure.js'
import type { Emit } from './types.js'

interface Pending {
  due: number
  every?: number
  deliver: ScheduleDeliver
  whenBusy: ScheduleWhenBusy
}

/** What the event right after a firing must deliver. */
interface Owed {
  scheduleId: string
  targets: ReadonlyArray<'next-turn' | 'next-step'>
}

export class ScheduleState {
  readonly #pending = new Map<string, Pending>()
  readonly #created = new Set<string>()
  #owed: Owed | null = null

  constructor(readonly turns: TurnState) {}

  check(e: SessionEvent, emit: Emit): void {
    const owed = this.#owed
    if (owed !== null) this.#checkDelivery(e, owed, emit)
    else if (e.type === 'agent/inbox/spliced') {
      for (const m of e.data.inserted) {
        if (m.source.kind === 'schedule') emit('W3', `message ${m.id} of schedule ${m.source.scheduleId} is inserted without its firing right before it`)
      }
    }
    switch (e.type) {
      case 'schedule/created':
        if (this.#created.has(e.data.scheduleId)) emit('W1', `schedule ${e.data.scheduleId} is created a second time`)
        return
      case 'schedule/canceled':
        if (!this.#pending.has(e.data.scheduleId)) emit('W1', `schedule/canceled names ${e.data.scheduleId}, which is not pending`)
        return
      case 'schedule/fired': {
        const d = e.data
        const p = this.#pending.get(d.scheduleId)
        if (!p) {
          emit('W1', `schedule/fired names ${d.scheduleId}, which is not pending`)
          return
        }
        const missed = d.missed ?? 0
        const expected = p.due + missed * (p.every ?? 0)
        if (p.every === undefined && missed > 0) emit('W2', `one-shot schedule ${d.scheduleId} fired with missed ${missed}`)
        else if (d.due !== expected) {
          emit('W2', `schedule ${d.scheduleId} fired for due ${d.due}, but its ${missed > 0 ? `due after ${missed} missed periods` : 'next due time'} is ${expected}`)
        }
        if (e.time < d.due) emit('W2', `schedule ${d.scheduleId} fired at time ${e.time}, before its due time ${d.due}`)
        const busy = this.turns.openTurn !== null
        if (d.dropped === true && !(busy && p.whenBusy === 'drop')) {
          emit('W3', `schedule ${d.scheduleId} fired dropped ${busy ? `with whenBusy ${p.whenBusy}` : 'with no turn open'}`)
        } else if (d.dropped !== true && busy && p.whenBusy === 'drop') {
          emit('W3', `schedule ${d.scheduleId} (whenBusy drop) delivered while turn ${this.turns.openTurn} is open`)
        }
        return
      }
      default:
        return
    }
  }

  #checkDelivery(e: SessionEvent, owed: Owed, emit: Emit): void {
    const what = `the firing of schedule ${owed.scheduleId}`
    if (e.type !== 'agent/inbox/spliced') {
      emit('W3', `${what} is followed by ${e.type}, not by the splice of its message`)
      return
    }
    const d = e.data
    const m = d.inserted[0]
    if (d.inserted.length !== 1 || (d.removedCount ?? 0) > 0 || d.outcome !== undefined) {
      emit('W3', `${what} must be followed by a splice inserting its one message (no removal, no outcome)`)
    } else if (m!.source.kind !== 'schedule' || m!.source.scheduleId !== owed.scheduleId) {
      emit('W3', `${what} is followed by the splice of message ${m!.id}, whose source is not that schedule`)
    } else if (!owed.targets.includes(d.target)) {
      emit('W3', `${what} delivers to ${d.target}; its deliver/whenBusy say ${owed.targets.join(' or ')}`)
    }
  }

  apply(e: SessionEvent): void {
    if (this.#owed !== null) this.#owed = null
    switch (e.type) {
      case 'schedule/created': {
        const d = e.data
        this.#created.add(d.scheduleId)
        if (!this.#pending.has(d.scheduleId)) {
          this.#pending.set(d.scheduleId, { due: d.due, ...(d.every !== undefined ? { every: d.every } : {}), deliver: d.deliver, whenBusy: d.whenBusy })
        }
        return
      }
      case 'schedule/canceled':
        this.#pending.delete(e.data.scheduleId)
        return
      case 'schedule/fired': {
        const d = e.data
        const p = this.#pending.get(d.scheduleId)
        if (!p) return
        if (d.dropped !== true) this.#owed = { scheduleId: d.scheduleId, targets: deliveryTargets(p, this.turns.openTurn !== null) }
        if (p.every === undefined) this.#pending.delete(d.scheduleId)
        else p.due = Math.max(p.due, d.due) + p.every
        return
      }
      default:
        return
    }
  }
}

/** Where a firing's message may go (W3): by `deliver` with no turn open, by `whenBusy` with one. */
export function deliveryTargets(p: { deliver: ScheduleDeliver; whenBusy: ScheduleWhenBusy }, busy: boolean): Array<'next-turn' | 'next-step'> {
  if (p.deliver === 'followup' && !busy) return ['next-turn']
  if (busy && p.whenBusy === 'queue') return ['next-turn']
  // a waking send while a turn is aborting (or its closing not yet idle) is re-targeted to
  // next-turn (docs/spec/lifecycle.md §1); an inject does not wake, so it never is
  return p.deliver === 'inject' ? ['next-step'] : ['next-step', 'next-turn']
}
