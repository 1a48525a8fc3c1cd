/** Test harness for wakeups: a clock the test moves and timers the test runs (nothing sleeps). */
import { createAgent } from '../../agent/agent.js'
import type { Agent, AgentOptions, Timers } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { counterIds } from './helpers.js'

export interface ManualTimer { fn: () => void; ms: number }

export class Clock {
  constructor(public now = 1_000_000) {}
  readonly read = (): number => this.now
}

/** Timers that fire only when the test says (`runDue`), measured on `clock`. */
export class ManualTimers {
  readonly pending = new Set<ManualTimer & { at: number }>()
  armed = 0
  constructor(readonly clock: Clock) {}
  readonly timers: Timers = {
    sleep: async () => {},
    random: () => 0.5,
    setTimeout: (fn, ms) => {
      const h = { fn, ms, at: this.clock.now + ms }
      this.armed++
      this.pending.add(h)
      return h
    },
    clearTimeout: (h) => {
      this.pending.delete(h as ManualTimer & { at: number })
    },
  }
  /** Runs every timer whose time has come on the clock (or all, `force`: a timer firing early). */
  runDue(force = false): number {
    let n = 0
    for (const h of [...this.pending]) {
      if (!force && h.at > this.clock.now) continue
      this.pending.delete(h)
      h.fn()
      n++
    }
    return n
  }
}

export function wakeupAgent(extra: Partial<AgentOptions> = {}, clock = new Clock()): { agent: Agent; clock: Clock; t: ManualTimers } {
  const t = new ManualTimers(clock)
  const agent = createAgent({
    model: scriptedModel(() => ({ text: 'ok' })),
    clock: clock.read,
    ids: counterIds('id'),
    timers: t.timers,
    retry: false,
    ...extra,
  })
  return { agent, clock, t }
}

/** The wakeup-related shape of a log: schedule events, splices (with their source) and turns. */
export function wtrace(events: readonly LogEvent[]): string[] {
  const out: string[] = []
  for (const e of events) {
    const d = e.data as Record<string, any>
    switch (e.type) {
      case 'schedule/created':
        out.push(`created ${d.scheduleId} due ${d.due}${d.every ? ` every ${d.every}` : ''}`)
        break
      case 'schedule/fired':
        out.push(`fired ${d.scheduleId} due ${d.due}${d.missed ? ` missed ${d.missed}` : ''}${d.dropped ? ' dropped' : ''}`)
        break
      case 'schedule/canceled':
        out.push(`canceled ${d.scheduleId}`)
        break
      case 'agent/inbox/spliced':
        if (d.inserted.length > 0) out.push(`insert ${d.target} ${d.inserted.map((m: any) => `${m.id}(${m.source.kind})`).join(',')}`)
        else out.push(`remove ${d.target} ${d.removedCount}${d.outcome ? ` ${d.outcome}` : ''}`)
        break
      case 'turn/start':
      case 'turn/end':
        out.push(`${e.type} ${d.turn}${d.cause ? ` ${d.cause.kind}` : ''}`)
        break
      case 'step/start':
        out.push(`step ${d.turn}.${d.step}`)
        break
      case 'user/message':
        out.push(`user ${d.message.id}`)
        break
    }
  }
  return out
}
