/**
 * Issue 24 item 7: after an event that no transition handles, XState still evaluates the eventless
 * (`always`) transitions of the active states, with that event; the lean interpreter must too.
 * A toy chart whose `always` guard reads the event ends in another state otherwise.
 */
import { assign, setup } from 'xstate'
import { describe, expect, it } from 'vitest'
import { createLeanActor } from '../../machines/lean-actor.js'
import { agreeWithXState } from './lean-oracle.js'

type Ev = { type: 'GO' } | { type: 'STAY' } | { type: 'TICK' }

const toy = setup({
  types: {} as { context: { seen: string[] }; events: Ev },
  guards: { isGo: ({ event }) => event.type === 'GO' },
}).createMachine({
  context: { seen: [] },
  initial: 'waiting',
  states: {
    waiting: {
      // no `on` for GO: only the eventless transition reacts to it
      on: { TICK: { actions: assign({ seen: ({ context }) => [...context.seen, 'tick'] }) } },
      always: { guard: 'isGo', target: 'gone', actions: assign({ seen: ({ context, event }) => [...context.seen, `always:${event.type}`] }) },
    },
    gone: {},
  },
})

describe('lean interpreter: eventless transitions after an unhandled event (issue 24 item 7)', () => {
  it('L2/L3: an unhandled GO still takes the `always` transition whose guard reads the event, as XState does', () => {
    const lean = createLeanActor(toy, undefined)
    lean.send({ type: 'GO' })
    expect(lean.getSnapshot().value).toBe('gone')
    expect(lean.getSnapshot().context).toEqual({ seen: ['always:GO'] })
    expect(lean.getSnapshot().matches('gone')).toBe(true)
  })

  it('L2/L3: agrees with XState on handled, unhandled and eventless-enabling events in any order', () => {
    for (const events of [[{ type: 'STAY' }, { type: 'GO' }], [{ type: 'TICK' }, { type: 'GO' }, { type: 'TICK' }], [{ type: 'GO' }, { type: 'GO' }]] as Ev[][]) {
      const r = agreeWithXState(toy, events, { probes: ['waiting', 'gone'] })
      expect(r.value).toBe('gone')
    }
  })
})
