/**
 * The lean interpreter's transition domains (machines/lean-actor.ts `domainOf`, the exit and entry
 * loops of `#take`): which states a targeted transition leaves and enters, and in which order, for
 * every placement of source and target in a three-level chart — siblings, a cross-branch target
 * taken from a nested state, a child target from its parent, a target that is an ancestor of the
 * source, the root as source or target, each with `reenter` false and true. Every state logs its
 * entry and exit (with the event that caused it) into the context, so the oracle (XState's actor,
 * test/machines/lean-oracle.ts) compares the exact order of entry, exit and transition actions.
 * The machines' decisions behind L2, L3, L12, L13 and R5 are run by this interpreter, so its
 * entry/exit order must be XState's.
 */
import fc from 'fast-check'
import { assign, setup, type EventObject } from 'xstate'
import { describe, expect, it } from 'vitest'
import { agreeWithXState } from './lean-oracle.js'

type Ctx = { log: string[] }
const log = (s: string) => assign<Ctx, EventObject, undefined, EventObject, never>({ log: ({ context, event }) => [...context.log, `${s}:${event.type}`] })
const at = (name: string) => ({ entry: log(`in:${name}`), exit: log(`out:${name}`) })

const chart = setup({ types: {} as { context: Ctx; events: EventObject } }).createMachine({
  id: 'm',
  context: { log: [] },
  initial: 'a',
  ...at('root'),
  on: {
    R: '.b',
    R_RE: { target: '.b', reenter: true },
    ROOTSELF: '#m',
    ROOTSELF_RE: { target: '#m', reenter: true },
  },
  states: {
    a: {
      ...at('a'),
      initial: 'x',
      on: {
        SELFA: 'a',
        SELFA_RE: { target: 'a', reenter: true },
        CHILD: '.y',
        CHILD_RE: { target: '.y', reenter: true },
      },
      states: {
        x: {
          ...at('x'),
          on: {
            SIB: { target: 'y', actions: log('t:SIB') },
            SELF: { target: 'x', actions: log('t:SELF') },
            SELF_RE: { target: 'x', reenter: true, actions: log('t:SELF_RE') },
            UP: { target: '#m.a', actions: log('t:UP') },
            UP_RE: { target: '#m.a', reenter: true },
            ACROSS: { target: '#m.b', actions: log('t:ACROSS') },
            DEEP: '#m.b.q',
            TOROOT: '#m',
            TOROOT_RE: { target: '#m', reenter: true },
          },
        },
        y: {
          ...at('y'),
          initial: 'y1',
          states: {
            y1: { ...at('y1'), on: { OUT: '#m.a.x', UPY: '#m.a.y', NEXT: 'y2' } },
            y2: { ...at('y2') },
          },
        },
      },
    },
    b: {
      ...at('b'),
      initial: 'p',
      on: { BACK: '#m.a.y.y2' },
      states: {
        p: { ...at('p'), on: { NEXT: 'q' } },
        q: { ...at('q') },
      },
    },
  },
})

const EVENTS = ['R', 'R_RE', 'ROOTSELF', 'ROOTSELF_RE', 'SELFA', 'SELFA_RE', 'CHILD', 'CHILD_RE', 'SIB', 'SELF', 'SELF_RE', 'UP', 'UP_RE', 'ACROSS', 'DEEP', 'TOROOT', 'TOROOT_RE', 'OUT', 'UPY', 'NEXT', 'BACK']
const probes = ['a', 'b', 'a.x', 'a.y', 'a.y.y1', { a: 'y' }, { a: { y: 'y2' } }, { b: 'q' }]
const events = (types: readonly string[]): EventObject[] => types.map((type) => ({ type }))
const logOf = (types: readonly string[]): string[] => (agreeWithXState(chart, events(types), { probes }).context as Ctx).log

