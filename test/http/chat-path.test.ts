/**
 * Issue 38 item 26 (HTTP): `POST /chat/:id` names the session in its path, so `authorize` is asked
 * before a byte of the body is read or parsed: a refused client gets 403 whatever its body (bad
 * JSON, too large, never finished). The stock client posts there with `prepareSendMessagesRequest`.
 */
import { connect } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { sessionHandler, type SessionAction, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { memoryStore } from '../../stores/memory.js'
import type { LogStore } from '../../stores/types.js'
import { NodeChat } from './chat-client.js'
import { serve, type Served } from './helpers.js'

let store: LogStore
let handler: SessionHandler
let served: Served
let asked: string[]
let allowed: (id: string, action: SessionAction) => boolean

beforeEach(async () => {
  store = memoryStore()
  asked = []
  allowed = () => true
  handler = sessionHandler({
    store, pollMs: 10, maxBodyBytes: 10_000,
    authorize: (_req, id, action) => { asked.push(`${id}:${action}`); return allowed(id, action) },
    agent: () => ({ model: scriptedModel(() => ({ text: 'Sunny.' })) }),
  })
  served = await serve(handler)
})
afterEach(async () => {
  await served.close()
  await handler.close()
})

/** Sends headers and part of a body on a raw socket and resolves with the status line the server answers before the body ends. */
function partialPost(path: string, declared: number, sent: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const port = Number(new URL(served.url).port)
    const socket = connect(port, '127.0.0.1')
    let got = ''
    socket.on('data', (b) => {
      got += b.toString('latin1')
      if (got.includes('\r\n\r\n')) { socket.destroy(); resolve(got.split('\r\n')[0]!) }
    })
    socket.on('error', reject)
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${sent}`)
  })
}

const post = async (path: string, body: string): Promise<[number, string]> => {
  const r = await fetch(served.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  return [r.status, ((await r.json()) as { error: { code: string } }).error.code]
}

describe('POST /chat/:id: authorized before the body is read (issue 38 item 26)', () => {
  it('a refused client gets 403 for any body: bad JSON, too large, unfinished; authorize is asked with the path\'s session', async () => {
    allowed = () => false
    expect(await post('/chat/locked', '{not json')).toEqual([403, 'FORBIDDEN'])
    expect(await post('/chat/locked', 'x'.repeat(20_000))).toEqual([403, 'FORBIDDEN'])
    // the body never ends: the answer comes anyway (nothing waited for it)
    expect(await partialPost('/chat/locked', 5_000, '{"id":"locked","messages":[')).toMatch(/^HTTP\/1\.1 403 /)
    expect(asked.every((a) => a.startsWith('locked:'))).toBe(true)
    expect(await store.has('locked')).toBe(false)
  })

  it('the stock client posts to /chat/:id (prepareSendMessagesRequest): send and answer; the body must name the same chat', async () => {
    const chat = new NodeChat({ id: 'p1', api: `${served.url}/chat`, idInPath: true })
    await chat.sendMessage({ text: 'Weather?' })
    expect(chat.status).toBe('ready')
    expect(chat.messages[1]!.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['Sunny.'])
    expect(asked).toContain('p1:write')
    const other = JSON.stringify({ id: 'p2', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] })
    expect(await post('/chat/p1', other)).toEqual([400, 'CHAT_ID_MISMATCH'])
  })

  it('a client that may decide but not write is read for its approval answers only', async () => {
    allowed = (_id, action) => action === 'decide'
    const body = JSON.stringify({ id: 'p3', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] })
    expect(await post('/chat/p3', body)).toEqual([403, 'FORBIDDEN'])
    expect(asked).toEqual(['p3:write', 'p3:decide', 'p3:write'])
    expect(await store.has('p3')).toBe(false)
  })
})

describe('POST /chat (the chat id only in the body): served only with chatIdInBody (issue 38 item 26)', () => {
  it('by default it is refused 404 CHAT_ID_NOT_IN_PATH before a byte of the body is read and before authorize is asked', async () => {
    const body = JSON.stringify({ id: 'b1', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] })
    expect(await post('/chat', body)).toEqual([404, 'CHAT_ID_NOT_IN_PATH'])
    // a body that never ends gets the answer anyway: nothing waited for it
    expect(await partialPost('/chat', 5_000, '{"id":"b1","messages":[')).toMatch(/^HTTP\/1\.1 404 /)
    expect(asked).toEqual([])
    expect(await store.has('b1')).toBe(false)
    // the stock client with no transport options gets the coded error
    const chat = new NodeChat({ id: 'b1', api: `${served.url}/chat` })
    await chat.sendMessage({ text: 'Weather?' })
    expect(chat.status).toBe('error')
    expect(chat.error?.message).toContain('CHAT_ID_NOT_IN_PATH')
    expect(await store.has('b1')).toBe(false)
  })

  it('with chatIdInBody: true the stock client with no transport options sends and gets its answer (authorize asked after the body is read)', async () => {
    const h = sessionHandler({
      store, pollMs: 10, chatIdInBody: true,
      authorize: (_req, id, action) => { asked.push(`${id}:${action}`); return true },
      agent: () => ({ model: scriptedModel(() => ({ text: 'Sunny.' })) }),
    })
    const s = await serve(h)
    try {
      const chat = new NodeChat({ id: 'b2', api: `${s.url}/chat` })
      await chat.sendMessage({ text: 'Weather?' })
      expect(chat.status).toBe('ready')
      expect(chat.messages[1]!.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['Sunny.'])
      expect(asked).toEqual(['b2:write'])
    } finally {
      await s.close()
      await h.close()
    }
  })
})
