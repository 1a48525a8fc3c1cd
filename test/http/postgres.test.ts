/**
 * turnlog/http on PostgreSQL: two handler instances (each with its own pool, as two processes
 * would have) in front of one database, the sessions run by `runWorkers`. A chat sent through
 * instance A is followed live through instance B by the stock `@durable-streams/client`, resumed
 * through B by the AI SDK client, and both see exactly the stored log (H4, H5 across instances).
 */
import { stream } from '@durable-streams/client'
import { afterAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { sessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { postgresStore, runWorkers } from '../../workers/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll } from '../stores/postgres/helpers.js'
import { NodeChat } from './chat-client.js'
import { allow, Gate, serve, until } from './helpers.js'

afterAll(async () => { await dropAll() })

const ANSWER = 'Sunny in Paris, and warm.'
const ends = (log: readonly LogEvent[]) => log.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)
const texts = (m: { parts: Array<{ type: string }> } | undefined): string => (m?.parts ?? []).filter((p) => p.type === 'text').map((p) => (p as unknown as { text: string }).text).join('')

describe('turnlog/http with PostgreSQL: two handler instances, sessions run by workers', () => {
  it('H4 H5 a chat sent through A streams from A, is followed live through B (Durable Streams SSE) and resumed through B (AI SDK), all equal to the stored log', async () => {
    const url = await freshDb('http')
    const storeW = postgresStore({ connectionString: url })
    await storeW.migrate()
    const storeA = postgresStore({ connectionString: url })
    const storeB = postgresStore({ connectionString: url })
    const gate = new Gate()
    const workers = runWorkers({
      store: storeW, concurrency: 2, leaseMs: 5_000, pollMs: 50,
      agent: () => ({ model: scriptedModel([{ text: ANSWER, chunkSize: 5 }], { beforeChunk: gate.wait }) }),
    })
    const a = sessionHandler({ chatIdInBody: true, store: storeA, authorize: allow, workers: true, pollMs: 10 })
    const b = sessionHandler({ chatIdInBody: true, store: storeB, authorize: allow, workers: true, pollMs: 10 })
    const sa = await serve(a)
    const sb = await serve(b)
    // ended before the servers close, also when an assertion failed (closing a server under a
    // live follower cuts its socket: undici's "other side closed", an unhandled rejection)
    let follower: Awaited<ReturnType<typeof stream<LogEvent>>> | undefined
    try {
      const chat = new NodeChat({ id: 'pg-chat-1', api: `${sa.url}/chat` })
      const sending = chat.sendMessage({ text: 'Weather in Paris?' })
      gate.release(2)
      await gate.held()
      // B follows the log live while the worker is mid-answer
      await until(async () => (await fetch(`${sb.url}/sessions/pg-chat-1`, { method: 'HEAD' })).status === 200)
      follower = await stream<LogEvent>({ url: `${sb.url}/sessions/pg-chat-1`, live: 'sse' })
      const got: LogEvent[] = []
      follower.subscribeJson((batch) => { got.push(...batch.items) })
      // a second client resumes through B mid-answer
      const other = new NodeChat({ id: 'pg-chat-1', api: `${sb.url}/chat`, messages: (await (await fetch(`${sb.url}/chat/pg-chat-1/messages`)).json()) as never })
      const resuming = other.resumeStream()
      // the answer goes on only once B streams it to the resuming client: released earlier, the turn
      // could end before B takes the resume (204), leaving the client the partial text it loaded
      await until(() => other.status === 'streaming')
      gate.release(Infinity)
      await sending
      await resuming
      expect(texts(chat.messages[1])).toBe(ANSWER)
      expect(texts(other.messages[1])).toBe(ANSWER)
      expect(other.messages.map((m) => m.id)).toEqual(chat.messages.map((m) => m.id))
      await until(async () => (await readAll(storeW, 'pg-chat-1')).some((e) => e.type === 'turn/end'))
      const stored = await readAll(storeW, 'pg-chat-1')
      await until(() => got.length >= stored.length)
      follower.cancel()
      expect(got).toEqual(JSON.parse(JSON.stringify(stored)))
      // the history is the same from either instance
      const ha = await (await fetch(`${sa.url}/chat/pg-chat-1/messages`)).json()
      const hb = await (await fetch(`${sb.url}/chat/pg-chat-1/messages`)).json()
      expect(ha).toEqual(hb)
      // with workers a stop is recorded for the holder (202; postgres-stop.test.ts has the cancels):
      // the turn has ended, so it cancels nothing
      const stop = await fetch(`${sa.url}/chat/pg-chat-1/stop`, { method: 'POST' })
      expect(stop.status).toBe(202)
      await until(async () => (await storeW.pool.query("SELECT 1 FROM turnlog_cancels WHERE session_id = 'pg-chat-1' AND handled_at IS NOT NULL AND outcome IN ('idle', 'nothing-open')")).rowCount === 1)
      expect(ends(await readAll(storeW, 'pg-chat-1'))).toEqual(['completed'])
    } finally {
      follower?.cancel()
      gate.release(Infinity)
      await sa.close()
      await sb.close()
      await a.close()
      await b.close()
      await workers.stop()
      await storeA.close()
      await storeB.close()
      await storeW.close()
    }
  }, 60_000)

  it('H5 a resume through B before the worker has moved the prompt into the log (acknowledged, still in the store\'s inbox) waits for its turn and streams the whole answer', async () => {
    const url = await freshDb('http')
    const storeW = postgresStore({ connectionString: url })
    await storeW.migrate()
    const storeA = postgresStore({ connectionString: url })
    const storeB = postgresStore({ connectionString: url })
    const a = sessionHandler({ chatIdInBody: true, store: storeA, authorize: allow, workers: true, pollMs: 10 })
    const b = sessionHandler({ chatIdInBody: true, store: storeB, authorize: allow, workers: true, pollMs: 10 })
    // B's answer to the resume is known before any worker runs (the worker is held back until then)
    let resumeStatus!: (status: number) => void
    const resumeAnswered = new Promise<number>((r) => { resumeStatus = r })
    const sa = await serve(a)
    const sb = await serve(async (req) => {
      const res = await b(req)
      if (new URL(req.url).pathname.endsWith('/stream')) resumeStatus(res.status)
      return res
    })
    let workers: ReturnType<typeof runWorkers> | undefined
    try {
      const chat = new NodeChat({ id: 'pg-chat-2', api: `${sa.url}/chat` })
      const sending = chat.sendMessage({ text: 'Weather in Paris?' })
      // the prompt is acknowledged (durable in turnlog_inbox); no worker has moved it yet
      await until(async () => (await storeW.pool.query("SELECT 1 FROM turnlog_inbox WHERE session_id = 'pg-chat-2'")).rowCount === 1)
      const history = (await (await fetch(`${sb.url}/chat/pg-chat-2/messages`)).json()) as never[]
      expect(history).toEqual([])
      const other = new NodeChat({ id: 'pg-chat-2', api: `${sb.url}/chat`, messages: history })
      const resuming = other.resumeStream()
      expect(await resumeAnswered).toBe(200)
      workers = runWorkers({
        store: storeW, concurrency: 1, leaseMs: 5_000, pollMs: 50,
        agent: () => ({ model: scriptedModel([{ text: ANSWER, chunkSize: 5 }]) }),
      })
      await sending
      await resuming
      expect(texts(chat.messages[1])).toBe(ANSWER)
      expect(other.messages.map((m) => m.id)).toEqual([chat.messages[1]!.id])
      expect(texts(other.messages[0])).toBe(ANSWER)
      expect(ends(await readAll(storeW, 'pg-chat-2'))).toEqual(['completed'])
    } finally {
      await sa.close()
      await sb.close()
      await a.close()
      await b.close()
      await workers?.stop()
      await storeA.close()
      await storeB.close()
      await storeW.close()
    }
  }, 60_000)
})
