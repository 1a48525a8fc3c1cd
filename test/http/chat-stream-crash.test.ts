/**
 * `GET /chat/:id/stream` on a turn a crash cut (docs/spec/lifecycle.md §8): the stream serves the open turn and
 * ends when the log says the turn was interrupted (repair's `turn/end {interrupted}`), with a
 * `finish`, instead of waiting forever.
 */
import { appendFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { sessionHandler, type SessionHandler } from '../../http/index.js'
import type { ModelAdapter } from '../../models/index.js'
import { openLogInStore } from '../../replay/log-into-store.js'
import { repairSession } from '../../replay/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { makeAgent } from '../agent/contain-helpers.js'
import { allow, serve, tempDir, type Served } from './helpers.js'

let tmp: ReturnType<typeof tempDir>
let store: LogStore
let handler: SessionHandler
let served: Served

beforeEach(async () => {
  tmp = tempDir()
  store = jsonlStore(tmp.dir)
  handler = sessionHandler({ chatIdInBody: true, store, authorize: allow, readOnly: true, pollMs: 10 })
  served = await serve(handler)
})
afterEach(async () => {
  await served.close()
  await handler.close()
  tmp.remove()
})

/** The log of a process that died mid-answer: its turn and step open, some text streamed. */
async function crashCutLog(): Promise<LogEvent[]> {
  const hang: ModelAdapter = {
    async *stream(_r, signal) {
      yield { type: 'block-start', index: 0, blockType: 'text' }
      yield { type: 'text-delta', index: 0, text: 'The weather in Par' }
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))
    },
  }
  const { agent } = makeAgent(null, { model: hang })
  agent.followup('Weather in Paris?')
  while (!agent.events.some((e) => e.type === 'assistant/chunk' && (e.data as { chunk: { type: string } }).chunk.type === 'text-delta')) {
    await new Promise((r) => setImmediate(r))
  }
  const cut = agent.events.slice() as LogEvent[]
  agent.cancel()
  await agent.whenIdle()
  return cut
}

describe('GET /chat/:id/stream on a turn a crash cut', () => {
  it('the stream serves the open turn and ends (finish) once repair logs the turn interrupted', async () => {
    const events = await crashCutLog()
    const w = await openLogInStore(store, 'c1', { header: { type: 'session', format: 1, id: 'c1', createdAt: 0 }, events })
    await w.close()
    const res = await fetch(`${served.url}/chat/c1/stream`)
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    while (!text.includes('The weather in Par')) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value)
    }
    expect(text).toContain('The weather in Par')
    const r = await repairSession(jsonlStore(tmp.dir), 'c1')
    expect(r.closers.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'interrupted' } } })
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value)
    }
    expect(text).toContain('"type":"finish"')
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
  })
})

describe('GET /chat/:id/stream on a turn a crash cut mid-write (a torn last line)', () => {
  it('the stream serves the open turn (the torn tail is not a corrupt log) and ends once repair logs the turn interrupted', async () => {
    const events = await crashCutLog()
    const w = await openLogInStore(store, 'c3', { header: { type: 'session', format: 1, id: 'c3', createdAt: 0 }, events })
    await w.close()
    appendFileSync(join(tmp.dir, 'c3.jsonl'), '{"seq":' + events.length + ',"time":1,"type":"assistant/ch')
    const res = await fetch(`${served.url}/chat/c3/stream`)
    expect(res.status).toBe(200)
    const reading = res.text()
    const r = await repairSession(jsonlStore(tmp.dir), 'c3')
    expect(r.quarantined).not.toBeNull()
    const text = await reading
    expect(text).toContain('The weather in Par')
    expect(text).toContain('"type":"finish"')
  })
})

describe('GET /chat/:id/stream on a turn a crash cut, served by a handler that runs the sessions', () => {
  it('the next message resumes the session (repair logs the cut turn interrupted): the waiting stream ends with a finish', async () => {
    const { scriptedModel } = await import('../../models/scripted.js')
    const runs = sessionHandler({ chatIdInBody: true, store, authorize: allow, pollMs: 10, agent: () => ({ model: scriptedModel([{ text: 'Sunny.' }, { text: 'Sunny.' }]) }) })
    const s = await serve(runs)
    try {
      const events = await crashCutLog()
      const w = await openLogInStore(store, 'c2', { header: { type: 'session', format: 1, id: 'c2', createdAt: 0 }, events })
      await w.close()
      const res = await fetch(`${s.url}/chat/c2/stream`)
      expect(res.status).toBe(200)
      const reading = res.text()
      const body = JSON.stringify({ id: 'c2', trigger: 'submit-message', messages: [{ id: 'u-2', role: 'user', parts: [{ type: 'text', text: 'And tomorrow?' }] }] })
      const post = await fetch(`${s.url}/chat`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
      await post.text()
      const text = await reading
      expect(text).toContain('"type":"finish"')
    } finally {
      await s.close()
      await runs.close()
    }
  })
})
