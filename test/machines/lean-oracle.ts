/**
 * The oracle of the lean interpreter's tests: XState's own actor. `agreeWithXState` starts the same
 * machine on both, sends the same events, and requires the same state value, context and
 * `matches` answers after the start and after every event (the lean interpreter's contract:
 * machines/lean-actor.ts, docs/decisions/lean-interpreter.md).
 */
import { createActor, type AnyStateMachine, type EventObject, type StateValue } from 'xstate'
import { expect } from 'vitest'
import { createLeanActor } from '../../machines/lean-actor.js'

export interface Agreement {
  /** XState's snapshot after the last event (to assert the run was not vacuous). */
  value: StateValue
  context: unknown
}

export function agreeWithXState<E extends EventObject>(machine: AnyStateMachine, events: readonly E[], options: { input?: unknown; probes?: readonly StateValue[] } = {}): Agreement {
  const x = createActor(machine, { input: options.input }).start()
  const lean = createLeanActor(machine, options.input)
  const compare = (after: string): void => {
    const xs = x.getSnapshot()
    const ls = lean.getSnapshot()
    expect(ls.value, `value after ${after}`).toEqual(xs.value)
    expect(ls.context, `context after ${after}`).toEqual(xs.context)
    for (const p of options.probes ?? []) expect(ls.matches(p), `matches(${JSON.stringify(p)}) after ${after}`).toBe(xs.matches(p as never))
  }
  compare('start')
  events.forEach((e, i) => {
    x.send(e as never)
    lean.send(e)
    compare(`event ${i} ${e.type}`)
  })
  const last = x.getSnapshot()
  x.stop()
  return { value: last.value, context: last.context }
}
