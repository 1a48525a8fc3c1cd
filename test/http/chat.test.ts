/**
 * The AI SDK chat protocol served by `sessionHandler`, driven by the stock AI SDK client
 * (`AbstractChat` + `DefaultChatTransport`) of both majors, ai@6 and ai@7 (issue 33 item 3), in Node. The model is scripted and gated:
 * the test decides when each chunk is released, so "mid-answer" is an exact place, not a delay.
 * H5: what the client shows equals `/chat/:id/messages` (the log's projection) after a send, a
 * dropped connection + `resumeStream()`, a reload, and a stop; a disconnect never cancels.
 */
import type { UIMessage } from 'ai6'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { sessionHandler, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { CHAT_CLIENTS, droppingFetch } from './chat-client.js'
import { allow, Gate, serve, tempDir, until, type Served } from './helpers.js'

const ANSWER = 'The weather in Paris is sunny, 21 degrees.'
let tmp: ReturnType<typeof tempDir>
let store: LogStore
let handler: SessionHandler
let served: Served
let gate: Gate

beforeEach(async () => {
  tmp = tempDir()
  store = jsonlStore(tmp.dir)
  gate = new Gate()
  handler = sessionHandler({
    chatIdInBody: true,
    store, authorize: allow, pollMs: 10,
    agent: () => ({
      model: scriptedModel([{ text: ANSWER, chunkSize: 6 }, { text: 'Tomorrow: rain.', chunkSize: 6 }, { text: 'Third.' }], { beforeChunk: gate.wait }),
    }),
  })
  served = await serve(handler)
})
afterEach(async () => {
  gate.release(Infinity)
  await served.close()
  await handler.close()
  tmp.remove()
})

const history = async (id: string): Promise<UIMessage[]> => (await (await fetch(`${served.url}/chat/${id}/messages`)).json()) as UIMessage[]
const log = async (id: string): Promise<LogEvent[]> => {
  const r = await store.open(id, 'read')
  const out: LogEvent[] = []
  for await (const e of r.events()) out.push(e)
  await r.close()
  return out
}
const texts = (m: UIMessage | undefined): string[] => (m?.parts ?? []).filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)
const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T

