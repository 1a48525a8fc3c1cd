/**
 * Issue 38 items 8 and 9: the Durable Streams read side's headers and parameters (nosniff on every
 * `/sessions/:id` response, `Cross-Origin-Resource-Policy` on GET, `Cache-Control: no-cache` on
 * SSE, `live` without `offset` and a repeated `offset` are 400), and `Last-Event-ID` on
 * `GET /chat/:id/stream` (a reconnect resumes after the frame it names).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import { formatOffset, sessionHandler, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { allow, Gate, serve, tempDir, until, type Served } from './helpers.js'

let tmp: ReturnType<typeof tempDir>
let store: LogStore
let handler: SessionHandler
let served: Served
let gate: Gate

beforeEach(async () => {
  tmp = tempDir()
  store = jsonlStore(tmp.dir)
  gate = new Gate()
  handler = sessionHandler({ chatIdInBody: true, store, authorize: allow, pollMs: 10, sseMaxMs: 2_000, agent: () => ({ model: scriptedModel([{ text: 'The weather in Paris is sunny.', chunkSize: 5 }], { beforeChunk: gate.wait }) }) })
  served = await serve(handler)
})
afterEach(async () => {
  gate.release(Infinity)
  await served.close()
  await handler.close()
  tmp.remove()
})

async function finished(id: string): Promise<number> {
  const a = createAgent({ model: scriptedModel([{ text: 'Sunny.' }]), store, sessionId: id })
  a.followup('Weather?')
  await a.whenIdle()
  await a.dispose()
  const r = await store.open(id, 'read')
  const n = r.length
  await r.close()
  return n
}

const code = async (r: Response): Promise<[number, string]> => [r.status, ((await r.json()) as { error: { code: string } }).error.code]

describe('Durable Streams headers and parameters (issue 38 item 9)', () => {
  it('X-Content-Type-Options: nosniff on every /sessions/:id response (catch-up, HEAD, long-poll, SSE, errors); CORP on GET', async () => {
    const n = await finished('h1')
    const urls = [`/sessions/h1`, `/sessions/h1?offset=-1`, `/sessions/h1?offset=${formatOffset(n - 1)}&live=long-poll`, `/sessions/nope`, `/sessions/h1?offset=zz`]
    for (const u of urls) {
      const r = await fetch(served.url + u)
      expect(r.headers.get('x-content-type-options'), u).toBe('nosniff')
      if (r.status === 200) expect(['cross-origin', 'same-origin', 'same-site'], u).toContain(r.headers.get('cross-origin-resource-policy'))
      await r.body?.cancel()
    }
    const head = await fetch(`${served.url}/sessions/h1`, { method: 'HEAD' })
    expect(head.headers.get('x-content-type-options')).toBe('nosniff')
    const post = await fetch(`${served.url}/sessions/h1`, { method: 'POST', body: 'x' })
    expect(post.status).toBe(405)
    expect(post.headers.get('x-content-type-options')).toBe('nosniff')
    const ac = new AbortController()
    const sse = await fetch(`${served.url}/sessions/h1?offset=-1&live=sse`, { signal: ac.signal })
    expect(sse.status).toBe(200)
    expect(sse.headers.get('x-content-type-options')).toBe('nosniff')
    expect(sse.headers.get('cross-origin-resource-policy')).not.toBeNull()
    // the protocol's SHOULD for SSE: no-cache (a stored copy is revalidated), not no-store
    expect(sse.headers.get('cache-control')).toBe('no-cache')
    ac.abort()
  })

  it('live=sse or live=long-poll without offset is 400; a repeated offset is 400 whatever the order', async () => {
    await finished('h2')
    expect(await code(await fetch(`${served.url}/sessions/h2?live=sse`))).toEqual([400, 'BAD_OFFSET'])
    expect(await code(await fetch(`${served.url}/sessions/h2?live=long-poll`))).toEqual([400, 'BAD_OFFSET'])
    expect(await code(await fetch(`${served.url}/sessions/h2?offset=-1&offset=${formatOffset(1)}`))).toEqual([400, 'BAD_OFFSET'])
    expect(await code(await fetch(`${served.url}/sessions/h2?offset=${formatOffset(1)}&offset=-1`))).toEqual([400, 'BAD_OFFSET'])
    expect(await code(await fetch(`${served.url}/sessions/h2?offset=-1&live=sse&live=long-poll`))).toEqual([400, 'BAD_REQUEST'])
  })
})

describe('GET /chat/:id/stream honours Last-Event-ID (issue 38 item 8)', () => {
  const frames = (text: string): Array<{ id: number; data: string }> =>
    text.split('\n\n').filter((f) => f.includes('id: ')).map((f) => ({ id: Number(/id: (\d+)/.exec(f)![1]), data: /data: (.*)/.exec(f)![1]! }))

  it('a reconnect with Last-Event-ID: N gets exactly the frames after N (also once the turn has ended), then [DONE]', async () => {
    const post = fetch(`${served.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'le', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Weather?' }] }] }) })
    gate.release(3)
    await gate.held()
    const first = await fetch(`${served.url}/chat/le/stream`)
    expect(first.status).toBe(200)
    const reader = first.body!.getReader()
    let text = ''
    await until(async () => { text += new TextDecoder().decode((await reader.read()).value ?? new Uint8Array()); return frames(text).length >= 5 })
    await reader.cancel()
    const seen = frames(text)
    const n = seen[seen.length - 1]!.id
    // complete the frames of seq n that were sent (the client's view ends after n)
    const whole = frames(await (await post.then(async (r) => { gate.release(Infinity); return r })).text())
    const before = whole.filter((f) => f.id <= n)
    gate.release(Infinity)
    const resumed = await fetch(`${served.url}/chat/le/stream`, { headers: { 'last-event-id': String(n) } })
    expect(resumed.status).toBe(200)
    const body = await resumed.text()
    const after = frames(body)
    expect(after.length).toBeGreaterThan(0)
    expect(after.every((f) => f.id > n)).toBe(true)
    expect([...before, ...after]).toEqual(whole)
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true)
    // a Last-Event-ID this log never gave is a 400, not a silent replay from the start
    expect(await code(await fetch(`${served.url}/chat/le/stream`, { headers: { 'last-event-id': '99999' } }))).toEqual([400, 'BAD_LAST_EVENT_ID'])
    expect(await code(await fetch(`${served.url}/chat/le/stream`, { headers: { 'last-event-id': 'x' } }))).toEqual([400, 'BAD_LAST_EVENT_ID'])
  })
})
