/**
 * Stop across processes (issue 22, round 13): `POST /chat/:id/stop` on a handler with `workers:
 * true` records the stop in PostgreSQL (`store.cancel`) and the worker process that holds the
 * session cancels the turn. Real parts only: two handler instances (each its own pool, behind its
 * own node:http server), a worker in a child process (test/http/children/worker.mjs, its model's
 * chunks released through stdin, so "mid-answer" is an exact place), the stock AI SDK 6 `Chat`.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { sessionHandler, type SessionHandler } from '../../http/index.js'
import { postgresStore, type PgWriter, type PostgresStore } from '../../stores/postgres/index.js'
import { childLib, ROOT } from '../stores/child-lib.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { LineChild, readAll } from '../stores/postgres/helpers.js'
import { NodeChat } from './chat-client.js'
import { allow, serve, until, type Served } from './helpers.js'

const WORKER = fileURLToPath(new URL('./children/worker.mjs', import.meta.url))
const ANSWER = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ') + '.'
const texts = (m: { parts: Array<{ type: string }> } | undefined): string => (m?.parts ?? []).filter((p) => p.type === 'text').map((p) => (p as unknown as { text: string }).text).join('')
const ends = (log: readonly LogEvent[]) => log.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string; cause?: { kind: string } } }).reason)

let lib = ''
let url = ''
const children: LineChild[] = []
const stores: PostgresStore[] = []
const handlers: SessionHandler[] = []
const servers: Served[] = []
let A = ''
let B = ''
let storeR: PostgresStore

function worker(id: string, mode: 'hold' | 'free', leaseMs = 3000): LineChild {
  const c = new LineChild(spawn, WORKER, [lib, url, id, String(leaseMs), mode], ROOT)
  children.push(c)
  return c
}
const release = (w: LineChild, n: number | 'all'): void => { w.proc.stdin.write(`RELEASE ${n}\n`) }
async function ready(w: LineChild): Promise<void> {
  expect(await w.waitFor((l) => l === 'READY', 0, 60_000), w.stderr).toBe('READY')
}
const stopReq = (base: string, id: string) => fetch(`${base}/chat/${id}/stop`, { method: 'POST' })

beforeAll(async () => {
  lib = childLib()
  url = await freshDb('stop')
  storeR = postgresStore({ connectionString: url })
  stores.push(storeR)
  await storeR.migrate()
  for (let i = 0; i < 2; i++) {
    const s = postgresStore({ connectionString: url })
    stores.push(s)
    const h = sessionHandler({ chatIdInBody: true, store: s, authorize: allow, workers: true, pollMs: 10 })
    handlers.push(h)
    servers.push(await serve(h))
  }
  A = servers[0]!.url
  B = servers[1]!.url
}, 180_000)

afterAll(async () => {
  for (const c of children) if (c.alive) c.proc.kill('SIGKILL')
  for (const s of servers) await s.close()
  for (const h of handlers) await h.close()
  for (const s of stores) await s.close()
  await dropAll()
})

describe('POST /chat/:id/stop with workers: recorded in PostgreSQL, carried out by the worker process', () => {
  it('H5 a stop through instance B cancels the turn a worker process runs for a chat streaming through A; the stock Chat sees the cut answer end; a message after the stop is answered; the Chat\'s own stop() alone cancels nothing', async () => {
    const w = worker('w-stop', 'hold')
    await ready(w)
    const chat = new NodeChat({ id: 'stop-1', api: `${A}/chat` })
    const sending = chat.sendMessage({ text: 'Weather in Paris?' })
    release(w, 3)
    // mid-answer: the worker waits at its 4th chunk, the first three are in the log
    expect(await w.waitFor((l) => l === 'held stop-1 1 3', 0, 60_000), w.stderr).not.toBeNull()
    await until(async () => (await readAll(storeR, 'stop-1')).some((e) => e.type === 'assistant/chunk'))
    const res = await stopReq(B, 'stop-1')
    expect(res.status).toBe(202)
    expect(await res.json()).toMatchObject({ state: 'requested' })
    await sending // the Chat's stream ends with the aborted turn (nothing was released after the stop)
    expect(chat.status).toBe('ready')
    const cut = texts(chat.messages[1])
    expect(cut.length).toBeGreaterThan(0)
    expect(ANSWER.startsWith(cut) && cut.length < ANSWER.length).toBe(true)
    const log = await readAll(storeR, 'stop-1')
    expect(ends(log)).toEqual([{ kind: 'aborted', cause: { kind: 'user' } }])
    // the history through either instance is what the Chat shows
    const history = (await (await fetch(`${B}/chat/stop-1/messages`)).json()) as Array<{ id: string; parts: Array<{ type: string }> }>
    expect(history.map((m) => m.id)).toEqual(chat.messages.map((m) => m.id))
    expect(texts(history[1])).toBe(cut)
    // the request is marked handled once the turn's end is durable
    await until(async () => (await storeR.pool.query("SELECT 1 FROM turnlog_cancels WHERE session_id = 'stop-1' AND handled_at IS NOT NULL")).rowCount === 1)
    const row = (await storeR.pool.query("SELECT outcome, end_seq FROM turnlog_cancels WHERE session_id = 'stop-1'")).rows[0] as { outcome: string; end_seq: number }
    expect(row.outcome).toBe('canceled')
    expect(log[row.end_seq]?.type).toBe('turn/end')

    // a message sent after the stop is answered in full
    release(w, 'all')
    await chat.sendMessage({ text: 'And tomorrow?' })
    expect(texts(chat.messages[3])).toBe(ANSWER)
    // the stock Chat's own stop() only stops listening (a disconnect): the turn runs to its end
    const third = chat.sendMessage({ text: 'And the day after?' })
    await until(async () => (await readAll(storeR, 'stop-1')).filter((e) => e.type === 'turn/start').length === 3)
    await chat.stop()
    await third
    await until(async () => ends(await readAll(storeR, 'stop-1')).length === 3)
    expect(ends(await readAll(storeR, 'stop-1')).map((r) => r.kind)).toEqual(['aborted', 'completed', 'completed'])
    w.proc.kill('SIGTERM')
    await w.exited
  }, 120_000)

  it('H5 a stop recorded before any worker holds the session (the window before the first token) cancels the sent prompt: the Chat\'s stream ends without an answer; the next message is answered; a stop on an idle session is "idle", on an unknown one 404', async () => {
    const chat = new NodeChat({ id: 'stop-2', api: `${A}/chat` })
    const sending = chat.sendMessage({ text: 'Never mind' })
    await until(async () => (await storeR.pool.query("SELECT 1 FROM turnlog_inbox WHERE session_id = 'stop-2'")).rowCount === 1)
    const res = await stopReq(B, 'stop-2')
    expect(res.status).toBe(202)
    expect(await res.json()).toMatchObject({ state: 'requested' })
    const w = worker('w-late', 'free')
    await ready(w)
    await sending
    expect(chat.messages.filter((m) => m.role === 'assistant').map(texts).join('')).toBe('')
    const log = await readAll(storeR, 'stop-2')
    expect(log.some((e) => e.type === 'turn/start')).toBe(false)
    const splices = log.filter((e) => e.type === 'agent/inbox/spliced').map((e) => (e.data as { outcome?: string }).outcome ?? 'inserted')
    expect(splices).toEqual(['inserted', 'canceled'])
    await until(async () => (await storeR.pool.query("SELECT 1 FROM turnlog_cancels WHERE session_id = 'stop-2' AND outcome = 'discarded'")).rowCount === 1)
    // input after the stop runs
    const next = new NodeChat({ id: 'stop-2', api: `${A}/chat` })
    await next.sendMessage({ text: 'Weather?' })
    expect(texts(next.messages[1])).toBe(ANSWER)
    // nothing runs and nothing waits: nothing to cancel
    await until(async () => (await storeR.pool.query("SELECT 1 FROM turnlog_sessions WHERE id = 'stop-2' AND lease_owner IS NULL")).rowCount === 1)
    const idle = await stopReq(B, 'stop-2')
    expect(idle.status).toBe(202)
    expect(await idle.json()).toMatchObject({ state: 'idle' })
    expect(ends(await readAll(storeR, 'stop-2')).map((r) => r.kind)).toEqual(['completed'])
    const unknown = await stopReq(B, 'no-such-chat')
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('SESSION_NOT_FOUND')
    w.proc.kill('SIGTERM')
    await w.exited
  }, 120_000)

  it('H5 a stop recorded while a worker holds the idle session is not stranded by its hand-back: the lease is kept until the request is handled (nobody claims an idle session with no input)', async () => {
    const id = 'stop-hand-back'
    await storeR.create(id)
    const writer = await storeR.open(id, 'write') as PgWriter
    try {
      // recorded while the lease is held: "requested", for the holder
      expect((await storeR.cancel(id)).state).toBe('requested')
      // the holder has not handled it yet (its NOTIFY is queued behind the hand-back): it must keep the lease
      expect(await writer.handBack()).toBe(false)
      const open = await storeR.pool.query('SELECT lease_owner FROM turnlog_sessions WHERE id = $1', [id])
      expect(open.rows[0].lease_owner).not.toBeNull()
      await storeR.pool.query("UPDATE turnlog_cancels SET handled_at = now(), outcome = 'nothing-open' WHERE session_id = $1", [id])
      expect(await writer.handBack()).toBe(true)
      // a stop recorded after the hand-back finds nothing to cancel
      expect((await storeR.cancel(id)).state).toBe('idle')
    } finally {
      await writer.close()
    }
  })
})