describe.each(CHAT_CLIENTS)('AI SDK $ai Chat + DefaultChatTransport against turnlog/http', ({ NodeChat }) => {
  it('H5 send: the answer streams into the client; its messages equal /chat/:id/messages; the user message keeps the client\'s id', async () => {
    gate.release(Infinity)
    const chat = new NodeChat({ id: 'c1', api: `${served.url}/chat` })
    await chat.sendMessage({ text: 'Weather in Paris?' })
    expect(chat.status).toBe('ready')
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(texts(chat.messages[1])).toEqual([ANSWER])
    expect(chat.messages[1]!.id).toBe('turn-1')
    const h = await history('c1')
    expect(h[0]!.id).toBe(chat.messages[0]!.id)
    expect(plain(chat.messages).map((m) => ({ ...m, parts: m.parts.filter((p) => p.type !== 'step-start') })))
      .toEqual(h.map((m) => ({ ...m, parts: m.parts.filter((p) => p.type !== 'step-start') })))
    const events = await log('c1')
    const user = events.find((e) => e.type === 'user/message')!
    expect((user.data as { message: { id: string } }).message.id).toBe(chat.messages[0]!.id)
    // a second message in the same chat: a second turn
    await chat.sendMessage({ text: 'And tomorrow?' })
    expect(chat.messages.map((m) => m.id)).toEqual([h[0]!.id, 'turn-1', chat.messages[2]!.id, 'turn-2'])
    expect(texts(chat.messages[3])).toEqual(['Tomorrow: rain.'])
  })

  it('H5 a dropped connection mid-answer, then resumeStream(): the same message, no duplicate parts, and the turn was never cancelled', async () => {
    const net = droppingFetch()
    const chat = new NodeChat({ id: 'c2', api: `${served.url}/chat`, fetch: net.fetch })
    const sending = chat.sendMessage({ text: 'Weather in Paris?' })
    gate.release(3)
    await until(() => texts(chat.messages[1]).join('').length > 0)
    net.cut()
    await sending
    expect(chat.status).toBe('error')
    const partial = texts(chat.messages[1]).join('')
    expect(ANSWER.startsWith(partial) && partial.length < ANSWER.length).toBe(true)
    gate.release(2)
    const resuming = chat.resumeStream()
    // the rest only once the resumed stream is open: a turn that ended before the GET read the log
    // has nothing to resume (204), and the client would keep its partial message
    await until(() => chat.status === 'streaming')
    gate.release(Infinity)
    await resuming
    expect(chat.status).toBe('ready')
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(chat.messages[1]!.id).toBe('turn-1')
    expect(texts(chat.messages[1])).toEqual([ANSWER])
    expect(chat.messages[1]!.parts.filter((p) => p.type === 'step-start')).toHaveLength(1)
    const end = (await log('c2')).find((e) => e.type === 'turn/end')!
    expect((end.data as { reason: { kind: string } }).reason.kind).toBe('completed')
  })

  it('H5 a reload mid-answer: history from /chat/:id/messages, then resumeStream() finishes the same message', async () => {
    const first = new NodeChat({ id: 'c3', api: `${served.url}/chat` })
    const sending = first.sendMessage({ text: 'Weather in Paris?' })
    gate.release(3)
    await until(() => texts(first.messages[1]).join('').length > 0)
    await first.stop() // the tab goes away: the fetch is aborted (a disconnect, not a cancel)
    await sending
    await gate.held()
    const reloaded = new NodeChat({ id: 'c3', api: `${served.url}/chat`, messages: await history('c3') })
    expect(reloaded.messages.map((m) => m.id)).toEqual([first.messages[0]!.id, 'turn-1'])
    const resuming = reloaded.resumeStream()
    // the rest only once the resumed stream is open (a turn ended before the GET read the log: 204)
    await until(() => reloaded.status === 'streaming')
    gate.release(Infinity)
    await resuming
    expect(reloaded.messages.map((m) => m.id)).toEqual([first.messages[0]!.id, 'turn-1'])
    expect(texts(reloaded.messages[1])).toEqual([ANSWER])
    const end = (await log('c3')).find((e) => e.type === 'turn/end')!
    expect((end.data as { reason: { kind: string } }).reason.kind).toBe('completed')
  })

  it('H5 stop: POST /chat/:id/stop cancels the turn; the client\'s stream ends with the turn; history shows the cut answer', async () => {
    const chat = new NodeChat({ id: 'c4', api: `${served.url}/chat` })
    const sending = chat.sendMessage({ text: 'Weather in Paris?' })
    gate.release(3)
    await until(() => texts(chat.messages[1]).join('').length > 0)
    const stop = await fetch(`${served.url}/chat/c4/stop`, { method: 'POST' })
    expect(stop.status).toBe(204)
    await sending
    expect(chat.status).toBe('ready')
    await until(async () => (await log('c4')).some((e) => e.type === 'turn/end'))
    const end = (await log('c4')).find((e) => e.type === 'turn/end')!
    expect((end.data as { reason: { kind: string } }).reason.kind).toBe('aborted')
    const h = await history('c4')
    expect(texts(h[1]).join('').length).toBeGreaterThan(0)
    expect(texts(h[1]).join('').length).toBeLessThan(ANSWER.length)
    expect(texts(chat.messages[1])).toEqual(texts(h[1]))
    expect(h[1]!.parts.some((p) => p.type === 'data-turnlog-turn-end')).toBe(true)
  })

  it('resume endpoint: 204 for a chat that does not exist and when no turn is open; messages [] for an unknown chat', async () => {
    expect((await fetch(`${served.url}/chat/none/stream`)).status).toBe(204)
    expect(await history('none')).toEqual([])
    gate.release(Infinity)
    const chat = new NodeChat({ id: 'c5', api: `${served.url}/chat` })
    await chat.sendMessage({ text: 'Weather in Paris?' })
    expect((await fetch(`${served.url}/chat/c5/stream`)).status).toBe(204)
  })

  it('a retried POST with the same message id streams the same turn and sends nothing twice', async () => {
    gate.release(Infinity)
    const body = JSON.stringify({ id: 'c6', trigger: 'submit-message', messages: [{ id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Weather in Paris?' }] }] })
    const one = await (await fetch(`${served.url}/chat`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).text()
    const two = await (await fetch(`${served.url}/chat`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).text()
    expect(two).toBe(one)
    expect(one).toContain('"messageId":"turn-1"')
    expect(one.trimEnd().endsWith('data: [DONE]')).toBe(true)
    const events = await log('c6')
    expect(events.filter((e) => e.type === 'turn/start')).toHaveLength(1)
    expect(events.filter((e) => e.type === 'user/message')).toHaveLength(1)
  })

  it('bad chat requests are coded 400/413 JSON errors; authorize is asked (write) for a POST and (cancel) for a stop', async () => {
    const asked: string[] = []
    const h = sessionHandler({
      chatIdInBody: true,
      store, agent: () => ({ model: scriptedModel([]) }), maxBodyBytes: 1000,
      authorize: (_req, id, action) => { asked.push(`${id}:${action}`); return id !== 'locked' },
    })
    const s = await serve(h)
    const post = async (body: string): Promise<[number, string]> => {
      const r = await fetch(`${s.url}/chat`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
      return [r.status, ((await r.json()) as { error: { code: string } }).error.code]
    }
    try {
      expect(await post('{not json')).toEqual([400, 'BAD_JSON'])
      expect(await post(JSON.stringify({ id: 'x', messages: [] }))).toEqual([400, 'BAD_REQUEST'])
      expect(await post(JSON.stringify({ id: '../x', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] }))).toEqual([400, 'INVALID_SESSION_ID'])
      expect(await post(JSON.stringify({ id: 'x', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'x'.repeat(2000) }] }] }))).toEqual([413, 'BODY_TOO_LARGE'])
      expect(await post(JSON.stringify({ id: 'x', messages: [{ id: 'u', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }] }))).toEqual([400, 'BAD_REQUEST'])
      expect(await post(JSON.stringify({ id: 'x', trigger: 'regenerate-message', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] }))).toEqual([400, 'NOT_SUPPORTED'])
      expect(await post(JSON.stringify({ id: 'locked', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] }))).toEqual([403, 'FORBIDDEN'])
      expect((await fetch(`${s.url}/chat/locked/stop`, { method: 'POST' })).status).toBe(403)
      expect(asked).toEqual(['locked:write', 'locked:cancel'])
      expect(await store.has('locked')).toBe(false)
    } finally {
      await s.close()
      await h.close()
    }
  })
})
