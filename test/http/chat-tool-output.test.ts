/**
 * Issue 38 item 6: a tool's output reaches the UI as the value the tool returned (as the AI SDK
 * sends it), not its JSON text: live, and in the history. The log keeps the value (`tool/result`
 * `json: true`: its one text block is the value's JSON); text outputs stay text.
 */
import type { UIMessage } from 'ai6'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { sessionHandler, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { memoryStore } from '../../stores/memory.js'
import type { LogStore } from '../../stores/types.js'
import { defineTool } from '../../tools/index.js'
import { NodeChat } from './chat-client.js'
import { allow, serve, type Served } from './helpers.js'

let store: LogStore
let handler: SessionHandler
let served: Served

beforeEach(async () => {
  store = memoryStore()
  const weather = defineTool({ name: 'weather', description: 'weather', parameters: z.object({ city: z.string() }), execute: ({ city }) => ({ city, tempC: 21 }) })
  const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ s: z.string() }), execute: ({ s }) => s })
  handler = sessionHandler({
    chatIdInBody: true,
    store, authorize: allow, pollMs: 10,
    agent: () => ({
      tools: [weather, echo],
      model: scriptedModel([{ toolCalls: [{ name: 'weather', args: { city: 'Paris' } }, { name: 'echo', args: { s: '{"a":1}' } }] }, { text: 'Sunny.' }]),
    }),
  })
  served = await serve(handler)
})
afterEach(async () => {
  await served.close()
  await handler.close()
})

const outputs = (m: UIMessage | undefined): unknown[] => (m?.parts ?? []).filter((p) => 'output' in p).map((p) => (p as { output: unknown }).output)

describe('tool output as the value the tool returned (issue 38 item 6)', () => {
  it('live and in the history: an object is the object; a string that looks like JSON stays a string; the log marks the JSON value', async () => {
    const chat = new NodeChat({ id: 't1', api: `${served.url}/chat` })
    await chat.sendMessage({ text: 'Weather in Paris?' })
    expect(outputs(chat.messages[1])).toEqual([{ city: 'Paris', tempC: 21 }, '{"a":1}'])
    const history = (await (await fetch(`${served.url}/chat/t1/messages`)).json()) as UIMessage[]
    expect(outputs(history[1])).toEqual([{ city: 'Paris', tempC: 21 }, '{"a":1}'])
    const r = await store.open('t1', 'read')
    const results = []
    for await (const e of r.events()) if (e.type === 'tool/result') results.push(e.data as { json?: true; message: { content: Array<{ text: string }> } })
    await r.close()
    expect(results.map((d) => [d.json, d.message.content[0]!.text])).toEqual([[true, '{"city":"Paris","tempC":21}'], [undefined, '{"a":1}']])
  })
})
