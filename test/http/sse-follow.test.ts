/**
 * The fan-out SSE follower (http/sse-follow.ts, B9): many followers of one tail, each written
 * synchronously on every growth with shared bytes, pausing on backpressure.
 * - H4 (property): for any growth pattern of the tail, any batch limit and any pattern of a sink
 *   refusing more (a slow socket) and resuming, every follower's `data` events hold every event
 *   from its offset exactly once, in seq order, and each `control` event's offset is the end of
 *   the data before it.
 * - The Fetch path (no node:http: the Response's ReadableStream) and the node path (written
 *   straight to the socket) serve the same bytes.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { sessionHandler } from '../../http/index.js'
import { followSse } from '../../http/sse-follow.js'
import { SessionTail } from '../../http/tail.js'
import { memoryStore } from '../../stores/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { fcRuns } from '../fc-runs.js'
import { allow, serve, until } from './helpers.js'

const ev = (seq: number): LogEvent => ({ v: 1, seq, time: 1_700_000_000_000 + seq, type: 'user/message', data: { message: { id: `m${seq}`, role: 'user', content: [{ type: 'text', text: `hello ${seq}` }], source: { kind: 'user' } } } } as unknown as LogEvent)

/** Parses SSE text into its events (`event` name and `data`). */
function parseSse(text: string): Array<{ event: string; data: string }> {
  return text.split('\n\n').filter((b) => b.trim() !== '').map((b) => ({
    event: /^event: (.*)$/m.exec(b)?.[1] ?? 'message',
    data: b.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'),
  }))
}

/** Checks one follower's output: the data events hold seqs from..to-1 once each, in order; each control names the end so far. */
function checkFollower(text: string, from: number, to: number): void {
  const seqs: number[] = []
  for (const e of parseSse(text)) {
    if (e.event === 'data') seqs.push(...(JSON.parse(e.data) as LogEvent[]).map((x) => x.seq))
    else if (e.event === 'control') expect((JSON.parse(e.data) as { streamNextOffset: string }).streamNextOffset).toBe(String(from + seqs.length).padStart(16, '0'))
  }
  expect(seqs).toEqual(Array.from({ length: to - from }, (_, i) => from + i))
}

describe('the fan-out SSE follower', () => {
  it.each([
    ['written as the event loop turns', {}, () => new Promise((r) => setImmediate(r))],
    // a timer due later than the tail's fan-out timer (≤ 2 ms) fires after it: Node runs timers in due order
    ['fanned out at most once per interval (many followers)', { fanoutThreshold: 1, fanoutIntervalMs: 2 }, () => new Promise((r) => setTimeout(r, 5))],
  ] as const)('H4 for any growth of the tail, batch limit, starting offsets and slow sinks: every follower gets every event from its offset once, in order (%s)', async (_name, tailOpts, turn) => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 12 }),
      fc.integer({ min: 1, max: 5 }),
      fc.array(fc.record({ from: fc.nat(6), refuse: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }) }), { minLength: 1, maxLength: 5 }),
      fc.array(fc.nat(4), { maxLength: 12 }),
      async (growth, maxBatch, followers, resumes) => {
        const all: LogEvent[] = []
        const tail = new SessionTail({ read: async () => {}, close: async () => {} }, tailOpts)
        const start = growth[0]!
        for (let i = 0; i < start; i++) all.push(ev(all.length))
        tail.feed(all, all.length)
        const outs = followers.map((f) => {
          const from = Math.min(f.from, start)
          const o = { from, text: '', writes: 0, ended: false, handle: null as null | { resume(): void } }
          const decoder = new TextDecoder()
          o.handle = followSse(tail, from, '7', { maxBatch, maxMs: 60_000 }, {
            write: (b) => { o.text += decoder.decode(b); return !f.refuse[o.writes++ % f.refuse.length] },
            end: () => { o.ended = true },
          })
          return o
        })
        for (const [k, n] of growth.slice(1).entries()) {
          // one append per feed, several feeds per event-loop turn (k odd) or one
          for (let i = 0; i < n; i++) {
            all.push(ev(all.length))
            tail.feed(all, all.length)
          }
          if (k % 2 === 0) await turn()
          // some slow followers drain now
          const r = resumes[k]
          if (r !== undefined && outs[r % outs.length]) outs[r % outs.length]!.handle!.resume()
        }
        await turn()
        // every socket drains in the end (a refusing sink may refuse again: resume until done)
        for (const o of outs) for (let i = 0; i < 10 * all.length + 10; i++) o.handle!.resume()
        for (const o of outs) {
          checkFollower(o.text, o.from, all.length)
          expect(o.ended).toBe(false)
        }
        await tail.close()
        await turn()
        for (const o of outs) expect(o.ended).toBe(true)
      },
    ), { numRuns: fcRuns(100) })
  })

  it('H4 the Fetch path (the Response body as a web stream, no node:http) and the node path serve the same events', async () => {
    const handler = sessionHandler({
      chatIdInBody: true,
      store: memoryStore(), authorize: allow,
      agent: () => ({ model: scriptedModel(() => ({ text: 'one two three four five six', chunkSize: 3 })) }),
    })
    const s = await serve(handler)
    try {
      const post = (id: string) => fetch(`${s.url}/chat`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'f1', trigger: 'submit-message', messages: [{ id, role: 'user', parts: [{ type: 'text', text: 'hi' }] }] }),
      }).then((r) => r.text())
      await post('a')
      const viaFetch = await handler(new Request('http://x/sessions/f1?offset=-1&live=sse'))
      const viaNode = await fetch(`${s.url}/sessions/f1?offset=-1&live=sse`)
      const read = async (res: Response, sink: { text: string }) => {
        const reader = res.body!.getReader()
        const d = new TextDecoder()
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          sink.text += d.decode(value)
        }
      }
      const a = { text: '' }
      const b = { text: '' }
      const ra = read(viaFetch, a)
      const rb = read(viaNode, b)
      await post('b') // a second turn while both follow
      const total = (await (await fetch(`${s.url}/sessions/f1`)).json() as unknown[]).length
      const count = (t: string) => parseSse(t).filter((e) => e.event === 'data').flatMap((e) => JSON.parse(e.data) as unknown[]).length
      await until(() => count(a.text) >= total && count(b.text) >= total)
      checkFollower(a.text, 0, total)
      checkFollower(b.text, 0, total)
      const events = (t: string) => parseSse(t).filter((e) => e.event === 'data').flatMap((e) => JSON.parse(e.data) as unknown[])
      expect(events(a.text)).toEqual(events(b.text))
      await handler.close() // ends both follows
      await ra
      await rb
    } finally {
      await s.close()
      await handler.close()
    }
  })
})
