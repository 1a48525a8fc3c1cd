/**
 * `turnlog serve STORE`: turnlog/http on 127.0.0.1 for development. Read-only without --agent; with
 * --agent MODULE (a plain module: its default export gives each session's agent options) the AI
 * SDK chat works; requests whose Host is not the loopback address are refused (DNS rebinding).
 */
import { writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { serveCommand } from '../../cli/commands/serve.js'
import { tempDir } from '../http/helpers.js'
import { NodeChat } from '../http/chat-client.js'

let tmp: ReturnType<typeof tempDir> | null = null
afterEach(() => { tmp?.remove(); tmp = null })

const io = () => {
  const out: string[] = []
  return { out, io: { stdout: (t: string) => { out.push(t) }, stderr: (t: string) => { out.push(t) } } }
}

const AGENT_MODULE = `
export default () => ({
  model: {
    async *stream() {
      yield { type: 'block-start', index: 0, blockType: 'text' }
      yield { type: 'text-delta', index: 0, text: 'Hello from serve.' }
      yield { type: 'block-end', index: 0 }
      yield { type: 'finish', reason: 'stop' }
    },
  },
})
`

describe('turnlog serve', () => {
  it('with --agent: the AI SDK chat runs a session in the JSONL directory; the log is then readable as a Durable Stream', async () => {
    tmp = tempDir()
    const mod = join(tmp.dir, 'agent.mjs')
    writeFileSync(mod, AGENT_MODULE)
    const { out, io: cli } = io()
    const code = await serveCommand(tmp.dir, {
      port: '0', agent: mod,
      onListening: async (url) => {
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
        const chat = new NodeChat({ id: 'dev-1', api: `${url}/chat` })
        await chat.sendMessage({ text: 'hi' })
        expect(chat.messages[1]!.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['Hello from serve.'])
        const log = (await (await fetch(`${url}/sessions/dev-1`)).json()) as Array<{ type: string }>
        expect(log.at(-1)!.type).toBe('turn/end')
        // DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends its own Host
        // (fetch may not set Host: node:http can)
        const status = await new Promise<number>((ok, fail) => {
          request(`${url}/sessions/dev-1`, { headers: { host: 'evil.example' } }, (res) => { res.resume(); ok(res.statusCode!) }).on('error', fail).end()
        })
        expect(status).toBe(403)
      },
    }, cli)
    expect(code).toBe(0)
    expect(out.join('')).toMatch(/127\.0\.0\.1 only; chat with --agent/)
  })

  it('without --agent it only reads: POST /chat is 405 READ_ONLY; a bad --agent module is a coded error', async () => {
    tmp = tempDir()
    const { io: cli } = io()
    await serveCommand(tmp.dir, {
      port: '0',
      onListening: async (url) => {
        const r = await fetch(`${url}/chat`, { method: 'POST', body: '{}' })
        expect(r.status).toBe(405)
        expect(((await r.json()) as { error: { code: string } }).error.code).toBe('READ_ONLY')
        expect((await fetch(`${url}/sessions/none`)).status).toBe(404)
      },
    }, cli)
    const bad = join(tmp.dir, 'bad.mjs')
    writeFileSync(bad, 'export default 42\n')
    await expect(serveCommand(tmp.dir, { port: '0', agent: bad }, cli)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
  })
})
