/**
 * P7 (reducers never mutate and their results are immutable): every fold runner hands back a
 * deeply frozen state, whatever its batch size and whether immer's autoFreeze is on (issue 15: the
 * immer runner's result was never checked frozen, so dropping the final `freezeState` survived).
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { foldEvents } from '../../reducers/index.js'
import { foldEventsWithImmer } from '../../reducers/projection.js'
import { buildFromOps } from './logs.js'

/** The paths of objects reachable from `v` that are not frozen (empty: deeply frozen). */
function unfrozen(v: unknown, path = '$', seen = new Set<unknown>(), out: string[] = []): string[] {
  if (typeof v !== 'object' || v === null || seen.has(v)) return out
  seen.add(v)
  if (!Object.isFrozen(v)) out.push(path)
  if (v instanceof Map) for (const [k, x] of v) unfrozen(x, `${path}.get(${String(k)})`, seen, out)
  else for (const [k, x] of Object.entries(v)) unfrozen(x, `${path}.${k}`, seen, out)
  return out
}

function log(): LogEvent[] {
  return buildFromOps([
    { op: 'send', target: 'next-turn', text: 'hello' },
    { op: 'send', target: 'next-step', text: 'steer' },
    { op: 'turn', steps: [
      { kind: 'tools', calls: 2, steer: true, prune: 0, compact: null },
      { kind: 'max', calls: 1, steer: false, prune: null, compact: 0 },
      { kind: 'text', calls: 1, steer: false, prune: null, compact: null },
    ] },
    { op: 'send', target: 'next-turn', text: 'again' },
    { op: 'turn', steps: [{ kind: 'fail', calls: 1, steer: false, prune: null, compact: null }] },
  ], { freeze: false })
}

describe('P7: fold results are deeply frozen', () => {
  const events = log()

  it('the log under test has turns, steps and messages (the check is not vacuous)', () => {
    const s = foldEvents(events)
    expect(s.transcript.items.length).toBeGreaterThanOrEqual(2)
    expect(events.length).toBeGreaterThan(20)
  })

  it('foldEvents', () => {
    expect(unfrozen(foldEvents(events))).toEqual([])
  })

  it('foldEventsWithImmer with autoFreeze, in one batch and in small batches', () => {
    expect(unfrozen(foldEventsWithImmer(events))).toEqual([])
    expect(unfrozen(foldEventsWithImmer(events, 3))).toEqual([])
  })

  it('foldEventsWithImmer without autoFreeze still returns a frozen state', () => {
    expect(unfrozen(foldEventsWithImmer(events, 3, events.length, false))).toEqual([])
    expect(unfrozen(foldEventsWithImmer(events, 10_000, 7, false))).toEqual([])
  })

  it('P1: the immer runner folds only events[0 .. end) when given an end, like the plain runner', () => {
    const prefix = foldEvents(events, { end: 7 })
    expect(foldEventsWithImmer(events, 3, 7, false)).toEqual(prefix)
    expect(foldEventsWithImmer(events, 10_000, 7)).toEqual(prefix)
    expect(foldEvents(events, { end: 7, runner: 'immer', batchSize: 2 })).toEqual(prefix)
    expect(prefix).toEqual(foldEvents(events.slice(0, 7)))
    expect(prefix).not.toEqual(foldEvents(events))
  })

  it('folding never mutates the (unfrozen) events', () => {
    const before = structuredClone(events)
    foldEvents(events)
    foldEventsWithImmer(events, 4, events.length, false)
    expect(events).toEqual(before)
  })
})
