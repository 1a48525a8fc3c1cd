/**
 * An independent oracle for the lifecycle fold (reducers/lifecycle.ts; issue 15 part 3: the only
 * slice without one, 71% mutation score). The oracle reads each field off the whole prefix by its
 * definition (docs/spec/lifecycle.md §3–§4: the last `turn/start` not closed, the calls of the open step not
 * yet answered by an appended `tool/result`, …) rather than event by event, and is compared with the
 * live fold after every event (P1, P2) on the local generator and on `arbValidLog`, plus one
 * hand-built log that has every field set (a retry turn, a resume cause, a seed end, a compaction
 * bracket, a replaced tool result).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { EventDataMap, EventOf, LogEvent } from '../../events/index.js'
import { createLiveProjection, type LifecycleState, type PendingToolCall } from '../../reducers/index.js'
import { arbValidLog } from '../../testing/arbitraries/index.js'
import { fcRuns } from '../fc-runs.js'
import { arbOps, buildFromOps, LogBuilder } from './logs.js'

function lastIndex(events: readonly LogEvent[], pred: (e: LogEvent) => boolean): number {
  for (let i = events.length - 1; i >= 0; i--) if (pred(events[i]!)) return i
  return -1
}

const dataOf = <T extends keyof EventDataMap>(e: LogEvent, _t: T) => (e as EventOf<T>).data

/** The lifecycle position of `events` (a prefix of a log), from its definition. */
export function lifecycleOracle(events: readonly LogEvent[]): LifecycleState {
  const is = (t: string) => (e: LogEvent) => e.type === t
  const ts = lastIndex(events, is('turn/start'))
  const te = lastIndex(events, is('turn/end'))
  const turnOpen = ts >= 0 && ts > te
  const ss = lastIndex(events, is('step/start'))
  const se = lastIndex(events, is('step/end'))
  const stepOpen = ss >= 0 && ss > se
  const stepStartedThisTurn = ss > ts
  // streaming: the last of {chunk inside an open step, assistant/message, step/start, step/end} is a chunk
  let streaming = false
  let open = false
  for (const e of events) {
    if (e.type === 'step/start') { open = true; streaming = false }
    else if (e.type === 'step/end') { open = false; streaming = false }
    else if (e.type === 'assistant/message') streaming = false
    else if (e.type === 'assistant/chunk' && open) streaming = true
  }
  let pending: PendingToolCall[] = []
  if (stepOpen) {
    pending = events.slice(ss).filter(is('tool/call')).map((e) => {
      const d = dataOf(e, 'tool/call')
      return { seq: e.seq, callId: d.callId, name: d.name, arguments: d.arguments }
    })
    for (const e of events.slice(ss)) {
      if (e.type !== 'tool/result' || e.surfaceOp !== 'append') continue
      const i = pending.findIndex((p) => p.callId === dataOf(e, 'tool/result').callId)
      if (i >= 0) pending.splice(i, 1)
    }
  }
  const cs = lastIndex(events, is('compaction/start'))
  const ce = lastIndex(events, is('compaction/end'))
  const hs = lastIndex(events, is('request/header'))
  const seed = lastIndex(events, is('session/end-seed'))
  const lastEnd = se >= 0 ? dataOf(events[se]!, 'step/end').outcome : null
  return {
    lastSeq: events.length > 0 ? events.at(-1)!.seq : -1,
    openTurn: turnOpen ? dataOf(events[ts]!, 'turn/start').turn : null,
    openTurnSeq: turnOpen ? events[ts]!.seq : null,
    openTurnCause: turnOpen ? (dataOf(events[ts]!, 'turn/start').cause ?? null) : null,
    openStep: stepOpen ? dataOf(events[ss]!, 'step/start').step : null,
    lastTurn: ts >= 0 ? dataOf(events[ts]!, 'turn/start').turn : 0,
    lastStep: ts >= 0 && stepStartedThisTurn ? dataOf(events[ss]!, 'step/start').step : ts < 0 && ss >= 0 ? dataOf(events[ss]!, 'step/start').step : 0,
    streaming,
    pendingToolCalls: pending,
    lastStepOutcome: lastEnd,
    lastTurnEndReason: te >= 0 ? dataOf(events[te]!, 'turn/end').reason : null,
    openCompaction: cs >= 0 && cs > ce ? dataOf(events[cs]!, 'compaction/start').compactionId : null,
    header: hs >= 0 ? dataOf(events[hs]!, 'request/header') : null,
    headerSeq: hs >= 0 ? events[hs]!.seq : null,
    seedEndSeq: seed >= 0 ? events[seed]!.seq : null,
    // docs/spec/lifecycle.md §9: the last step/parked, if only inbox splices (or schedule/extension events) follow it
    parkedSeq: (() => {
      const p = lastIndex(events, is('step/parked'))
      return p >= 0 && events.slice(p + 1).every((e) => e.type === 'agent/inbox/spliced' || e.type.startsWith('schedule/')) ? events[p]!.seq : null
    })(),
  }
}

