/**
 * `matches` of the lean interpreter's snapshot = XState's `snapshot.matches`, on atomic (string)
 * and nested (object) state values, for dotted strings and object patterns, matching and
 * non-matching alike: a path deeper than the state, a sibling key, a partial object, the empty
 * object. The agent decides on `matches` (turn and step drivers), so a wrong answer would change
 * which lifecycle events it writes (L2, L3, L12).
 */
import { createMachine, type StateValue } from 'xstate'
import { describe, expect, it } from 'vitest'
import { createLeanActor } from '../../machines/lean-actor.js'
import { agreeWithXState } from './lean-oracle.js'

const chart = createMachine({
  initial: 'top',
  on: { TOP: '.top', X: '.a.x', Y1: '.a.y.y1', Y2: '.a.y.y2' },
  states: {
    top: {},
    a: { initial: 'x', states: { x: {}, y: { initial: 'y1', states: { y1: {}, y2: {} } } } },
  },
})

const PROBES: StateValue[] = [
  'top', 'top.x', 'a', 'x', 'a.x', 'a.y', 'a.z', 'a.x.deep', 'a.y.y1', 'a.y.y2', 'a.y.y1.deep', 'y1', 'top.a', '',
  {}, { a: 'x' }, { a: 'y' }, { a: 'z' }, { a: {} }, { a: { y: 'y1' } }, { a: { y: 'y2' } }, { a: { y: {} } }, { a: { x: 'deep' } }, { top: 'x' }, { b: 'x' },
]

function lean(events: string[]): { matches(v: StateValue): boolean } {
  const actor = createLeanActor(chart, undefined)
  for (const type of events) actor.send({ type })
  return actor.getSnapshot()
}

describe('lean-actor matches() = XState matches()', () => {
  it('every probe, in every state, answers as XState does (L2 L3 L12)', () => {
    agreeWithXState(chart, ['X', 'Y1', 'Y2', 'TOP', 'Y2', 'X'].map((type) => ({ type })), { probes: PROBES })
  })

  it('an atomic top-level state: itself only, not a path below it, not an object pattern', () => {
    const s = lean([])
    expect(s.matches('top')).toBe(true)
    expect(s.matches('top.x')).toBe(false)
    expect(s.matches({})).toBe(false)
    expect(s.matches({ top: 'x' })).toBe(false)
  })

  it('a nested state: its own path and its ancestors, not a sibling, not a path below the atomic state', () => {
    const s = lean(['Y1'])
    expect(['a', 'a.y', 'a.y.y1', { a: 'y' }, { a: { y: 'y1' } }, {}, { a: {} }].map((v) => s.matches(v))).toEqual([true, true, true, true, true, true, true])
    expect(['a.x', 'y1', 'a.z', 'a.y.y2', 'a.y.y1.deep', { a: 'x' }, { a: { y: 'y2' } }, { b: 'x' }].map((v) => s.matches(v))).toEqual([false, false, false, false, false, false, false, false])
  })

  it('a machine without states: the value is the empty object, as in XState (bug fixed here: it was undefined)', () => {
    const stateless = createMachine({ context: { n: 1 } })
    expect(agreeWithXState(stateless, [{ type: 'ANY' }], { probes: PROBES }).value).toEqual({})
    expect(createLeanActor(stateless, undefined).getSnapshot().value).toEqual({})
  })
})
