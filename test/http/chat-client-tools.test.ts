/**
 * Client tools through the AI SDK chat protocol (docs/spec/lifecycle.md §11), with the stock AI SDK
 * 6 and 7 clients (`AbstractChat` + `DefaultChatTransport`) in Node, JSONL, one process: the call
 * of a `defineTool({ client: true })` tool is shown as a tool part `input-available` with no
 * output, the stream ends at the park (the client is `ready`), `onToolCall` sees the call, the
 * client answers with `addToolOutput`, `sendAutomaticallyWhen:
 * lastAssistantMessageIsCompleteWithToolCalls` posts it, and the server makes it the answer of the
 * call's round (`tool/input-provided`, durable before the stream goes on); the same assistant
 * message goes on to the model's answer. A "reload" between the call and the answer (a new client
 * from `/chat/:id/messages` plus `resumeStream()`) loses nothing. Refusals log nothing.
 */
import type { UIMessage } from 'ai6'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { LogEvent } from '../../events/envelope.js'
import { sessionHandler, type SessionAction, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { CHAT_CLIENTS } from './chat-client.js'
import { serve, tempDir, until, type Served } from './helpers.js'

const FINAL = 'Blue it is: the page is repainted.'
let tmp: ReturnType<typeof tempDir>
let store: LogStore
let handler: SessionHandler
let served: Served
let asked: SessionAction[]

beforeEach(async () => {
  tmp = tempDir()
  store = jsonlStore(tmp.dir)
  asked = []
  const pickColor = defineTool({ name: 'pick_color', parameters: z.object({ palette: z.string() }), output: z.object({ color: z.string() }), client: true }) as AnyTool
  handler = sessionHandler({
    chatIdInBody: true,
    store, pollMs: 10,
    authorize: (_req, _id, action) => { asked.push(action); return true },
    agent: () => ({
      tools: [pickColor],
      model: scriptedModel([{ toolCalls: [{ name: 'pick_color', args: { palette: 'sea' } }] }, { text: FINAL }]),
    }),
  })
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
type ToolPart = { type: string; toolCallId: string; state: string; input?: unknown; output?: unknown; errorText?: string }
const tools = (m: UIMessage | undefined): ToolPart[] => (m?.parts ?? []).filter((p) => p.type.startsWith('tool-')) as unknown as ToolPart[]
const texts = (m: UIMessage | undefined): string => (m?.parts ?? []).filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('')
const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T
const post = (body: unknown) => fetch(`${served.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
const history = async (id: string): Promise<UIMessage[]> => (await (await fetch(`${served.url}/chat/${id}/messages`)).json()) as UIMessage[]
/** The messages with the client tool's part answered as `addToolOutput` leaves it. */
const withOutput = (messages: UIMessage[], output: unknown): UIMessage[] => {
  const out = structuredClone(messages)
  for (const p of tools(out[1])) { p.state = 'output-available'; p.output = output }
  return out
}

describe.each(CHAT_CLIENTS)('client tools through the AI SDK $ai Chat (JSONL, agent in this process)', ({ NodeChat, lastAssistantMessageIsCompleteWithToolCalls }) => {
  it('L21 R11 a client tool answered by addToolOutput after a reload: the call waits input-available, the answer is logged before the result, the message goes on', async () => {
    const seen: string[] = []
    const first = new NodeChat({ id: 'ct1', api: `${served.url}/chat`, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls, onToolCall: ({ toolCall }) => { seen.push(toolCall.toolName) } })
    await first.sendMessage({ text: 'Pick a colour for the page' })
    // the turn parked on the client round: the stream ended there with the call waiting
    expect(first.status).toBe('ready')
    expect(seen).toEqual(['pick_color'])
    const call = tools(first.messages[1])
    expect(call.map((p) => [p.type, p.state, p.input, p.output])).toEqual([['tool-pick_color', 'input-available', { palette: 'sea' }, undefined]])
    let events = await log('ct1')
    const requested = events.filter((e) => e.type === 'tool/input-requested')
    expect(requested.map((e) => (e.data as { requests: unknown }).requests)).toEqual([{ output: { kind: 'client' } }])
    expect(events.some((e) => e.type === 'tool/input-provided' || e.type === 'tool/result')).toBe(false)
    expect(events.at(-1)!.type).toBe('step/parked')

    // a reload: a new client from the history, resuming the open turn; the call is still waiting
    const before = await history('ct1')
    expect(plain(before)).toEqual(plain(first.messages))
    const again: string[] = []
    const chat = new NodeChat({ id: 'ct1', api: `${served.url}/chat`, messages: before, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls, onToolCall: ({ toolCall }) => { again.push(toolCall.toolCallId) } })
    await chat.resumeStream()
    expect(chat.status).toBe('ready')
    expect(again).toEqual([call[0]!.toolCallId])
    expect(tools(chat.messages[1]).map((p) => p.state)).toEqual(['input-available'])

    // the client runs the tool and answers; sendAutomaticallyWhen posts the answer
    await chat.addToolOutput({ tool: 'pick_color', toolCallId: call[0]!.toolCallId, output: { color: 'blue' } })
    await until(() => chat.status === 'ready' && texts(chat.messages[1]) === FINAL)
    expect(chat.error).toBeUndefined()
    expect(chat.messages.map((m) => m.id)).toEqual([chat.messages[0]!.id, 'turn-1'])
    expect(tools(chat.messages[1]).map((p) => [p.state, p.output])).toEqual([['output-available', { color: 'blue' }]])
    expect(asked).toEqual(['write', 'read', 'read', 'decide']) // the history and the resume read

    events = await log('ct1')
    expect(events.filter((e) => e.type === 'user/message').length).toBe(1)
    const provided = events.filter((e) => e.type === 'tool/input-provided')
    expect(provided.map((e) => [(e.data as { answer: unknown }).answer, (e.data as { by: unknown }).by])).toEqual([[{ action: 'accept', responses: { output: { color: 'blue' } } }, { kind: 'user' }]])
    const result = events.findIndex((e) => e.type === 'tool/result')
    expect(provided[0]!.seq).toBeLessThan(events[result]!.seq)
    expect((events[result]!.data as { error?: unknown }).error).toBeUndefined()
    expect(events.at(-1)!.type).toBe('turn/end')
    // the history says the same, part for part
    expect(plain(await history('ct1'))).toEqual(plain(chat.messages))

    // a resend of the same answer (another tab, a retry) is not an error and logs nothing
    const resend = await post({ id: 'ct1', messages: withOutput(before, { color: 'blue' }), trigger: 'submit-message', messageId: 'turn-1' })
    expect(resend.status).toBe(200)
    await resend.text()
    expect((await log('ct1')).length).toBe(events.length)
    // another answer to the answered call: 409 INPUT_ANSWERED, nothing logged
    const other = await post({ id: 'ct1', messages: withOutput(before, { color: 'red' }), trigger: 'submit-message', messageId: 'turn-1' })
    expect(other.status).toBe(409)
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe('INPUT_ANSWERED')
    expect((await log('ct1')).length).toBe(events.length)
  })

  it('L21 an output that does not fit the tool\'s output schema is 400 INVALID_INPUT naming the field, nothing logged; a valid one then answers', async () => {
    const chat = new NodeChat({ id: 'ct2', api: `${served.url}/chat` })
    await chat.sendMessage({ text: 'Pick a colour for the page' })
    const n = (await log('ct2')).length
    const bad = await post({ id: 'ct2', messages: withOutput(chat.messages, { colour: 7 }), trigger: 'submit-message', messageId: 'turn-1' })
    expect(bad.status).toBe(400)
    const err = ((await bad.json()) as { error: { code: string; field?: string } }).error
    expect(err).toMatchObject({ code: 'INVALID_INPUT', field: 'responses.output' })
    expect((await log('ct2')).length).toBe(n)
    const good = await post({ id: 'ct2', messages: withOutput(chat.messages, { color: 'green' }), trigger: 'submit-message', messageId: 'turn-1' })
    expect(good.status).toBe(200)
    expect(await good.text()).toContain(FINAL.slice(0, 4))
    await until(async () => (await log('ct2')).at(-1)!.type === 'turn/end')
  })

  it('L21 an output-error from the client declines the round: the call gets DENIED, the turn goes on', async () => {
    const chat = new NodeChat({ id: 'ct3', api: `${served.url}/chat`, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls })
    await chat.sendMessage({ text: 'Pick a colour for the page' })
    const callId = tools(chat.messages[1])[0]!.toolCallId
    await chat.addToolOutput({ state: 'output-error', tool: 'pick_color', toolCallId: callId, errorText: 'the picker was closed' })
    await until(() => chat.status === 'ready' && texts(chat.messages[1]) === FINAL)
    const events = await log('ct3')
    expect(events.filter((e) => e.type === 'tool/input-provided').map((e) => (e.data as { answer: unknown }).answer)).toEqual([{ action: 'decline' }])
    expect(events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { error?: { code: string } }).error?.code)).toEqual(['DENIED'])
    expect(tools(chat.messages[1]).map((p) => p.state)).toEqual(['output-error'])
    expect(plain(await history('ct3'))).toEqual(plain(chat.messages))
  })
})
