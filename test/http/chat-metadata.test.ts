/**
 * Issue 38 item 11: the UI message stream carries `messageMetadata` on `start` (when the answer
 * began) and `finish` (model, usage, timing), so the stock client's `message.metadata` has them;
 * the history (`/chat/:id/messages`) carries the same metadata, from the log alone.
 */
import type { UIMessage } from 'ai6'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { sessionHandler, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { memoryStore } from '../../stores/memory.js'
import { NodeChat } from './chat-client.js'
import { allow, serve, type Served } from './helpers.js'

let handler: SessionHandler
let served: Served

beforeEach(async () => {
  handler = sessionHandler({
    chatIdInBody: true,
    store: memoryStore(), authorize: allow, pollMs: 10,
    agent: () => ({ model: scriptedModel([{ text: 'Sunny.', usage: { inputTokens: 12, outputTokens: 3 } }, { text: 'Rain.', usage: { inputTokens: 20, outputTokens: 2, reasoningTokens: 5 } }]) }),
  })
  served = await serve(handler)
})
afterEach(async () => {
  await served.close()
  await handler.close()
})

describe('message metadata (issue 38 item 11)', () => {
  it('start and finish carry when the answer began and ended, the model and the usage; the history has the same', async () => {
    const chat = new NodeChat({ id: 'm1', api: `${served.url}/chat` })
    await chat.sendMessage({ text: 'Weather?' })
    await chat.sendMessage({ text: 'Tomorrow?' })
    const [first, second] = chat.messages.filter((m) => m.role === 'assistant') as Array<UIMessage & { metadata: Record<string, unknown> }>
    expect(first!.metadata).toMatchObject({ model: expect.any(String), usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 } })
    expect(second!.metadata).toMatchObject({ usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27, reasoningTokens: 5 } })
    const m = first!.metadata as { createdAt: number; finishedAt: number; durationMs: number }
    expect(m.finishedAt).toBeGreaterThanOrEqual(m.createdAt)
    expect(m.durationMs).toBe(m.finishedAt - m.createdAt)
    const history = (await (await fetch(`${served.url}/chat/m1/messages`)).json()) as UIMessage[]
    expect(history.filter((x) => x.role === 'assistant').map((x) => x.metadata)).toEqual([first!.metadata, second!.metadata])
  })
})
