/**
 * `GET/HEAD /sessions/:id` read by the stock `@durable-streams/client` (0.2.7): catch-up, a live
 * SSE tail while an agent writes, long-poll, resume from a saved offset; and the protocol's
 * headers and errors read with plain fetch. The session is written by an agent of its own on the
 * same JSONL store (the handler follows it by polling the store, as it follows another process).
 * H4: a follower gets every event once, in seq order, equal to the agent's log.
 */
import { stream } from '@durable-streams/client'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import type { Agent } from '../../agent/types.js'
import type { LogEvent } from '../../events/envelope.js'
import { formatOffset, sessionHandler, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { allow, Gate, serve, tempDir, until, type Served } from './helpers.js'

let tmp: ReturnType<typeof tempDir>
let store: LogStore
let handler: SessionHandler
let served: Served
const agents: Agent[] = []

beforeEach(async () => {
  tmp = tempDir()
  store = jsonlStore(tmp.dir)
  handler = sessionHandler({ store, authorize: allow, agent: () => ({ model: scriptedModel([]) }), pollMs: 10, maxBatch: 4 })
  served = await serve(handler)
})
afterEach(async () => {
  for (const a of agents.splice(0)) await a.dispose()
  await served.close()
  await handler.close()
  tmp.remove()
})

function writer(id: string, gate?: Gate): Agent {
  const model = scriptedModel([
    { text: 'It is sunny in Paris today.', chunkSize: 4 },
    { text: 'Second answer.', chunkSize: 4 },
  ], gate ? { beforeChunk: gate.wait } : {})
  const a = createAgent({ model, store, sessionId: id })
  agents.push(a)
  return a
}
const json = (events: readonly LogEvent[]): unknown => JSON.parse(JSON.stringify(events))

describe('Durable Streams reads with @durable-streams/client', () => {
  it('H4 catch-up: json() of a finished session is its whole log in seq order; the final offset is HEAD\'s tail', async () => {
    const a = writer('s1')
    a.followup('Weather in Paris?')
    await a.whenIdle()
    await a.flush()
    const res = await stream<LogEvent>({ url: `${served.url}/sessions/s1`, live: false })
    const items = await res.json()
    expect(items).toEqual(json(a.events))
    expect(res.offset).toBe(formatOffset(a.events.length))
    const head = await fetch(`${served.url}/sessions/s1`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('stream-next-offset')).toBe(formatOffset(a.events.length))
  })

  it('H4 live SSE tail while an agent writes: the follower sees the turn arrive in several batches, each event once', async () => {
    const gate = new Gate()
    const a = writer('s2', gate)
    a.followup('Weather in Paris?')
    await gate.held()
    await a.flush()
    const before = a.events.length
    const res = await stream<LogEvent>({ url: `${served.url}/sessions/s2`, live: 'sse' })
    const got: LogEvent[] = []
    const batches: Array<{ n: number; upToDate: boolean }> = []
    res.subscribeJson((b) => { got.push(...b.items); batches.push({ n: b.items.length, upToDate: b.upToDate }) })
    await until(() => got.length >= before && batches.some((b) => b.upToDate))
    expect(got.some((e) => e.type === 'turn/end')).toBe(false)
    gate.release(Infinity)
    await a.whenIdle()
    await a.flush()
    await until(() => got.length >= a.events.length)
    res.cancel()
    expect(got).toEqual(json(a.events))
    expect(got.map((e) => e.seq)).toEqual(a.events.map((_, i) => i))
    expect(batches.length).toBeGreaterThan(1)
  })

  it('H4 resume from a saved offset: a second reader from the first one\'s offset gets exactly the rest', async () => {
    const gate = new Gate()
    const a = writer('s3', gate)
    a.followup('Weather in Paris?')
    await gate.held()
    await a.flush()
    const first = await stream<LogEvent>({ url: `${served.url}/sessions/s3`, live: false })
    const seen = await first.json()
    const saved = first.offset
    expect(saved).toBe(formatOffset(seen.length))
    gate.release(Infinity)
    a.followup('And tomorrow?')
    await a.whenIdle()
    await a.flush()
    const rest = await stream<LogEvent>({ url: `${served.url}/sessions/s3`, offset: saved, live: false })
    const items = await rest.json()
    expect([...seen, ...items]).toEqual(json(a.events))
    expect(items[0]!.seq).toBe(seen.length)
  })

  it('H4 long-poll: a reader at the tail gets the next events when the agent writes them', async () => {
    const gate = new Gate()
    const a = writer('s4', gate)
    a.followup('Weather in Paris?')
    await gate.held()
    await a.flush()
    const res = await stream<LogEvent>({ url: `${served.url}/sessions/s4`, live: 'long-poll' })
    const got: LogEvent[] = []
    res.subscribeJson((b) => { got.push(...b.items) })
    await until(() => got.length >= a.events.length)
    gate.release(Infinity)
    await a.whenIdle()
    await a.flush()
    await until(() => got.length >= a.events.length)
    res.cancel()
    expect(got).toEqual(json(a.events))
  })
})

describe('Durable Streams protocol details and errors (plain fetch)', () => {
  async function finished(id: string): Promise<Agent> {
    const a = writer(id)
    a.followup('Weather in Paris?')
    await a.whenIdle()
    await a.flush()
    return a
  }

  it('catch-up pages by maxCatchUp: Stream-Up-To-Date only on the last page; ETag + If-None-Match gives 304; a long page is one JSON array', async () => {
    const a = await finished('p1')
    const h = sessionHandler({ store, authorize: allow, agent: () => ({ model: scriptedModel([]) }), maxCatchUp: 4 })
    const s = await serve(h)
    const whole = await fetch(`${served.url}/sessions/p1`)
    expect(await whole.json()).toEqual(json(a.events))
    expect(whole.headers.get('stream-up-to-date')).toBe('true')
    const r1 = await fetch(`${s.url}/sessions/p1?offset=-1`)
    expect(r1.status).toBe(200)
    expect(r1.headers.get('content-type')).toBe('application/json')
    expect(await r1.json()).toHaveLength(4)
    expect(r1.headers.get('stream-up-to-date')).toBeNull()
    expect(r1.headers.get('stream-next-offset')).toBe(formatOffset(4))
    const etag = r1.headers.get('etag')!
    expect(etag).toBeTruthy()
    const again = await fetch(`${s.url}/sessions/p1?offset=-1`, { headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
    await s.close()
    await h.close()
    const last = await fetch(`${served.url}/sessions/p1?offset=${formatOffset(a.events.length - 1)}`)
    expect(last.headers.get('stream-up-to-date')).toBe('true')
    const now = await fetch(`${served.url}/sessions/p1?offset=now`)
    expect(await now.json()).toEqual([])
    expect(now.headers.get('stream-next-offset')).toBe(formatOffset(a.events.length))
  })

  it('long-poll at the tail times out with 204, the tail offset, up-to-date and a cursor', async () => {
    const h = sessionHandler({ store, authorize: allow, agent: () => ({ model: scriptedModel([]) }), longPollMs: 50 })
    const s = await serve(h)
    try {
      const a = await finished('p2')
      const r = await fetch(`${s.url}/sessions/p2?offset=${formatOffset(a.events.length)}&live=long-poll`)
      expect(r.status).toBe(204)
      expect(r.headers.get('stream-next-offset')).toBe(formatOffset(a.events.length))
      expect(r.headers.get('stream-up-to-date')).toBe('true')
      expect(r.headers.get('stream-cursor')).toMatch(/^\d+$/)
      const r2 = await fetch(`${s.url}/sessions/p2?offset=${formatOffset(a.events.length)}&live=long-poll&cursor=${'9'.repeat(12)}`)
      expect(Number(r2.headers.get('stream-cursor'))).toBeGreaterThan(999999999999)
    } finally {
      await s.close()
      await h.close()
    }
  })

  it('errors are coded JSON: unknown session 404, bad offsets 400, writes 405, bad ids 400', async () => {
    const a = await finished('p3')
    const code = async (r: Response): Promise<[number, string]> => [r.status, ((await r.json()) as { error: { code: string } }).error.code]
    expect(await code(await fetch(`${served.url}/sessions/nope`))).toEqual([404, 'SESSION_NOT_FOUND'])
    expect(await code(await fetch(`${served.url}/sessions/p3?offset=12`))).toEqual([400, 'BAD_OFFSET'])
    expect(await code(await fetch(`${served.url}/sessions/p3?offset=abc`))).toEqual([400, 'BAD_OFFSET'])
    expect(await code(await fetch(`${served.url}/sessions/p3?offset=${formatOffset(a.events.length + 1)}`))).toEqual([400, 'BAD_OFFSET'])
    expect(await code(await fetch(`${served.url}/sessions/p3?live=forever`))).toEqual([400, 'BAD_REQUEST'])
    const post = await fetch(`${served.url}/sessions/p3`, { method: 'POST', body: '[1]' })
    expect(post.headers.get('allow')).toBe('GET, HEAD')
    expect(await code(post)).toEqual([405, 'METHOD_NOT_ALLOWED'])
    expect(await code(await fetch(`${served.url}/sessions/p3`, { method: 'PUT', body: '[]' }))).toEqual([405, 'METHOD_NOT_ALLOWED'])
    expect(await code(await fetch(`${served.url}/sessions/..%2Fetc`))).toEqual([400, 'INVALID_SESSION_ID'])
    expect(await code(await fetch(`${served.url}/sessions/.hidden`))).toEqual([400, 'INVALID_SESSION_ID'])
  })
})

describe('authorize and CORS', () => {
  it('sessionHandler refuses to start without authorize, or without exactly one of agent, workers and readOnly', () => {
    expect(() => sessionHandler({ store } as never)).toThrow(/authorize/)
    expect(() => sessionHandler({ store, authorize: allow } as never)).toThrow(/exactly one of agent/)
    expect(() => sessionHandler({ store, authorize: allow, readOnly: true, agent: () => ({ model: scriptedModel([]) }) })).toThrow(/exactly one of agent/)
    expect(() => sessionHandler({ store, authorize: allow, workers: true })).toThrow(/send\(\)/)
  })

  it('authorize is asked (req, id, read) before anything is revealed: false is 403 even for unknown sessions; a throw is 500, never an allow', async () => {
    const asked: Array<[string, string]> = []
    const h = sessionHandler({
      store, agent: () => ({ model: scriptedModel([]) }),
      authorize: (req, id, action) => {
        asked.push([id, action])
        if (id === 'boom') throw new Error('auth backend down')
        return req.headers.get('authorization') === 'Bearer yes'
      },
    })
    const s = await serve(h)
    try {
      const no = await fetch(`${s.url}/sessions/unknown`)
      expect(no.status).toBe(403)
      expect(((await no.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN')
      const yes = await fetch(`${s.url}/sessions/unknown`, { headers: { authorization: 'Bearer yes' } })
      expect(yes.status).toBe(404)
      const boom = await fetch(`${s.url}/sessions/boom`, { headers: { authorization: 'Bearer yes' } })
      expect(boom.status).toBe(500)
      expect(((await boom.json()) as { error: { code: string } }).error.code).toBe('AUTHORIZE_FAILED')
      expect(asked).toEqual([['unknown', 'read'], ['unknown', 'read'], ['boom', 'read']])
    } finally {
      await s.close()
      await h.close()
    }
  })

  it('CORS headers only for configured origins; preflights from others are refused', async () => {
    const h = sessionHandler({ store, authorize: allow, agent: () => ({ model: scriptedModel([]) }), cors: { origins: ['https://app.example'] } })
    const s = await serve(h)
    try {
      const ok = await fetch(`${s.url}/sessions/x`, { headers: { origin: 'https://app.example' } })
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example')
      expect(ok.headers.get('access-control-expose-headers')).toMatch(/Stream-Next-Offset/)
      const other = await fetch(`${s.url}/sessions/x`, { headers: { origin: 'https://evil.example' } })
      expect(other.headers.get('access-control-allow-origin')).toBeNull()
      const pre = await fetch(`${s.url}/chat`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } })
      expect(pre.status).toBe(403)
      const pre2 = await fetch(`${s.url}/chat`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } })
      expect(pre2.status).toBe(204)
      expect(pre2.headers.get('access-control-allow-methods')).toMatch(/POST/)
    } finally {
      await s.close()
      await h.close()
    }
    const noCors = await fetch(`${served.url}/sessions/x`, { headers: { origin: 'https://app.example' } })
    expect(noCors.headers.get('access-control-allow-origin')).toBeNull()
  })
})
