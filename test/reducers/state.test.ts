/**
 * reducers/state.ts: `ALL_REDUCERS` names the reducer of every slice of `ReplayState`, and folding
 * with them one by one gives the combined fold (P1: one recipe per slice, the same state either way).
 */
import { describe, expect, it } from 'vitest'
import { ALL_REDUCERS, foldEvents, initialReplayState, type ReplayState } from '../../reducers/index.js'
import { buildFromOps } from './logs.js'

describe('ALL_REDUCERS', () => {
  it('P1: one reducer per slice; applied slice by slice they give foldEvents\' state', () => {
    expect(Object.keys(ALL_REDUCERS).sort()).toEqual(Object.keys(initialReplayState()).sort())
    const events = buildFromOps([
      { op: 'send', target: 'next-turn', text: 'hello' },
      { op: 'turn', steps: [{ kind: 'tools', calls: 1, steer: false, prune: null, compact: null }, { kind: 'text', calls: 1, steer: false, prune: null, compact: null }] },
    ])
    const state: Record<string, unknown> = {}
    for (const [slice, reducer] of Object.entries(ALL_REDUCERS)) {
      expect(reducer.name).toBe(slice)
      const s = reducer.initial() as never
      for (const e of events) reducer.apply(s, e)
      state[slice] = s
    }
    expect(state as unknown as ReplayState).toEqual(foldEvents(events))
  })
})
