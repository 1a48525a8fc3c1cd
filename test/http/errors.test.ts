/**
 * Issue 38 items 10 and 28: what an error tells the client. An `authorize` that throws is a generic
 * 500 (`AUTHORIZE_FAILED`) and its detail goes to `onError` only; a corrupt log is a 500
 * (`LOG_UNREADABLE`), never an empty session (`200 []`); no error response carries an absolute
 * server path or a raw error text.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import { sessionHandler, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { allow, serve, tempDir, type Served } from './helpers.js'

let tmp: ReturnType<typeof tempDir>
let store: LogStore
const closers: Array<() => Promise<void>> = []

beforeEach(() => {
  tmp = tempDir()
  store = jsonlStore(tmp.dir)
})
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c()
  tmp.remove()
})

async function start(opts: Partial<Parameters<typeof sessionHandler>[0]> = {}): Promise<{ url: string; errors: unknown[]; handler: SessionHandler }> {
  const errors: unknown[] = []
  const handler = sessionHandler({ chatIdInBody: true, store, authorize: allow, agent: () => ({ model: scriptedModel([{ text: 'ok' }]) }), pollMs: 10, onError: (e) => errors.push(e), ...opts } as Parameters<typeof sessionHandler>[0])
  const served: Served = await serve(handler)
  closers.push(() => handler.close(), () => served.close())
  return { url: served.url, errors, handler }
}

async function session(id: string): Promise<string> {
  const a = createAgent({ model: scriptedModel([{ text: 'It is sunny.' }]), store, sessionId: id })
  a.followup('Weather?')
  await a.whenIdle()
  await a.dispose()
  return join(tmp.dir, `${id}.jsonl`)
}

const body = async (r: Response): Promise<{ status: number; code: string; message: string; text: string }> => {
  const text = await r.text()
  const e = (JSON.parse(text) as { error: { code: string; message: string } }).error
  return { status: r.status, code: e.code, message: e.message, text }
}

describe('error responses (issue 38 items 10, 28)', () => {
  it('an authorize that throws: 500 AUTHORIZE_FAILED with a generic message; the detail reaches onError', async () => {
    const { url, errors } = await start({ authorize: () => { throw new Error('db down at /srv/app/secrets.db') } })
    for (const path of ['/sessions/s', '/chat/s/messages', '/chat/s/stream']) {
      const r = await body(await fetch(url + path))
      expect(r.status).toBe(500)
      expect(r.code).toBe('AUTHORIZE_FAILED')
      expect(r.text).not.toContain('db down')
      expect(r.text).not.toContain('/srv/app')
    }
    expect(errors.map((e) => (e as Error).message)).toContain('db down at /srv/app/secrets.db')
  })

  it('a corrupt log is a 500 LOG_UNREADABLE on every read route, not an empty session; the response names no server path', async () => {
    const file = await session('bad')
    const lines = readFileSync(file, 'utf8').split('\n')
    // a line in the middle that is not an event
    lines.splice(3, 1, '{"this is": "not an event"}')
    writeFileSync(file, lines.join('\n'))
    const { url, errors } = await start()
    for (const path of ['/chat/bad/messages', '/sessions/bad', '/chat/bad/stream']) {
      const r = await body(await fetch(url + path))
      expect([r.status, r.code], path).toEqual([500, 'LOG_UNREADABLE'])
      expect(r.text).not.toContain(tmp.dir)
    }
    expect(errors.length).toBeGreaterThan(0)
  })

  it('a log with bytes that are not JSON in the middle is a 500 too', async () => {
    const file = await session('torn')
    const lines = readFileSync(file, 'utf8').split('\n')
    lines.splice(2, 0, '{"seq": 1, "ty')
    writeFileSync(file, lines.join('\n'))
    appendFileSync(file, '')
    const { url } = await start()
    const r = await body(await fetch(url + '/chat/torn/messages'))
    expect([r.status, r.code]).toEqual([500, 'LOG_UNREADABLE'])
    expect(r.text).not.toContain(tmp.dir)
  })

  it('errors from the store (a session owned by another writer) carry no server path', async () => {
    await session('owned')
    const w = await store.open('owned', 'write')
    try {
      const { url } = await start()
      const r = await fetch(url + '/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'owned', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] }) })
      const text = await r.text()
      expect(text).toContain('SESSION_OWNED')
      expect(r.status).toBeGreaterThanOrEqual(400)
      expect(text).not.toContain(tmp.dir)
    } finally {
      await w.close()
    }
  })
})
