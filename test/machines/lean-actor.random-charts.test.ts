/**
 * Random statecharts of the lean interpreter's whole subset, run on both the interpreter and
 * XState's actor (oracle: test/machines/lean-oracle.ts): nested compound and atomic states up to
 * three levels, every state logging its entry and exit, transitions to any state (the root
 * included) with or without `reenter`, guarded or not (named guards, `and`/`or`), targetless ones,
 * and eventless transitions (bounded by a budget, so every chart settles; guards that read the
 * event too, so they are evaluated again after an event nothing handles). After every event the
 * value, the context (so the exact order of entry, exit and transition actions) and `matches` on
 * every state must agree. turnlog's own machines are a few points of this space; the agent's
 * lifecycle decisions (L2, L3, L12, L13, R5) rely on the interpreter being XState on all of it.
 */
import fc from 'fast-check'
import { and, assign, or, setup, type EventObject } from 'xstate'
import { describe, it } from 'vitest'
import { fcRuns } from '../fc-runs.js'
import { agreeWithXState } from './lean-oracle.js'

type Ctx = { n: number; budget: number; log: string[] }
type Shape = Shape[]

const shape = (depth: number): fc.Arbitrary<Shape> => (depth === 0 ? fc.constant([]) : fc.array(shape(depth - 1), { maxLength: 3 }))
// `isE2` reads the event: an eventless transition guarded by it sees the macrostep's event, also
// after an event no transition handled (issue 24 item 7)
const GUARDS = [null, 'even', 'odd', 'budget', 'andEvenBudget', 'orOddBudget', 'isE2'] as const
const EVENTS = ['E1', 'E2', 'E3'] as const

interface Def {
  event: (typeof EVENTS)[number]
  /** index into the chart's states (0 is the root), or null for a targetless transition */
  target: number | null
  reenter: boolean
  guard: (typeof GUARDS)[number]
  inc: boolean
}

const def = (states: number): fc.Arbitrary<Def> =>
  fc.record({
    event: fc.constantFrom(...EVENTS),
    target: fc.option(fc.nat(states - 1), { freq: 4 }),
    reenter: fc.boolean(),
    guard: fc.constantFrom(...GUARDS),
    inc: fc.boolean(),
  })

const logged = (name: string, what: 'in' | 'out') =>
  assign<Ctx, EventObject, undefined, EventObject, never>({ log: ({ context, event }) => [...context.log, `${what}:${name}:${event.type}`] })
const inc = assign<Ctx, EventObject, undefined, EventObject, never>({ n: ({ context }) => context.n + 1 })
const spend = assign<Ctx, EventObject, undefined, EventObject, never>({ budget: ({ context }) => context.budget - 1 })

const base = setup({
  types: {} as { context: Ctx; events: EventObject },
  guards: {
    even: ({ context }) => context.n % 2 === 0,
    odd: ({ context }) => context.n % 2 === 1,
    budget: ({ context }) => context.budget > 0,
    isE2: ({ event }) => event.type === 'E2',
  },
})

/** Builds the chart: state i's id is `s<i>` (the root is `s0`). */
function build(root: Shape, on: Def[][], always: (Def | null)[]): { machine: ReturnType<typeof base.createMachine>; ids: string[] } {
  const ids: string[] = []
  const transition = (d: Def, eventless: boolean) => ({
    ...(d.target === null ? {} : { target: `#${ids[d.target]}`, reenter: d.reenter }),
    // eventless transitions always spend the budget, so every chain ends
    ...(eventless ? { guard: and(['budget', ...(d.guard === null ? [] : [guardOf(d.guard)])]) } : d.guard === null ? {} : { guard: guardOf(d.guard) }),
    actions: [...(eventless ? [spend] : []), ...(d.inc ? [inc] : []), logged(`t${d.event}`, 'in')],
  })
  const node = (s: Shape): Record<string, unknown> => {
    const i = ids.length
    const id = `s${i}`
    ids.push(id)
    const children = s.map((c) => node(c))
    const transitions = (): Record<string, unknown> => {
      const byEvent: Record<string, unknown[]> = {}
      for (const d of on[i] ?? []) (byEvent[d.event] ??= []).push(transition(d, false))
      const a = always[i]
      return { on: byEvent, ...(a ? { always: transition(a, true) } : {}) }
    }
    return {
      id,
      entry: logged(id, 'in'),
      exit: logged(id, 'out'),
      ...(children.length ? { initial: 'c0', states: Object.fromEntries(children.map((c, k) => [`c${k}`, c])) } : {}),
      __transitions: transitions,
    }
  }
  const tree = node(root)
  // transitions are attached once every id is known (targets may point anywhere)
  const attach = (n: Record<string, unknown>): void => {
    const t = (n.__transitions as () => Record<string, unknown>)()
    delete n.__transitions
    Object.assign(n, t)
    for (const c of Object.values((n.states as Record<string, Record<string, unknown>> | undefined) ?? {})) attach(c)
  }
  attach(tree)
  const machine = base.createMachine({ ...(tree as object), context: { n: 0, budget: 6, log: [] } } as never)
  return { machine, ids }
}

function guardOf(g: Exclude<(typeof GUARDS)[number], null>): never {
  // the machine is built from a plain config, so the guard's exact XState type does not matter here
  if (g === 'andEvenBudget') return and(['even', { type: 'budget' }]) as never
  if (g === 'orOddBudget') return or(['odd', and(['budget', 'even'])]) as never
  return g as never
}

const countStates = (s: Shape): number => 1 + s.reduce((sum, c) => sum + countStates(c), 0)

const chart = fc
  .array(shape(2), { minLength: 1, maxLength: 3 })
  .chain((root) => {
    const states = countStates(root)
    return fc.record({
      root: fc.constant(root),
      on: fc.array(fc.array(def(states), { maxLength: 3 }), { minLength: states, maxLength: states }),
      always: fc.array(fc.option(def(states), { freq: 3 }), { minLength: states, maxLength: states }),
      events: fc.array(fc.constantFrom(...EVENTS), { maxLength: 15 }),
    })
  })

describe('lean interpreter = XState on random charts of its subset', () => {
  it('same value, context (entry/exit/action order) and matches after every event, handled or not (L2 L3 L12 L13 R5)', () => {
    fc.assert(
      fc.property(chart, ({ root, on, always, events }) => {
        const { machine, ids } = build(root, on, always)
        const probes = ids.slice(1).map((id) => machine.getStateNodeById(id).path.join('.'))
        agreeWithXState(machine, events.map((type) => ({ type })), { probes })
      }),
      { numRuns: fcRuns(300) },
    )
  })
})
