/**
 * Issue 27 item 3: `resumeAgent({ log, store })` continues the log INTO the store (the documented
 * way to continue a forked JSONL session with persistence): the store's session is created from
 * the log (header kept) and every later event goes there; `flush()` means durable in it. A store
 * session that already exists is used only when it holds the same log (a prefix of it: the rest
 * is appended); anything else is refused with a coded error and the store is left as it was.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import type { LogEvent } from '../../events/index.js'
import { TurnlogError } from '../../events/errors.js'
import { scriptedModel } from '../../models/index.js'
import { fork } from '../../replay/fork.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { memoryStore } from '../../stores/memory.js'
import type { LogStore } from '../../stores/types.js'
import { tempDir } from '../cli/helpers.js'
import { HEADER, jsonlBytes } from './replay-helpers.js'

async function stored(store: LogStore, id: string): Promise<LogEvent[]> {
  const r = await store.open(id, 'read')
  const out: LogEvent[] = []
  for await (const e of r.events()) out.push(e)
  await r.close()
  return out
}

/** A finished two-turn session, in memory. */
async function finishedLog(): Promise<readonly LogEvent[]> {
  let n = 0
  let t = 1_000
  const a = createAgent({ model: scriptedModel(() => ({ text: 'ok' })), system: 'sys', sessionId: 's1', ids: () => `m${++n}`, clock: () => (t += 5) })
  a.followup('one')
  a.followup('two')
  await a.whenIdle()
  const events = [...a.events]
  await a.dispose()
  return events
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (e) {
    if (TurnlogError.is(e)) return e.code
    throw e
  }
  return 'resolved'
}

const model = () => scriptedModel(() => ({ text: 'again' }))

describe('resumeAgent({ log, store }) continues the log into the store (issue 27 item 3)', () => {
  it('P5 R: a log resumed with a memory store: the session is created from the log, the followup is durable in it after flush()', async () => {
    const log = await finishedLog()
    const store = memoryStore()
    const agent = await resumeAgent({ log: { header: HEADER, events: log }, store, model: model(), system: 'sys' })
    expect(agent.sessionId).toBe('s1')
    agent.followup('three')
    await agent.whenIdle()
    await agent.flush()
    const inStore = await stored(store, 's1')
    expect(inStore).toEqual(agent.events)
    expect(inStore.length).toBeGreaterThan(log.length)
    expect(verify(inStore).ok).toBe(true)
    await agent.dispose()
  })

  it('P6 P5: a forked JSONL session continues into a jsonl store (header parent kept); a later resumeAgent({store, sessionId}) reads it all', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const log = await finishedLog()
      const f = fork({ header: HEADER, events: log }, 4, { sessionId: 'fork1', createdAt: 5 })
      const file = join(dir, 'fork1.forked.jsonl')
      writeFileSync(file, jsonlBytes(f.events, f.header))
      const store = jsonlStore(join(dir, 'store'))
      const agent = await resumeAgent({ log: file, store, model: model(), system: 'sys' })
      expect(agent.sessionId).toBe('fork1')
      agent.followup('on the fork')
      await agent.whenIdle()
      await agent.flush()
      const events = [...agent.events]
      await agent.dispose()
      const r = await store.open('fork1', 'read')
      expect(r.header).toMatchObject({ id: 'fork1', createdAt: 5, parent: f.header.parent, inheritedEventCount: f.header.inheritedEventCount })
      await r.close()
      expect(await stored(store, 'fork1')).toEqual(events)
      const again = await resumeAgent({ store, sessionId: 'fork1', model: model(), system: 'sys' })
      expect(again.events).toEqual(events)
      await again.dispose()
    } finally {
      cleanup()
    }
  })

  it('the same log already in the store (a prefix of it) is continued: the missing events are appended, nothing duplicated', async () => {
    const log = await finishedLog()
    const store = memoryStore()
    await store.create('s1')
    const w = await store.open('s1', 'write')
    await w.append(log.slice(0, 7), { expectedSeq: 0 })
    await w.close()
    const agent = await resumeAgent({ log: { header: HEADER, events: log }, store, model: model(), system: 'sys' })
    agent.followup('three')
    await agent.whenIdle()
    await agent.flush()
    expect(await stored(store, 's1')).toEqual(agent.events)
    await agent.dispose()
  })

  it('refused, store untouched: a store session holding other events (SESSION_EXISTS), more events than the log (SESSION_EXISTS), or owned by a writer (SESSION_OWNED)', async () => {
    const log = await finishedLog()
    const other = [...log.slice(0, 3)]
    const store = memoryStore()
    await store.create('s1')
    let w = await store.open('s1', 'write')
    // another log: same length prefix, different message id
    const altered = JSON.parse(JSON.stringify(log[0])) as LogEvent
    ;(altered.data as any).inserted[0].id = 'not-the-same'
    await w.append([altered, ...other.slice(1)], { expectedSeq: 0 })
    await w.close()
    expect(await codeOf(resumeAgent({ log: { header: HEADER, events: log }, store, model: model() }))).toBe('SESSION_EXISTS')
    expect(await stored(store, 's1')).toHaveLength(3)
    // the refusal released the lock
    w = await store.open('s1', 'write')
    await w.close()

    const longer = memoryStore()
    await longer.create('s1')
    w = await longer.open('s1', 'write')
    await w.append(log, { expectedSeq: 0 })
    await w.close()
    expect(await codeOf(resumeAgent({ log: { header: HEADER, events: log.slice(0, 5) }, store: longer, model: model() }))).toBe('SESSION_EXISTS')
    expect(await stored(longer, 's1')).toHaveLength(log.length)

    const owned = memoryStore()
    const holder = await (async () => {
      await owned.create('s1')
      return owned.open('s1', 'write')
    })()
    expect(await codeOf(resumeAgent({ log: { header: HEADER, events: log }, store: owned, model: model() }))).toBe('SESSION_OWNED')
    await holder.close()
  })
})
