/**
 * The lean interpreter's refusals, message by message (machines/lean-actor.ts: "anything outside
 * the subset is refused when the machine is compiled (`UNSUPPORTED_MACHINE`), never mis-run").
 * Each test names one shape outside the subset and asserts the exact error, so a refusal that
 * disappears, or one that turns into a TypeError from the compiler's own code, fails here. Some of
 * these shapes XState itself runs (a `{ type: 5 }` action, a partial wildcard, two targets): the
 * interpreter must refuse them rather than guess. Covers the machines' contract behind L2, L3 and
 * R5 (the agent runs its machines on this interpreter).
 */
import { assign, createActor, createMachine, not, setup, stateIn, type AnyStateMachine } from 'xstate'
import { describe, expect, it } from 'vitest'
import { createLeanActor } from '../../machines/lean-actor.js'

function refusal(machine: AnyStateMachine): { code: unknown; message: string } {
  try {
    createLeanActor(machine, undefined)
  } catch (e) {
    return { code: (e as { code?: unknown }).code, message: (e as Error).message }
  }
  throw new Error('not refused')
}
const refused = (message: string) => ({ code: 'UNSUPPORTED_MACHINE', message })

type Ctx = { n: number }
const base = setup({
  types: {} as { context: Ctx; events: { type: 'GO' } },
  guards: { ok: () => true },
  actions: { inc: assign({ n: ({ context }) => context.n + 1 }) },
})

describe('lean-actor refusals, exact messages (UNSUPPORTED_MACHINE)', () => {
  it('a built-in guard that is not a combinator (stateIn) (L2 L3: never mis-run)', () => {
    const m = base.createMachine({ context: { n: 0 }, initial: 'a', states: { a: { on: { GO: { target: 'b', guard: stateIn('#x.a') } } }, b: {} } })
    expect(refusal(m)).toEqual(refused('lean-actor: a built-in guard other than and/or'))
  })

  it('not(...): a combinator other than and/or', () => {
    const m = base.createMachine({ context: { n: 0 }, initial: 'a', states: { a: { on: { GO: { target: 'b', guard: not('ok') } } }, b: {} } })
    expect(refusal(m)).toEqual(refused('lean-actor: a guard combinator other than and/or'))
  })

  it('a guard object without a string type (XState fails on it only when the event comes)', () => {
    const m = base.createMachine({ context: { n: 0 }, initial: 'a', states: { a: { on: { GO: { target: 'b', guard: {} as never } } }, b: {} } })
    expect(refusal(m)).toEqual(refused('lean-actor: a parameterised guard'))
    const typed = base.createMachine({ context: { n: 0 }, initial: 'a', states: { a: { on: { GO: { target: 'b', guard: { type: 7 } as never } } }, b: {} } })
    expect(refusal(typed)).toEqual(refused('lean-actor: a parameterised guard'))
  })

  it('actions: null, an object with a non-string type (which XState would run), a parameterised action, a plain function', () => {
    const nul = base.createMachine({ context: { n: 0 }, initial: 'a', states: { a: { entry: null as never } } })
    expect(refusal(nul)).toEqual(refused('lean-actor: only assign actions are supported (object)'))
    const numbered = setup({ types: {} as { context: Ctx }, actions: { 5: assign({ n: 5 }) } }).createMachine({ context: { n: 0 }, initial: 'a', states: { a: { entry: { type: 5 } as never } } })
    expect(createActor(numbered).start().getSnapshot().context).toEqual({ n: 5 })
    expect(refusal(numbered)).toEqual(refused('lean-actor: only assign actions are supported (object)'))
    const withParams = base.createMachine({ context: { n: 0 }, initial: 'a', states: { a: { entry: { type: 'inc', params: { by: 2 } } } } })
    expect(refusal(withParams)).toEqual(refused('lean-actor: only assign actions are supported (object)'))
    const plain = base.createMachine({ context: { n: 0 }, initial: 'a', states: { a: { entry: () => {} } } })
    expect(refusal(plain)).toEqual(refused('lean-actor: only assign actions are supported (function)'))
    const named = base.extend({ actions: { say: () => {} } }).createMachine({ context: { n: 0 }, initial: 'a', states: { a: { exit: 'say' } } })
    expect(refusal(named)).toEqual(refused('lean-actor: only assign actions are supported (say)'))
  })

  it('a transition with two targets (XState accepts the definition)', () => {
    const m = createMachine({ id: 't', initial: 'a', states: { a: { on: { GO: { target: ['b', 'c'] } } }, b: {}, c: {} } })
    expect(refusal(m)).toEqual(refused('lean-actor: multiple targets in t.a'))
  })

  it('event descriptors: a partial wildcard, and XState-internal events (onDone)', () => {
    const partial = createMachine({ initial: 'a', states: { a: { on: { 'GO.*': 'b' } }, b: {} } })
    expect(refusal(partial)).toEqual(refused('lean-actor: event descriptor GO.*'))
    const done = createMachine({ id: 'd', initial: 'a', states: { a: { initial: 'x', states: { x: {} }, onDone: 'b' }, b: {} } })
    expect(refusal(done)).toEqual(refused('lean-actor: event descriptor xstate.done.state.d.a'))
  })

  it('a normalised compound state whose initial is not exactly one own child (XState 5.33 never builds one; the check guards its internals)', () => {
    // XState resolves `initial` to one direct child; these patch the normalised node the way a
    // changed XState could shape it, and the interpreter must refuse rather than crash or guess.
    const shaped = (target: (a: { states: Record<string, unknown> }) => unknown[]): AnyStateMachine => {
      const m = createMachine({ id: 'i', initial: 'a', states: { a: { initial: 'x', states: { x: { initial: 'deep', states: { deep: {} } }, y: {} } } } })
      const a = (m.root as unknown as { states: Record<string, { states: Record<string, unknown> }> }).states.a!
      Object.defineProperty(a, 'initial', { value: { target: target(a) } })
      return m
    }
    expect(refusal(shaped(() => []))).toEqual(refused('lean-actor: initial of i.a'))
    expect(refusal(shaped((a) => [a.states.x, a.states.y]))).toEqual(refused('lean-actor: initial of i.a'))
    expect(refusal(shaped((a) => [(a.states.x as { states: Record<string, unknown> }).states.deep]))).toEqual(refused('lean-actor: initial of i.a'))
    // the unpatched machine runs
    expect(createLeanActor(shaped((a) => [a.states.x]), undefined).getSnapshot().value).toEqual({ a: { x: 'deep' } })
  })
})