/** The live fold after every event equals the oracle of that prefix. */
function expectOracleAtEverySeq(events: readonly LogEvent[]): void {
  const p = createLiveProjection()
  expect(p.state.lifecycle).toEqual(lifecycleOracle([]))
  for (let i = 0; i < events.length; i++) {
    p.apply(events[i]!)
    expect(p.state.lifecycle, `after seq ${events[i]!.seq} (${events[i]!.type})`).toEqual(lifecycleOracle(events.slice(0, i + 1)))
  }
}

describe('lifecycle fold = its oracle at every seq (P1, P2)', () => {
  it('a hand-built log with every field set: seed, retry turn, compaction bracket, replaced (pruned) result', () => {
    const b = new LogBuilder()
    b.send('seeded')
    b.startTurn()
    b.startStep(b.claimNextStep())
    b.runTools(b.respond({ calls: 2 }))
    b.endStep({ kind: 'tools' })
    b.endTurn({ kind: 'completed' })
    b.prune(b.surface.findIndex((n) => n.type === 'tool/result'))
    b.compact(0, 1)
    b.seedEnd()
    b.send('again')
    b.startTurn()
    b.startStep(b.claimNextStep())
    b.failRequest({ code: 'SERVER', message: 'down' })
    b.endStep({ kind: 'failed', failure: { code: 'SERVER', message: 'down' } })
    b.endTurn({ kind: 'error', failure: { code: 'SERVER', message: 'down' } })
    b.startTurn(2)
    b.startStep(b.claimNextStep())
    const ids = b.respond({ calls: 3 })
    b.runTools(ids.slice(0, 1))
    const events = b.events
    const kinds = new Set(events.map((e) => e.type))
    expect(events.some((e) => e.type === 'tool/result' && e.surfaceOp !== 'append')).toBe(true) // the prune's replacement
    for (const t of ['compaction/start', 'compaction/end', 'session/end-seed', 'tool/call', 'tool/result', 'assistant/chunk', 'request/header', 'turn/end', 'step/end']) expect(kinds).toContain(t)
    expectOracleAtEverySeq(events)
    // the end of this log: the retry turn is open with two calls owed
    const p = createLiveProjection(events)
    expect(p.state.lifecycle).toMatchObject({ openTurn: 3, openTurnCause: { kind: 'retry', of: 2 }, openStep: 1, lastStep: 1 })
    expect(p.state.lifecycle.pendingToolCalls.map((c) => c.callId)).toEqual(ids.slice(1))
  })

  it('on the local generator and on arbValidLog', () => {
    fc.assert(fc.property(arbOps.map((ops) => buildFromOps(ops)), expectOracleAtEverySeq), { numRuns: fcRuns(200) })
    fc.assert(fc.property(arbValidLog(), expectOracleAtEverySeq), { numRuns: fcRuns(200) })
  })
})