describe('lean-actor transition domains = XState (exit innermost first, transition actions, entry outermost first)', () => {
  it('start: the root, then the initial path, each entered once (L2 L3: lean = XState)', () => {
    expect(logOf([])).toEqual(['in:root:xstate.init', 'in:a:xstate.init', 'in:x:xstate.init'])
  })

  it.each(EVENTS)('%s from the initial state: same value, context and entry/exit order as XState (L2 L3)', (type) => {
    agreeWithXState(chart, events([type]), { probes })
  })

  it('a sibling transition in a nested state leaves and enters only below the parent', () => {
    expect(logOf(['SIB']).slice(3)).toEqual(['out:x:SIB', 't:SIB:SIB', 'in:y:SIB', 'in:y1:SIB'])
  })

  it('a cross-branch transition taken by a nested state leaves up to the root, enters the other branch', () => {
    expect(logOf(['ACROSS']).slice(3)).toEqual(['out:x:ACROSS', 'out:a:ACROSS', 't:ACROSS:ACROSS', 'in:b:ACROSS', 'in:p:ACROSS'])
  })

  it('self transitions: reenter false leaves nothing, reenter true leaves and re-enters the state', () => {
    expect(logOf(['SELF']).slice(3)).toEqual(['t:SELF:SELF'])
    expect(logOf(['SELF_RE']).slice(3)).toEqual(['out:x:SELF_RE', 't:SELF_RE:SELF_RE', 'in:x:SELF_RE'])
  })

  it('a child target from its parent: reenter false keeps the parent, reenter true leaves and re-enters it', () => {
    expect(logOf(['CHILD']).slice(3)).toEqual(['out:x:CHILD', 'in:y:CHILD', 'in:y1:CHILD'])
    expect(logOf(['CHILD_RE']).slice(3)).toEqual(['out:x:CHILD_RE', 'out:a:CHILD_RE', 'in:a:CHILD_RE', 'in:y:CHILD_RE', 'in:y1:CHILD_RE'])
  })

  it('a target that is an ancestor of the source is left and re-entered, as XState does (bug fixed here)', () => {
    expect(logOf(['UP']).slice(3)).toEqual(['out:x:UP', 'out:a:UP', 't:UP:UP', 'in:a:UP', 'in:x:UP'])
    expect(logOf(['UP_RE']).slice(3)).toEqual(['out:x:UP_RE', 'out:a:UP_RE', 'in:a:UP_RE', 'in:x:UP_RE'])
    expect(logOf(['SIB', 'UPY']).slice(7)).toEqual(['out:y1:UPY', 'out:y:UPY', 'in:y:UPY', 'in:y1:UPY'])
  })

  it('the root: a reentering root transition leaves and re-enters the root, as XState does (bug fixed here)', () => {
    expect(logOf(['R']).slice(3)).toEqual(['out:x:R', 'out:a:R', 'in:b:R', 'in:p:R'])
    expect(logOf(['R_RE']).slice(3)).toEqual(['out:x:R_RE', 'out:a:R_RE', 'out:root:R_RE', 'in:root:R_RE', 'in:b:R_RE', 'in:p:R_RE'])
    expect(logOf(['ROOTSELF']).slice(3)).toEqual(['out:x:ROOTSELF', 'out:a:ROOTSELF', 'in:a:ROOTSELF', 'in:x:ROOTSELF'])
    expect(logOf(['ROOTSELF_RE']).slice(3)).toEqual(['out:x:ROOTSELF_RE', 'out:a:ROOTSELF_RE', 'out:root:ROOTSELF_RE', 'in:root:ROOTSELF_RE', 'in:a:ROOTSELF_RE', 'in:x:ROOTSELF_RE'])
    // XState enters the root again (without leaving it) when a nested state targets it without reenter
    expect(logOf(['TOROOT']).slice(3)).toEqual(['out:x:TOROOT', 'out:a:TOROOT', 'in:root:TOROOT', 'in:a:TOROOT', 'in:x:TOROOT'])
    expect(logOf(['TOROOT_RE']).slice(3)).toEqual(['out:x:TOROOT_RE', 'out:a:TOROOT_RE', 'out:root:TOROOT_RE', 'in:root:TOROOT_RE', 'in:a:TOROOT_RE', 'in:x:TOROOT_RE'])
  })

  it('deep targets across branches, and an event handled by the parent of a deeper state', () => {
    expect(logOf(['DEEP', 'BACK']).slice(3)).toEqual(['out:x:DEEP', 'out:a:DEEP', 'in:b:DEEP', 'in:q:DEEP', 'out:q:BACK', 'out:b:BACK', 'in:a:BACK', 'in:y:BACK', 'in:y2:BACK'])
    agreeWithXState(chart, events(['SIB', 'NEXT', 'OUT', 'ACROSS', 'NEXT', 'BACK', 'UP']), { probes })
  })

  it('random event sequences: same value, context and matches as XState after every event (L2 L3)', () => {
    fc.assert(fc.property(fc.array(fc.constantFrom(...EVENTS), { maxLength: 25 }), (types) => void agreeWithXState(chart, events(types), { probes })))
  })
})
