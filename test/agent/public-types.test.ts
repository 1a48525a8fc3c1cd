/**
 * Issue 9 item 19: what a consumer trips on under `tsc --strict`. Type-level assertions
 * (`expectTypeOf`, checked by `npm run typecheck`, which compiles test/) plus their runtime
 * counterparts: `agent.events` narrows by `type` (docs/spec/api.md: `SessionEvent[]`), `transcript()` is
 * typed, `snapshot().turn.state` is the turn machine's state value, not a JSON string.
 */
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { TurnStateValue } from '../../index.js'
import type { EventDataMap, SessionEvent } from '../../events/index.js'
import type { TranscriptState } from '../../reducers/transcript.js'
import { makeAgent } from './contain-helpers.js'

describe('public types (item 19)', () => {
  it('agent.events is SessionEvent[]: e.type === "tool/result" narrows e.data; transcript() and snapshot().turn.state are typed', async () => {
    const { agent } = makeAgent([{ text: 'hi' }])
    expectTypeOf(agent.events).toEqualTypeOf<readonly SessionEvent[]>()
    expectTypeOf(agent.transcript()).toEqualTypeOf<TranscriptState>()
    expectTypeOf(agent.snapshot().turn.state).toEqualTypeOf<TurnStateValue>()
    for (const e of agent.events) {
      if (e.type === 'tool/result') expectTypeOf(e.data).toEqualTypeOf<EventDataMap['tool/result']>()
      if (e.type === 'turn/end') expectTypeOf(e.data.reason.kind).toBeString()
    }
    expect(agent.snapshot().turn.state).toBe('idle')
    agent.followup('x')
    expect(agent.snapshot().turn.state).toEqual({ running: 'proposing' })
    await agent.whenIdle()
    const ends = agent.events.flatMap((e) => (e.type === 'turn/end' ? [e.data.reason.kind] : []))
    expect(ends).toEqual(['completed'])
    expect(agent.transcript().items.map((i) => i.kind)).toContain('turn')
  })
})
