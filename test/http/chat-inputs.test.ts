/**
 * Input rounds that are not client tools (docs/spec/lifecycle.md §11) through turnlog/http, with
 * the stock AI SDK 6 and 7 `Chat` in Node, JSONL: a round is a `data-turnlog-input` part (id: the
 * request id; data `{requestId, callId, toolName, round, requests, expiresAt?}`) beside the call's
 * `input-available` tool part, and the stream ends at the park; `POST /chat/:id/inputs/:requestId`
 * answers it (authorized `decide` before the body is read, the body capped, coded refusals that log
 * nothing: 404 UNKNOWN_INPUT, 409 INPUT_ANSWERED, 400 INVALID_INPUT naming the field, 400
 * INVALID_ARGUMENT); the client's `resumeStream()` then shows the turn going on, the part again
 * with `answered`. The Durable Streams read shows the rounds as events like any other, and a
 * handler that did not ask (a restart) answers a parked session from its log.
 */
import type { UIMessage } from 'ai6'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { LogEvent } from '../../events/envelope.js'
import { sessionHandler, toUIMessageChunks, type SessionAction, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { CHAT_CLIENTS } from './chat-client.js'
import { Gate, serve, tempDir, until, type Served } from './helpers.js'

const FINAL = 'Your parcel goes to Paris.'
const schema = { type: 'object', properties: { city: { type: 'string', minLength: 1 } }, required: ['city'], additionalProperties: false }
let tmp: ReturnType<typeof tempDir>
let store: LogStore
let handler: SessionHandler
let served: Served
let asked: SessionAction[]
let allowed: boolean
let bodies: string[]
/** While `holding`, the model's chunks wait at `gate` (the turn cannot end before the client resumes it). */
let holding: boolean
let gate: Gate

function makeHandler(): SessionHandler {
  const ship = defineTool({
    name: 'ship', description: 'ship the parcel', parameters: z.object({ parcel: z.string() }),
    execute(args, ctx) {
      if (!ctx.input) return ctx.inputRequired({ requests: { address: { kind: 'form', message: 'Where to?', schema } }, expiresInMs: 3_600_000 })
      if (ctx.input.action !== 'accept') return 'not shipped'
      const city = (ctx.input.responses!['address'] as { city: string }).city
      bodies.push(city)
      return `shipped ${args.parcel} to ${city}`
    },
  }) as AnyTool
  return sessionHandler({
    chatIdInBody: true,
    store, pollMs: 10, maxBodyBytes: 4096,
    authorize: (_req, _id, action) => { asked.push(action); return allowed },
    // the model answers from the history (a resumed agent's model starts afresh): a tool result → the answer
    agent: () => ({ tools: [ship], model: scriptedModel((req) => req.messages.at(-1)?.role === 'tool' ? { text: FINAL } : { toolCalls: [{ name: 'ship', args: { parcel: 'books' } }] }, { beforeChunk: () => holding ? gate.wait() : undefined }) }),
  })
}

beforeEach(async () => {
  tmp = tempDir()
  store = jsonlStore(tmp.dir)
  asked = []
  allowed = true
  bodies = []
  holding = false
  gate = new Gate()
  handler = makeHandler()
  served = await serve(handler)
})
afterEach(async () => {
  await served.close()
  await handler.close()
  tmp.remove()
})

const log = async (id: string): Promise<LogEvent[]> => {
  const r = await store.open(id, 'read')
  const out: LogEvent[] = []
  for await (const e of r.events()) out.push(e)
  await r.close()
  return out
}
type InputPart = { type: 'data-turnlog-input'; id: string; data: { requestId: string; callId: string; toolName: string; round: number; requests: unknown; expiresAt?: number; answered?: { action: string; by: string; at: number } } }
const inputParts = (m: UIMessage | undefined): InputPart[] => (m?.parts ?? []).filter((p) => p.type === 'data-turnlog-input') as unknown as InputPart[]
const texts = (m: UIMessage | undefined): string => (m?.parts ?? []).filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('')
const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T
const answer = (id: string, requestId: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${served.url}/chat/${id}/inputs/${encodeURIComponent(requestId)}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
const errorOf = async (r: Response): Promise<{ code: string; message: string; field?: string }> => ((await r.json()) as { error: { code: string; message: string; field?: string } }).error

describe.each(CHAT_CLIENTS)('input rounds through turnlog/http (AI SDK $ai Chat, JSONL)', ({ NodeChat }) => {
  it('L21 R11 a form round is a data-turnlog-input part; POST /chat/:id/inputs/:requestId answers it once; the resumed stream goes on to the answer', async () => {
    const chat = new NodeChat({ id: 'in1', api: `${served.url}/chat` })
    await chat.sendMessage({ text: 'Ship my books' })
    expect(chat.status).toBe('ready')
    const [part] = inputParts(chat.messages[1])
    const events = await log('in1')
    const requested = events.find((e) => e.type === 'tool/input-requested')!
    const rd = requested.data as { requestId: string; callId: string; expiresAt: number }
    expect(inputParts(chat.messages[1])).toEqual([{
      type: 'data-turnlog-input', id: rd.requestId,
      data: { requestId: rd.requestId, callId: rd.callId, toolName: 'ship', round: 1, requests: { address: { kind: 'form', message: 'Where to?', schema } }, expiresAt: rd.expiresAt },
    }])
    expect((chat.messages[1]!.parts.find((p) => p.type === 'tool-ship') as { state: string }).state).toBe('input-available')
    expect(events.at(-1)!.type).toBe('step/parked')

    const n = events.length
    asked = []
    // an answer that does not fit the form: 400 naming the field, nothing logged
    const bad = await answer('in1', part!.id, { action: 'accept', responses: { address: { city: 7 } } })
    expect(bad.status).toBe(400)
    expect(await errorOf(bad)).toMatchObject({ code: 'INVALID_INPUT', field: 'responses.address/city' })
    // not an answer at all: 400 INVALID_ARGUMENT; a request the log never made: 404; not JSON: 400
    const maybe = await answer('in1', part!.id, { action: 'maybe' })
    expect([maybe.status, (await errorOf(maybe)).code]).toEqual([400, 'INVALID_ARGUMENT'])
    const unknown = await answer('in1', 'no-such-request', { action: 'decline' })
    expect([unknown.status, (await errorOf(unknown)).code]).toEqual([404, 'UNKNOWN_INPUT'])
    const notJson = await answer('in1', part!.id, '{"action": ')
    expect([notJson.status, (await errorOf(notJson)).code]).toEqual([400, 'BAD_JSON'])
    // the body limit is the handler's (maxBodyBytes), as for every POST
    const big = await answer('in1', part!.id, { action: 'accept', responses: { address: { city: 'x'.repeat(5000) } } })
    expect([big.status, (await errorOf(big)).code]).toEqual([413, 'BODY_TOO_LARGE'])
    // GET is not a way to answer; an unknown session is 404
    const get = await fetch(`${served.url}/chat/in1/inputs/${part!.id}`)
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST'])
    const nobody = await answer('in-nobody', part!.id, { action: 'decline' })
    expect([nobody.status, (await errorOf(nobody)).code]).toEqual([404, 'SESSION_NOT_FOUND'])
    expect((await log('in1')).length).toBe(n)
    expect(bodies).toEqual([])
    expect(asked.every((a) => a === 'decide')).toBe(true)

    // the answer: 200 once durable; the log has it by the user (the model's next answer is held
    // until the client follows the turn: a resume after the turn has ended is a 204)
    holding = true
    const ok = await answer('in1', part!.id, { action: 'accept', responses: { address: { city: 'Paris' } } })
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ requestId: part!.id, action: 'accept' })
    const provided = (await log('in1')).filter((e) => e.type === 'tool/input-provided')
    expect(provided.map((e) => [(e.data as { answer: unknown }).answer, (e.data as { by: unknown }).by])).toEqual([[{ action: 'accept', responses: { address: { city: 'Paris' } } }, { kind: 'user' }]])
    // a second answer: 409, nothing logged
    const twice = await answer('in1', part!.id, { action: 'decline' })
    expect([twice.status, (await errorOf(twice)).code]).toEqual([409, 'INPUT_ANSWERED'])

    // the client resumes the turn: it goes on to the model's answer, the part says who answered
    await gate.held()
    const resumed = chat.resumeStream()
    await until(() => chat.status === 'streaming')
    gate.release(Infinity)
    await resumed
    await until(() => chat.status === 'ready' && texts(chat.messages[1]) === FINAL)
    expect(bodies).toEqual(['Paris'])
    const [answered] = inputParts(chat.messages[1])
    expect(answered!.data.answered).toEqual({ action: 'accept', by: 'user', at: provided[0]!.time })
    const final = await log('in1')
    expect(final.at(-1)!.type).toBe('turn/end')
    expect(final.filter((e) => e.type === 'tool/input-provided').length).toBe(1)
    expect(plain((await (await fetch(`${served.url}/chat/in1/messages`)).json()) as UIMessage[])).toEqual(plain(chat.messages))

    // the Durable Streams read shows the rounds as events like any other
    const read = (await (await fetch(`${served.url}/sessions/in1`)).json()) as Array<{ type: string; seq: number }>
    expect(read.map((e) => e.type)).toEqual(final.map((e) => e.type))
    expect(read.filter((e) => e.type.startsWith('tool/input-')).map((e) => e.type)).toEqual(['tool/input-requested', 'tool/input-provided'])
  })

  it('L21 authorize is asked `decide` before the body is read: a refusal is 403 whatever the body, nothing logged', async () => {
    const chat = new NodeChat({ id: 'in2', api: `${served.url}/chat` })
    await chat.sendMessage({ text: 'Ship my books' })
    const [part] = inputParts(chat.messages[1])
    const n = (await log('in2')).length
    allowed = false
    asked = []
    const r = await answer('in2', part!.id, '{"not json')
    expect([r.status, (await errorOf(r)).code]).toEqual([403, 'FORBIDDEN'])
    expect(asked).toEqual(['decide'])
    expect((await log('in2')).length).toBe(n)
  })

  it('R11 a parked session answered through a handler that did not ask it (a restart): the agent is resumed from the log and the body runs once', async () => {
    const chat = new NodeChat({ id: 'in3', api: `${served.url}/chat` })
    await chat.sendMessage({ text: 'Ship my books' })
    const [part] = inputParts(chat.messages[1])
    await served.close()
    await handler.close()
    handler = makeHandler()
    served = await serve(handler)
    const ok = await answer('in3', part!.id, { action: 'decline' })
    expect(ok.status).toBe(200)
    await until(async () => (await log('in3')).at(-1)!.type === 'turn/end')
    const events = await log('in3')
    expect(events.filter((e) => e.type === 'tool/input-provided').map((e) => (e.data as { answer: unknown }).answer)).toEqual([{ action: 'decline' }])
    expect(events.filter((e) => e.type === 'tool/result').map((e) => JSON.stringify((e.data as { message: unknown }).message))).toEqual([expect.stringContaining('not shipped')])
    expect(bodies).toEqual([])
  })
})

