/**
 * Issue 38 item 25: `turnlog/http` releases a session when its last reader or writer leaves.
 * Reading many sessions once (history, catch-up, HEAD, long-poll, a live follow that ends, a chat
 * resume) leaves the handler holding none of them; chats leave at most `idleAgents` idle agents
 * (0: none), and a released chat still answers its next message (resumed from its log).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import { formatOffset, sessionHandler, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { NodeChat } from './chat-client.js'
import { allow, serve, tempDir, until, type Served } from './helpers.js'

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

async function start(opts: { idleAgents?: number } = {}): Promise<{ url: string; handler: SessionHandler }> {
  const handler = sessionHandler({ chatIdInBody: true, store, authorize: allow, pollMs: 10, longPollMs: 50, sseMaxMs: 100, agent: () => ({ model: scriptedModel(() => ({ text: 'Sunny.' })) }), ...opts })
  const served: Served = await serve(handler)
  closers.push(() => handler.close(), () => served.close())
  return { url: served.url, handler }
}

describe('sessions are released when their last reader or writer leaves (issue 38 item 25)', () => {
  it('reading 30 sessions every way leaves none held', async () => {
    const ids: string[] = []
    for (let i = 0; i < 30; i++) {
      const id = `s${i}`
      const a = createAgent({ model: scriptedModel([{ text: 'It is sunny.' }]), store, sessionId: id })
      a.followup('Weather?')
      await a.whenIdle()
      await a.dispose()
      ids.push(id)
    }
    const { url, handler } = await start()
    for (const id of ids) {
      expect((await fetch(`${url}/chat/${id}/messages`)).status).toBe(200)
      const log = await fetch(`${url}/sessions/${id}?offset=-1`)
      const n = ((await log.json()) as unknown[]).length
      expect((await fetch(`${url}/sessions/${id}`, { method: 'HEAD' })).status).toBe(200)
      expect((await fetch(`${url}/sessions/${id}?offset=${formatOffset(n)}&live=long-poll`)).status).toBe(204)
      // a live follow that ends (sseMaxMs), read to its end
      await (await fetch(`${url}/sessions/${id}?offset=-1&live=sse`)).text()
      expect((await fetch(`${url}/chat/${id}/stream`)).status).toBe(204)
    }
    await until(() => handler.held().tails === 0)
    expect(handler.held()).toEqual({ tails: 0, agents: 0 })
  })

  it('chats: idle agents beyond idleAgents are released; with 0 none stay; a released chat answers its next message', async () => {
    const { url, handler } = await start({ idleAgents: 0 })
    for (let i = 0; i < 12; i++) {
      const chat = new NodeChat({ id: `c${i}`, api: `${url}/chat` })
      await chat.sendMessage({ text: 'Weather?' })
      expect(chat.status).toBe('ready')
    }
    await until(() => handler.held().agents === 0 && handler.held().tails === 0)
    const again = new NodeChat({ id: 'c3', api: `${url}/chat`, messages: (await (await fetch(`${url}/chat/c3/messages`)).json()) as never })
    await again.sendMessage({ text: 'And tomorrow?' })
    expect(again.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(again.messages[3]!.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['Sunny.'])

    const bounded = await start({ idleAgents: 3 })
    for (let i = 0; i < 8; i++) await new NodeChat({ id: `b${i}`, api: `${bounded.url}/chat` }).sendMessage({ text: 'Weather?' })
    await until(() => bounded.handler.held().agents <= 3)
    expect(bounded.handler.held().agents).toBeLessThanOrEqual(3)
  })
})
