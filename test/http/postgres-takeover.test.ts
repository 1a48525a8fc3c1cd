/**
 * A worker process SIGKILLed mid-turn while clients follow the session through turnlog/http
 * (issue 22 "a worker killed mid-turn while a client follows"): another worker process takes the
 * session over (lease expiry, repair, §8 resume), and
 * - the stock `@durable-streams/client` following through a handler instance sees every event
 *   exactly once, in seq order, equal to the stored log, through the answer's completion;
 * - a stop recorded while the dead worker still holds the lease is carried out by the next holder
 *   (it cancels the resumed turn, which continues the one the stop was asked of).
 * The worker's model chunks are released through stdin (test/http/children/worker.mjs), so the
 * kill lands at an exact place mid-answer.
 */
import { stream } from '@durable-streams/client'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { sessionHandler, type SessionHandler } from '../../http/index.js'
import { postgresStore, type PostgresStore } from '../../stores/postgres/index.js'
import { childLib, ROOT } from '../stores/child-lib.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { LineChild, readAll } from '../stores/postgres/helpers.js'
import { allow, serve, until, type Served } from './helpers.js'

const WORKER = fileURLToPath(new URL('./children/worker.mjs', import.meta.url))
const ANSWER = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ') + '.'
const LEASE = 1500
const ends = (log: readonly LogEvent[]) => log.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string; cause?: { kind: string } } }).reason)
const answerText = (log: readonly LogEvent[]): string => {
  const last = [...log].reverse().find((e) => e.type === 'assistant/message')
  const content = (last?.data as { message?: { content?: Array<{ type: string; text?: string }> } } | undefined)?.message?.content ?? []
  return content.filter((b) => b.type === 'text').map((b) => b.text).join('')
}

let lib = ''
let url = ''
const children: LineChild[] = []
const stores: PostgresStore[] = []
let handler: SessionHandler
let served: Served
let storeR: PostgresStore

function worker(id: string, mode: 'hold' | 'free'): LineChild {
  const c = new LineChild(spawn, WORKER, [lib, url, id, String(LEASE), mode], ROOT)
  children.push(c)
  return c
}
async function ready(w: LineChild): Promise<void> {
  expect(await w.waitFor((l) => l === 'READY', 0, 60_000), w.stderr).toBe('READY')
}
/** Starts a worker, lets 3 chunks of session `sid`'s answer through and SIGKILLs it while it waits at the 4th. */
async function killMidAnswer(sid: string): Promise<void> {
  const w = worker(`w-${sid}-1`, 'hold')
  await ready(w)
  await storeR.send(sid, { id: `${sid}-q`, content: [{ type: 'text', text: 'Weather in Paris?' }] })
  w.proc.stdin.write('RELEASE 3\n')
  expect(await w.waitFor((l) => l === `held ${sid} 1 3`, 0, 60_000), w.stderr).not.toBeNull()
  await until(async () => (await readAll(storeR, sid)).some((e) => e.type === 'assistant/chunk'))
  w.proc.kill('SIGKILL')
  await w.exited
}

beforeAll(async () => {
  lib = childLib()
  url = await freshDb('takeover')
  storeR = postgresStore({ connectionString: url })
  stores.push(storeR)
  await storeR.migrate()
  const s = postgresStore({ connectionString: url })
  stores.push(s)
  handler = sessionHandler({ chatIdInBody: true, store: s, authorize: allow, workers: true, pollMs: 10 })
  served = await serve(handler)
}, 180_000)

afterAll(async () => {
  for (const c of children) if (c.alive) c.proc.kill('SIGKILL')
  await served?.close()
  await handler?.close()
  for (const s of stores) await s.close()
  await dropAll()
})

describe('a worker process killed mid-turn while clients follow through turnlog/http', () => {
  it('H4 the stock Durable Streams client follows through the kill and the takeover: every event exactly once, in seq order, equal to the stored log; the answer completes', async () => {
    const follower = { got: [] as LogEvent[], cancel: () => {} }
    const sid = 'kill-1'
    const w1 = worker('w-kill-1-1', 'hold')
    await ready(w1)
    await storeR.send(sid, { id: 'q1', content: [{ type: 'text', text: 'Weather in Paris?' }] })
    // the client follows from the start, live, before the first token
    const res = await stream<LogEvent>({ url: `${served.url}/sessions/${sid}`, live: 'sse' })
    res.subscribeJson((batch) => { follower.got.push(...batch.items) })
    follower.cancel = () => res.cancel()
    w1.proc.stdin.write('RELEASE 3\n')
    expect(await w1.waitFor((l) => l === `held ${sid} 1 3`, 0, 60_000), w1.stderr).not.toBeNull()
    await until(() => follower.got.some((e) => e.type === 'assistant/chunk'))
    w1.proc.kill('SIGKILL')
    await w1.exited
    const w2 = worker('w-kill-1-2', 'free')
    await ready(w2)
    await until(async () => ends(await readAll(storeR, sid)).some((r) => r.kind === 'completed'))
    const stored = await readAll(storeR, sid)
    await until(() => follower.got.length >= stored.length)
    follower.cancel()
    expect(follower.got.map((e) => e.seq)).toEqual(stored.map((_, i) => i))
    expect(follower.got).toEqual(JSON.parse(JSON.stringify(stored)))
    // the killed turn is closed by repair, the resumed turn answers in full
    expect(ends(stored).map((r) => r.kind)).toEqual(['interrupted', 'completed'])
    expect(answerText(stored)).toBe(ANSWER)
    w2.proc.kill('SIGTERM')
    await w2.exited
  }, 120_000)

  it('H5 a stop recorded while the killed worker still holds the lease is carried out by the worker that takes the session over: the resumed turn ends aborted (user)', async () => {
    const sid = 'kill-2'
    await killMidAnswer(sid)
    const stop = await fetch(`${served.url}/chat/${sid}/stop`, { method: 'POST' })
    expect(stop.status).toBe(202)
    expect(await stop.json()).toMatchObject({ state: 'requested' })
    // the next holder's model waits at every chunk: only the stop can end its turn
    const w2 = worker(`w-${sid}-2`, 'hold')
    await ready(w2)
    await until(async () => ends(await readAll(storeR, sid)).length === 2)
    const log = await readAll(storeR, sid)
    expect(ends(log)).toEqual([{ kind: 'interrupted' }, { kind: 'aborted', cause: { kind: 'user' } }])
    const resumed = log.filter((e) => e.type === 'turn/start').map((e) => (e.data as { cause?: { kind: string } }).cause?.kind ?? 'new')
    expect(resumed).toEqual(['new', 'resume'])
    await until(async () => (await storeR.pool.query(`SELECT 1 FROM turnlog_cancels WHERE session_id = '${sid}' AND outcome = 'canceled'`)).rowCount === 1)
    w2.proc.kill('SIGTERM')
    await w2.exited
  }, 120_000)
})
