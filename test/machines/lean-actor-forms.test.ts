/**
 * The forms inside the lean interpreter's subset run exactly as XState runs them (oracle: XState's
 * actor, test/machines/lean-oracle.ts): every way a guard can be written (none, `null`, a name, an
 * object `{ type }`, an inline function, `and`/`or` nested in each other), every way an `assign`
 * can be written (a name, `{ type }`, inline, a function returning a partial context, an object
 * of property assigners and constants), transitions picked in document order with the first
 * enabled guard winning, a deeper state's transition shadowing its parent's, and eventless
 * (`always`) chains, guarded, targetless and reentering, each seeing the event that started the
 * macrostep. The machines' decisions behind L2, L3, L12, L13 and R5 run on this interpreter.
 */
import fc from 'fast-check'
import { and, assign, or, setup, type EventObject } from 'xstate'
import { describe, expect, it } from 'vitest'
import { agreeWithXState } from './lean-oracle.js'

type Ctx = { n: number; k: string; seen: string[] }
type Ev = { type: 'INC' } | { type: 'GO' } | { type: 'PICK'; by: number } | { type: 'RESET' }

const forms = setup({
  types: {} as { context: Ctx; events: Ev },
  guards: {
    even: ({ context }) => context.n % 2 === 0,
    small: ({ context }) => context.n < 4,
    big: ({ context }) => context.n >= 6,
    byTwo: ({ event }) => event.type === 'PICK' && event.by === 2,
  },
  actions: {
    inc: assign({ n: ({ context }) => context.n + 1 }),
    mark: assign(({ context, event }) => ({ seen: [...context.seen, `${event.type}@${context.n}`] })),
    label: assign({ k: 'labelled', n: ({ context }) => context.n * 2 }),
  },
}).createMachine({
  context: { n: 0, k: '', seen: [] },
  initial: 'a',
  on: {
    RESET: { target: '.a', actions: assign({ n: 0 }) },
    INC: { actions: 'inc' },
  },
  states: {
    a: {
      on: {
        GO: [
          { guard: null as never, target: 'b', actions: { type: 'mark' } },
        ],
        PICK: [
          { guard: and(['even', or(['big', { type: 'byTwo' }])]), target: 'c', actions: ['mark', 'label'] },
          { guard: or([and(['small', 'byTwo']), ({ context }) => context.n === 5]), actions: assign({ k: ({ event }) => `by${(event as { by: number }).by}` }) },
          { guard: { type: 'small' }, actions: [assign({ n: ({ context, event }) => context.n + (event as { by: number }).by }), 'mark'] },
        ],
      },
    },
    b: {
      // shadows the root's INC; its first enabled candidate wins
      on: { INC: [{ guard: 'big', target: 'a' }, { actions: ['inc', 'inc'] }] },
      always: [{ guard: ({ context }) => context.n === 4, target: 'a', actions: 'mark' }],
    },
    c: {
      entry: 'mark',
      always: [
        { guard: ({ context }) => context.n % 3 !== 0, target: 'c', reenter: true, actions: 'inc' },
        { guard: 'small', target: 'b' },
        { guard: ({ context }) => context.k === 'labelled', actions: assign({ k: 'settled' }) },
      ],
      on: { GO: { target: 'a', actions: 'mark' } },
    },
  },
})

const EVENTS: Ev[] = [{ type: 'INC' }, { type: 'GO' }, { type: 'RESET' }, { type: 'PICK', by: 1 }, { type: 'PICK', by: 2 }, { type: 'PICK', by: 3 }]
const probes = ['a', 'b', 'c']

describe('lean-actor guard and assign forms = XState', () => {
  it('a null guard is no guard; an object action by name (L2 L3: lean = XState)', () => {
    const r = agreeWithXState(forms, [{ type: 'GO' }], { probes })
    expect(r).toEqual({ value: 'b', context: { n: 0, k: '', seen: ['GO@0'] } })
  })

  it('and/or nested in each other, object and inline guards, first enabled candidate wins', () => {
    // n=0: even, byTwo → c (mark, label: n=0, k=labelled); c: n%3=0, small → b
    expect(agreeWithXState(forms, [{ type: 'PICK', by: 2 }], { probes }).context).toEqual({ n: 0, k: 'labelled', seen: ['PICK@0', 'PICK@0'] })
    // n=1: odd; or(and(small, byTwo)) → k=by2, stays in a
    expect(agreeWithXState(forms, [{ type: 'INC' }, { type: 'PICK', by: 2 }], { probes })).toEqual({ value: 'a', context: { n: 1, k: 'by2', seen: [] } })
    // n=5 via the inline guard
    expect(agreeWithXState(forms, [...Array(5).fill({ type: 'INC' }), { type: 'PICK', by: 1 }], { probes })).toEqual({ value: 'a', context: { n: 5, k: 'by1', seen: [] } })
    // n=1, by 3: only `small` → n += 3 then mark sees the new n
    expect(agreeWithXState(forms, [{ type: 'INC' }, { type: 'PICK', by: 3 }], { probes }).context).toEqual({ n: 4, k: '', seen: ['PICK@4'] })
  })

  it('eventless chains: reentering self loops, then a guarded exit or a targetless settle, seeing the macrostep event', () => {
    // n=6: even and big → c with n=12 (label), k=labelled; 12%3=0, not small, k labelled → k=settled
    const six = Array(6).fill({ type: 'INC' })
    expect(agreeWithXState(forms, [...six, { type: 'PICK', by: 1 }], { probes })).toEqual({ value: 'c', context: { n: 12, k: 'settled', seen: ['PICK@6', 'PICK@12'] } })
    // n=8 → c with n=16: re-enters c twice (16→17→18, entry mark each time), then settles
    const eight = Array(8).fill({ type: 'INC' })
    expect(agreeWithXState(forms, [...eight, { type: 'PICK', by: 1 }], { probes }).context).toEqual({ n: 18, k: 'settled', seen: ['PICK@8', 'PICK@16', 'PICK@17', 'PICK@18'] })
  })

  it('a deeper state shadows its parent; an eventless guard fires after a targetless transition', () => {
    // in b, INC adds 2 per event (b's INC, not the root's); at n=4 the always leaves to a, marking with the INC event
    expect(agreeWithXState(forms, [{ type: 'GO' }, { type: 'INC' }, { type: 'INC' }, { type: 'INC' }], { probes })).toEqual({ value: 'a', context: { n: 5, k: '', seen: ['GO@0', 'INC@4'] } })
    // from an odd n the always never fires; b's first INC candidate (big) leaves to a
    expect(agreeWithXState(forms, [{ type: 'INC' }, { type: 'GO' }, ...Array(4).fill({ type: 'INC' })], { probes })).toEqual({ value: 'a', context: { n: 7, k: '', seen: ['GO@1'] } })
  })

  it('random event sequences agree with XState after every event (L2 L3)', () => {
    fc.assert(fc.property(fc.array(fc.constantFrom(...EVENTS), { maxLength: 30 }), (events) => void agreeWithXState(forms, events as EventObject[], { probes })))
  })
})
