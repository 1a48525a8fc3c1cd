/**
 * The lean interpreter (machines/lean-actor.ts) runs only the statechart subset turnlog's machines
 * use, and its contract is "anything outside the subset is refused when the machine is compiled
 * (`UNSUPPORTED_MACHINE`), never mis-run": each feature outside the subset is refused with that
 * code and a message naming it, and the forms inside the subset (named, object-form, `and`/`or`
 * guards; named and inline `assign`) run exactly as XState's actor runs them. Issue 15 part 3:
 * lean-actor.ts's refusal branches had no test (its property test only feeds turnlog's own machines).
 */
import { and, assign, createActor, createMachine, not, or, setup, type AnyStateMachine } from 'xstate'
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

const base = setup({ types: {} as { context: { n: number }; events: { type: 'GO' } | { type: 'BACK' } } })

describe('lean-actor refuses what it cannot run (UNSUPPORTED_MACHINE, never mis-run)', () => {
  it('parallel, history and final states', () => {
    expect(refusal(createMachine({ type: 'parallel', states: { a: {}, b: {} } }))).toEqual({ code: 'UNSUPPORTED_MACHINE', message: expect.stringMatching(/^lean-actor: parallel state /) })
    expect(refusal(createMachine({ initial: 'a', states: { a: {}, h: { type: 'history' } } }))).toEqual({ code: 'UNSUPPORTED_MACHINE', message: expect.stringMatching(/^lean-actor: history state .*h/) })
    expect(refusal(createMachine({ initial: 'a', states: { a: {}, done: { type: 'final' } } }))).toEqual({ code: 'UNSUPPORTED_MACHINE', message: expect.stringMatching(/^lean-actor: final state .*done/) })
  })

  it('invoke and delayed transitions', () => {
    expect(refusal(createMachine({ initial: 'a', states: { a: { after: { 10: 'b' } }, b: {} } })).message).toMatch(/^lean-actor: invoke\/after in .*a/)
  })

  it('wildcard event descriptors', () => {
    expect(refusal(createMachine({ initial: 'a', states: { a: { on: { '*': 'b' } }, b: {} } })).message).toBe('lean-actor: event descriptor *')
  })

  it('guards: an unknown name, a combinator other than and/or, a parameterised guard', () => {
    const unknownGuard = createMachine({ initial: 'a', states: { a: { on: { GO: { target: 'b', guard: 'nope' } } }, b: {} } })
    expect(refusal(unknownGuard)).toEqual({ code: 'UNSUPPORTED_MACHINE', message: 'lean-actor: unknown guard nope' })
    const negated = base.extend({ guards: { ok: () => true } }).createMachine({ context: { n: 0 }, initial: 'a', states: { a: { on: { GO: { target: 'b', guard: not('ok') } } }, b: {} } })
    expect(refusal(negated).message).toMatch(/^lean-actor: a (guard combinator other than and\/or|built-in guard other than and\/or)$/)
    const withParams = base.extend({ guards: { ok: () => true } }).createMachine({ context: { n: 0 }, initial: 'a', states: { a: { on: { GO: { target: 'b', guard: { type: 'ok', params: { x: 1 } } } } }, b: {} } })
    expect(refusal(withParams)).toEqual({ code: 'UNSUPPORTED_MACHINE', message: 'lean-actor: a parameterised guard' })
  })

  it('actions other than assign', () => {
    const logs = base.extend({ actions: { say: () => {} } }).createMachine({ context: { n: 0 }, initial: 'a', states: { a: { on: { GO: { target: 'b', actions: 'say' } } }, b: {} } })
    expect(refusal(logs)).toEqual({ code: 'UNSUPPORTED_MACHINE', message: 'lean-actor: only assign actions are supported (say)' })
  })
})

describe('lean-actor runs the supported forms as XState does', () => {
  it('named, object-form, and/or guards; named and inline assign; targetless transitions', () => {
    const m = base
      .extend({
        guards: { small: ({ context }) => context.n < 2, even: ({ context }) => context.n % 2 === 0 },
        actions: { inc: assign({ n: ({ context }) => context.n + 1 }) },
      })
      .createMachine({
        context: { n: 0 },
        initial: 'a',
        states: {
          a: {
            on: {
              GO: [
                { target: 'b', guard: and(['small', { type: 'even' }]), actions: 'inc' },
                { guard: or(['small', 'even']), actions: assign({ n: ({ context }) => context.n + 10 }) },
              ],
            },
          },
          b: { on: { BACK: { target: 'a', actions: { type: 'inc' } } } },
        },
      })
    const seq = ['GO', 'BACK', 'GO', 'GO', 'BACK', 'GO'] as const
    const x = createActor(m).start()
    const lean = createLeanActor<{ n: number }, { type: 'GO' } | { type: 'BACK' }>(m, undefined)
    for (const type of seq) {
      x.send({ type })
      lean.send({ type })
      expect([lean.getSnapshot().value, lean.getSnapshot().context]).toEqual([x.getSnapshot().value, x.getSnapshot().context])
    }
    expect(x.getSnapshot().context.n).toBeGreaterThan(2)
  })
})
