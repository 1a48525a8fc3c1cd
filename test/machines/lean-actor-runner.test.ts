/**
 * The lean interpreter's runner contract (machines/lean-actor.ts): `runMachine` runs the lean
 * interpreter unless an `inspect` observer is given, and then XState's own actor, which the
 * observer sees (docs/decisions/lean-interpreter.md); a machine definition is
 * compiled once however many actors run it (the per-agent cost of benchmarks B2/B6), the actors
 * staying independent; and eventless transitions settle, or, when they never do, the send fails
 * with a clear error instead of spinning forever (a machine stuck in a loop must not hang the
 * agent: R7, a fault ends at most the current turn).
 */
import { assign, createMachine, setup, type AnyStateMachine } from 'xstate'
import { describe, expect, it } from 'vitest'
import { createLeanActor, runMachine } from '../../machines/lean-actor.js'
import { agreeWithXState } from './lean-oracle.js'

type Ctx = { n: number }
const counter = setup({ types: {} as { context: Ctx; input: { from: number }; events: { type: 'INC' } } }).createMachine({
  context: ({ input }) => ({ n: input.from }),
  initial: 'on',
  states: { on: { on: { INC: { actions: assign({ n: ({ context }) => context.n + 1 }) } } } },
})

describe('runMachine: the lean interpreter, or XState when inspected', () => {
  it('without inspect it is the lean interpreter: it refuses what only XState runs (L2 L3)', () => {
    const parallel = createMachine({ type: 'parallel', states: { p: {}, q: {} } })
    expect(() => runMachine(parallel, undefined)).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_MACHINE' }))
    // with an observer, XState's actor runs it, and the observer sees it start
    const seen: string[] = []
    const actor = runMachine(parallel, undefined, (e: { type: string }) => seen.push(e.type))
    expect(actor.getSnapshot().value).toEqual({ p: {}, q: {} })
    expect(seen).toContain('@xstate.actor')
    actor.stop()
  })

  it('both runners give the same value and context; the observer sees every event', () => {
    const seen: unknown[] = []
    const inspected = runMachine<Ctx, { type: 'INC' }>(counter, { from: 5 }, (e: { type: string; event?: { type: string } }) => {
      if (e.type === '@xstate.event') seen.push(e.event?.type)
    })
    const lean = runMachine<Ctx, { type: 'INC' }>(counter, { from: 5 })
    for (const r of [inspected, lean]) {
      r.send({ type: 'INC' })
      r.send({ type: 'INC' })
    }
    expect(lean.getSnapshot().context).toEqual({ n: 7 })
    expect(inspected.getSnapshot().context).toEqual({ n: 7 })
    expect(lean.getSnapshot().value).toEqual(inspected.getSnapshot().value)
    expect(seen.filter((t) => t === 'INC')).toHaveLength(2)
    inspected.stop()
  })
})

describe('createLeanActor: compiled once per definition, independent actors', () => {
  it('a second actor of the same definition does not compile it again (B2/B6)', () => {
    let rootReads = 0
    const watched = new Proxy(counter, {
      get(target, key, receiver) {
        if (key === 'root') rootReads++
        return Reflect.get(target, key, receiver)
      },
    }) as AnyStateMachine
    const one = createLeanActor<Ctx, { type: 'INC' }>(watched, { from: 0 })
    const reads = rootReads
    expect(reads).toBeGreaterThan(0)
    const two = createLeanActor<Ctx, { type: 'INC' }>(watched, { from: 10 })
    expect(rootReads).toBe(reads)
    one.send({ type: 'INC' })
    expect([one.getSnapshot().context, two.getSnapshot().context]).toEqual([{ n: 1 }, { n: 10 }])
  })
})

describe('eventless transitions settle, or fail clearly', () => {
  const inc = assign<Ctx, { type: string }, undefined, { type: string }, never>({ n: ({ context }) => context.n + 1 })

  it('a chain of 1000 eventless transitions settles, as in XState', () => {
    const onEvent = setup({ types: {} as { context: Ctx } }).createMachine({
      context: { n: 0 },
      initial: 'a',
      states: { a: { on: { GO: 'b' } }, b: { always: { guard: ({ context }) => context.n < 1000, actions: inc } } },
    })
    expect(agreeWithXState(onEvent, [{ type: 'GO' }], {})).toEqual({ value: 'b', context: { n: 1000 } })
    const atStart = setup({ types: {} as { context: Ctx } }).createMachine({
      context: { n: 0 },
      always: { guard: ({ context }) => context.n < 1000, actions: inc },
    })
    expect(agreeWithXState(atStart, [], {}).context).toEqual({ n: 1000 })
  })

  it('a chain that never settles throws, at the start and on an event, after about a thousand transitions (R7)', () => {
    // the guard stops a runaway interpreter itself, far past the limit, so the test cannot hang
    const spin = (when: 'start' | 'event') =>
      setup({ types: {} as { context: Ctx } }).createMachine({
        context: { n: 0 },
        initial: when === 'start' ? 'b' : 'a',
        states: {
          a: { on: { GO: 'b' } },
          b: {
            always: {
              guard: ({ context }) => {
                if (context.n > 5000) throw new Error('runaway')
                return true
              },
              actions: inc,
            },
          },
        },
      })
    expect(() => createLeanActor(spin('start'), undefined)).toThrow(new Error('lean-actor: eventless transitions did not settle'))
    const actor = createLeanActor(spin('event'), undefined)
    expect(() => actor.send({ type: 'GO' })).toThrow(new Error('lean-actor: eventless transitions did not settle'))
  })
})
