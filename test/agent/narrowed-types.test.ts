/**
 * Issue 27 item 8: `agent.subscribe` listeners and `readLog().events` narrow by `type`, like
 * `agent.events`: after `e.type === 'tool/result'`, `e.data` is the tool result's data, not
 * `unknown`. Type-level assertions (`expectTypeOf`; `npm run typecheck` compiles test/, and
 * failed on this file before the change), plus their runtime counterparts; `isCore` narrows a
 * plain `LogEvent` (an extension-typed log's events).
 */
import { describe, expect, expectTypeOf, it } from 'vitest'
import { isCore, type EventDataMap, type LogEvent, type SessionEvent } from '../../events/index.js'
import { readLog } from '../../replay/read-log.js'
import { writeLog } from '../../replay/write-log.js'
import { tempDir } from '../cli/helpers.js'
import { makeAgent } from './contain-helpers.js'

describe('narrowed event types (issue 27 item 8)', () => {
  it('agent.subscribe hands the listener a SessionEvent: e.type === "turn/end" narrows e.data', async () => {
    const { agent } = makeAgent([{ text: 'hi' }])
    expectTypeOf(agent.subscribe).parameter(0).parameter(0).toEqualTypeOf<SessionEvent>()
    const reasons: string[] = []
    agent.subscribe((e) => {
      if (e.type === 'turn/end') {
        expectTypeOf(e.data).toEqualTypeOf<EventDataMap['turn/end']>()
        reasons.push(e.data.reason.kind)
      }
    })
    // a listener written for the wider LogEvent still fits
    agent.subscribe((e: LogEvent) => void e.seq)
    agent.followup('x')
    await agent.whenIdle()
    expect(reasons).toEqual(['completed'])
    await agent.dispose()
  })

  it('readLog().events is SessionEvent[]: e.type === "user/message" narrows e.data; isCore narrows a LogEvent', async () => {
    const { agent } = makeAgent([{ text: 'hi' }])
    agent.followup('hello')
    await agent.whenIdle()
    const { dir, cleanup } = tempDir()
    try {
      const file = `${dir}/s.jsonl`
      await writeLog(file, { header: { type: 'session', format: 1, id: agent.sessionId, createdAt: 1 }, events: agent.events })
      const r = await readLog(file)
      expectTypeOf(r.events).toEqualTypeOf<SessionEvent[]>()
      const texts = r.events.flatMap((e) => (e.type === 'user/message' ? e.data.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : []))
      expect(texts).toEqual(['hello'])
      const wide: readonly LogEvent[] = r.events
      const ends = wide.filter((e) => isCore(e, 'turn/end'))
      expectTypeOf(ends[0]!.data).toEqualTypeOf<EventDataMap['turn/end']>()
      expect(wide.flatMap((e) => (isCore(e, 'turn/end') ? [e.data.reason.kind] : []))).toEqual(['completed'])
    } finally {
      cleanup()
      await agent.dispose()
    }
  })
})
