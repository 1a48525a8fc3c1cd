/**
 * The fold runners' contracts beyond their result (issue 15 part 3, reducers/projection.ts
 * survivors): `foldEvents` uses immer only when asked (`runner: 'immer'`), the immer runner does one
 * `produce` per `batchSize` events (default 10,000) on private `Immer` instances created once —
 * the freezing one (autoFreeze on, the default) or the plain one — and `freezeState` stops at
 * objects already frozen (the events' own messages), so a fold never re-freezes the log (P7's cost).
 * Each test also checks the result equals the plain fold (P1).
 *
 * immer is wrapped (vi.mock) only to count its instances and `produce` calls; it still does the work.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { foldEvents, freezeState } from '../../reducers/index.js'
import { foldEventsWithImmer } from '../../reducers/projection.js'
import { buildFromOps } from './logs.js'

const seen = vi.hoisted(() => ({ created: [] as unknown[], produced: [] as unknown[] }))

vi.mock('immer', async (importOriginal) => {
  const real = await importOriginal<typeof import('immer')>()
  class CountingImmer extends real.Immer {
    constructor(config?: ConstructorParameters<typeof real.Immer>[0]) {
      super(config)
      seen.created.push(config)
      const inner = this.produce
      this.produce = ((base: unknown, recipe: unknown) => {
        seen.produced.push(config)
        return (inner as (b: unknown, r: unknown) => unknown)(base, recipe)
      }) as typeof this.produce
    }
  }
  return { ...real, Immer: CountingImmer }
})

afterEach(() => {
  seen.produced.length = 0
})

function log(freeze: boolean): LogEvent[] {
  return buildFromOps([
    { op: 'send', target: 'next-turn', text: 'hello' },
    { op: 'turn', steps: [
      { kind: 'tools', calls: 2, steer: false, prune: null, compact: null },
      { kind: 'text', calls: 1, steer: false, prune: null, compact: null },
    ] },
  ], { freeze })
}

/** `events` cut to exactly `n` events (batch arithmetic below needs exact counts). */
function first(n: number): LogEvent[] {
  const events = log(true)
  expect(events.length).toBeGreaterThanOrEqual(n)
  return events.slice(0, n)
}

describe('fold runners (P1, P7)', () => {
  it('the immer runner creates its two private instances once (autoFreeze on, off), on first use', () => {
    expect(seen.created).toEqual([])
    const events = first(6)
    foldEventsWithImmer(events)
    foldEventsWithImmer(events, 10, events.length, false)
    foldEvents(events, { runner: 'immer' })
    expect(seen.created).toEqual([{ autoFreeze: true }, { autoFreeze: false }])
  })

  it('foldEvents uses immer only for runner "immer", with the default batch size 10,000', () => {
    const events = first(6)
    expect(foldEvents(events)).toEqual(foldEvents(events, { runner: 'plain' }))
    expect(seen.produced).toEqual([])
    const viaImmer = foldEvents(events, { runner: 'immer' })
    expect(seen.produced).toEqual([{ autoFreeze: true }]) // one batch: 6 < 10,000
    expect(viaImmer).toEqual(foldEvents(events))
  })

  it('one produce per batchSize events, the last batch partial, none past the end', () => {
    const events = first(6)
    const plain = foldEvents(events)
    expect(foldEvents(events, { runner: 'immer', batchSize: 2 })).toEqual(plain)
    expect(seen.produced).toHaveLength(3) // [0,2) [2,4) [4,6)
    seen.produced.length = 0
    expect(foldEventsWithImmer(events, 4)).toEqual(plain)
    expect(seen.produced).toHaveLength(2) // [0,4) [4,6)
    seen.produced.length = 0
    expect(foldEventsWithImmer(events, 2.9)).toEqual(plain) // a fractional size rounds down
    expect(seen.produced).toHaveLength(3)
    seen.produced.length = 0
    expect(foldEventsWithImmer(events, 0)).toEqual(plain) // a size below 1 folds one event per batch
    expect(seen.produced).toHaveLength(6)
    seen.produced.length = 0
    expect(foldEventsWithImmer(events, 2, 4)).toEqual(foldEvents(events, { end: 4 }))
    expect(seen.produced).toHaveLength(2)
  })

  it('autoFreeze (the default) folds on the freezing instance; off, on the plain one', () => {
    const events = first(6)
    foldEventsWithImmer(events)
    foldEventsWithImmer(events, 10_000, events.length, false)
    expect(seen.produced).toEqual([{ autoFreeze: true }, { autoFreeze: false }])
  })

  it('P7: freezing a state never calls Object.freeze on an object already frozen (the events\' own)', () => {
    const events = log(true)
    expect(Object.isFrozen(events[0])).toBe(true)
    const realFreeze = Object.freeze
    const args: Array<{ frozen: boolean }> = []
    const spy = vi.spyOn(Object, 'freeze').mockImplementation(((o: object) => {
      args.push({ frozen: Object.isFrozen(o) })
      return realFreeze(o)
    }) as typeof Object.freeze)
    try {
      const state = foldEvents(events)
      expect(Object.isFrozen(state.transcript)).toBe(true)
      expect(args.length).toBeGreaterThan(0) // the state's own objects were frozen
      expect(args.filter((a) => a.frozen)).toEqual([])
      // a second freeze of the (now frozen) state stops at its root
      args.length = 0
      expect(freezeState(state)).toBe(state)
      expect(args).toEqual([])
    } finally {
      spy.mockRestore()
    }
  })
})