describe('the projection of input rounds (pure)', () => {
  it('L21 a client round shows the call input-available until answered, then output-available with the accepted output; a form round is a data part, re-sent answered', () => {
    const t = 1_000
    const e = (seq: number, type: string, data: unknown): LogEvent => ({ seq, time: t + seq, type, data } as LogEvent)
    const events: LogEvent[] = [
      e(0, 'turn/start', { turn: 1, cause: { kind: 'message' } }),
      e(1, 'step/start', { turn: 1, step: 1 }),
      e(2, 'assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'pick', arguments: '{}' }, { type: 'tool-call', id: 'c2', name: 'ship', arguments: '{}' }] }, finish: 'tool-calls' }),
      e(3, 'tool/call', { turn: 1, step: 1, callId: 'c1', name: 'pick', arguments: '{}' }),
      e(4, 'tool/input-requested', { turn: 1, step: 1, callId: 'c1', requestId: 'r1', round: 1, requests: { output: { kind: 'client' } } }),
      e(5, 'tool/call', { turn: 1, step: 1, callId: 'c2', name: 'ship', arguments: '{}' }),
      e(6, 'tool/input-requested', { turn: 1, step: 1, callId: 'c2', requestId: 'r2', round: 1, requests: { q: { kind: 'text', message: 'Why?' } }, expiresAt: 9_999 }),
      e(7, 'step/parked', { turn: 1, step: 1, approvals: ['r1', 'r2'] }),
      e(8, 'tool/input-provided', { turn: 1, step: 1, callId: 'c1', requestId: 'r1', round: 1, answer: { action: 'accept', responses: { output: { color: 'blue' } } }, by: { kind: 'user' } }),
      e(9, 'tool/input-provided', { turn: 1, step: 1, callId: 'c2', requestId: 'r2', round: 1, answer: { action: 'cancel' }, by: { kind: 'expired' } }),
      e(10, 'tool/result', { turn: 1, step: 1, callId: 'c1', message: { role: 'tool', callId: 'c1', content: [{ type: 'text', text: '{"color":"blue"}' }] }, json: true }),
    ]
    const chunks = toUIMessageChunks(events).map((c) => [c.seq, c.chunk])
    expect(chunks.filter(([seq]) => (seq as number) >= 3)).toEqual([
      [3, { type: 'tool-input-available', toolCallId: 'c1', toolName: 'pick', input: {} }],
      [5, { type: 'tool-input-available', toolCallId: 'c2', toolName: 'ship', input: {} }],
      [6, { type: 'data-turnlog-input', id: 'r2', data: { requestId: 'r2', callId: 'c2', toolName: 'ship', round: 1, requests: { q: { kind: 'text', message: 'Why?' } }, expiresAt: 9_999 } }],
      [8, { type: 'tool-output-available', toolCallId: 'c1', output: { color: 'blue' } }],
      [9, { type: 'data-turnlog-input', id: 'r2', data: { requestId: 'r2', callId: 'c2', toolName: 'ship', round: 1, requests: { q: { kind: 'text', message: 'Why?' } }, expiresAt: 9_999, answered: { action: 'cancel', by: 'expired', at: t + 9 } } }],
    ])
  })
})
