/**
 * Dispose and crash while parked (docs/spec/lifecycle.md §9 "While parked", "Re-execution and fuzzing"; issue
 * 21 item 9), on with `fuzzAgent({ approvals: true })`. A parked session is quiescent, so the
 * process holding it may stop: cleanly (`dispose()`: the session stays parked, the log says what
 * is owed) or by being killed. Either way `resumeAgent` restores the parked step and the run goes
 * on with the resumed agent: the pending decisions, expiries, steers and cancels reach it, and the
 * oracle checks the whole log (R10 counts bodies across both agents: the recorder is the run's).
 *
 * - `dispose`: `await agent.dispose()`; it must write no `turn/end` or `step/end`, and the stored
 *   log's last lifecycle event (`turn/*`, `step/*`) must be `step/parked`. Then `resumeAgent`
 *   over the same memory store (`{ store, sessionId }`: repaired under the write lock, which
 *   finds nothing to close).
 * - `crash`: the agent is dropped without dispose, as a killed process is; its timers are fenced
 *   (run.ts: a timer of an agent that is no longer the run's never fires), and no decision or
 *   command reaches it (they go to `run.agent`). The memory store cannot take a session from a
 *   writer that never closed (`SESSION_OWNED`, as a live writer in one process should be), so the
 *   resume reads a copy of the log's events (`{ log }`, no store), as a process reading a killed
 *   one's file would. With children (their logs are in the store) a crash is a dispose.
 */
import type { AgentOptions } from '../../agent/types.js'
import type { TurnlogAgent } from '../../agent/agent.js'
import type { LogEvent } from '../../events/index.js'
import { resumeAgent } from '../../replay/resume.js'
import type { LogStore } from '../../stores/types.js'
import { bump } from './census.js'
import { FuzzViolation } from './failure.js'

/** What a restart needs from the run (run.ts's `Run`; named here so this file does not import run.ts). */
export interface RestartHost {
  agent: TurnlogAgent
  restarts: Record<string, number>
}

const LIFECYCLE = /^(turn|step)\//

/** The last `turn/*` or `step/*` event's type (null when there is none). */
export function lastLifecycle(events: readonly LogEvent[]): string | null {
  for (let k = events.length - 1; k >= 0; k--) if (LIFECYCLE.test(events[k]!.type)) return events[k]!.type
  return null
}

const fail = (inv: string, msg: string, events: readonly LogEvent[]) => new FuzzViolation(inv, msg, [...events])

/**
 * The run's `restart`: `options(live)` are the agent's options with timers that fire only while
 * `live()`; `wire` installs the run's recorders and listeners on an agent and makes it the run's.
 */
export function restarter(run: RestartHost, store: LogStore | null, canCrash: boolean, options: (live: () => boolean) => AgentOptions,
  wire: (agent: TurnlogAgent) => void): (kind: 'dispose' | 'crash') => Promise<void> {
  // after a crash the store's session still has the dropped agent's writer: later restarts read copies
  let inStore = store !== null
  return async (asked) => {
    const old = run.agent
    if (old.status !== 'parked') return
    const kind = asked === 'crash' && canCrash ? 'crash' : 'dispose'
    const before = old.events.length
    let resumed: TurnlogAgent
    const { store: _s, sessionId: _i, ...rest } = options(() => run.agent === resumed)
    if (kind === 'dispose') {
      await old.dispose()
      const closed = old.events.slice(before).find((e) => e.type === 'turn/end' || e.type === 'step/end')
      if (closed) throw fail('L18', `dispose of a parked agent wrote ${closed.type} at seq ${closed.seq}: the session must stay parked`, old.events)
    } else {
      // dropped as it stands: nothing more reaches it (its timers are fenced once `resumed` is the run's agent)
      inStore = false
    }
    if (inStore && store !== null) {
      const stored = await storedEvents(store)
      if (stored.length !== old.events.length) throw fail('API', `after dispose the store holds ${stored.length} events, the agent logged ${old.events.length}`, old.events)
      const last = lastLifecycle(stored)
      if (last !== 'step/parked') throw fail('L18', `after dispose of a parked agent the stored log's last lifecycle event is ${last}, not step/parked`, stored)
      resumed = await resumeAgent({ ...rest, store, sessionId: 'fuzz', autoStart: false }) as TurnlogAgent
    } else {
      const last = lastLifecycle(old.events)
      if (kind === 'dispose' && last !== 'step/parked') throw fail('L18', `after dispose of a parked agent its log's last lifecycle event is ${last}, not step/parked`, old.events)
      resumed = await resumeAgent({ ...rest, sessionId: 'fuzz', log: old.events.slice(), autoStart: false }) as TurnlogAgent
    }
    bump(run.restarts, `parked: ${kind}`)
    const prefix = resumed.events.length
    if (prefix < before) throw fail('API', `the resumed agent holds ${prefix} events, the log had ${before}`, resumed.events)
    wire(resumed)
    // docs/spec/lifecycle.md §9: the parked step is restored as it is (no repair closers, no re-run)
    const added = resumed.events.slice(before)
    const closer = added.find((e) => e.type === 'turn/end' || e.type === 'step/end' || e.type === 'tool/result')
    if (closer) throw fail('L18', `resuming a parked log wrote ${closer.type} at seq ${closer.seq} (the parked step must be restored as it is)`, resumed.events)
    resumed.wake()
    if (resumed.status === 'parked') bump(run.restarts, 'parked: resumed parked')
    else throw fail('L18', `the resumed agent of a parked log is ${resumed.status}, not parked`, resumed.events)
  }
}

async function storedEvents(store: LogStore): Promise<LogEvent[]> {
  const reader = await store.open('fuzz', 'read')
  const stored: LogEvent[] = []
  for await (const e of reader.events(0)) stored.push(e)
  await reader.close()
  return stored
}
