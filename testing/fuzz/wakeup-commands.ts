/**
 * The fuzzer's wakeup commands (docs/spec/lifecycle.md §10): schedule a one-shot wakeup due a few clock ticks
 * from now (the fuzz clock advances one per reading, and the wakeup timer fires when the scheduler
 * releases it, so it comes due idle, mid-stream, mid-tool or while a turn aborts), with any
 * `deliver` and `whenBusy`; cancel a pending one. `verify` then checks W1–W3 on the run's log and
 * the oracle checks that every wakeup fired or was canceled by the end (W2: none is lost).
 * Repeating schedules are not generated: a run must reach idle, and a period keeps opening turns.
 */
import fc from 'fast-check'
import type { ScheduleDeliver, ScheduleWhenBusy } from '../../events/index.js'
import { checkInboxFollowsLog, failed } from './oracle.js'
import type { Run } from './run.js'

type Cmd = fc.AsyncCommand<object, Run>

class Wakeup implements Cmd {
  constructor(readonly inTicks: number, readonly deliver: ScheduleDeliver, readonly whenBusy: ScheduleWhenBusy) {}
  check = () => true
  async run(_m: object, r: Run) {
    const before = r.agent.schedules().length
    const id = r.agent.schedule({ in: this.inTicks, message: `wake ${this.inTicks}`, deliver: this.deliver, whenBusy: this.whenBusy })
    const listed = r.agent.schedules()
    if (listed.length !== before + 1 || !listed.some((p) => p.scheduleId === id)) throw failed(`schedule(${id}) is not listed by schedules()`, r)
    checkInboxFollowsLog(r)
  }
  toString = () => `schedule(in ${this.inTicks}, ${this.deliver}, ${this.whenBusy})`
}

class Unschedule implements Cmd {
  constructor(readonly pick: number) {}
  check = () => true
  async run(_m: object, r: Run) {
    const pending = r.agent.schedules()
    if (pending.length === 0) {
      if (r.agent.unschedule('absent-schedule')) throw failed('unschedule of an absent id returned true', r)
      return
    }
    const id = pending[this.pick % pending.length]!.scheduleId
    if (!r.agent.unschedule(id)) throw failed(`unschedule(${id}) of a pending schedule returned false`, r)
    if (r.agent.schedules().some((p) => p.scheduleId === id)) throw failed(`${id} still pending after unschedule`, r)
  }
  toString = () => `unschedule(${this.pick})`
}

/** The wakeup command arbitraries `arbCommands` adds. */
export function wakeupCommands(): Array<fc.Arbitrary<Cmd>> {
  return [
    fc.tuple(
      fc.integer({ min: 0, max: 40 }),
      fc.constantFrom<ScheduleDeliver>('followup', 'steer', 'inject'),
      fc.constantFrom<ScheduleWhenBusy>('queue', 'steer', 'drop'),
    ).map(([n, d, w]) => new Wakeup(n, d, w)),
    fc.nat(9).map((p) => new Unschedule(p)),
  ]
}
