/**
 * Issue 38 item 17: `turnlog serve --base-path /api` serves every route under the prefix, so the
 * README's `Chat.tsx` (`/api/chat`) talks to `turnlog serve` unchanged.
 */
import { writeFileSync } from 'node:fs'
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
      yield { type: 'text-delta', index: 0, text: 'Hello under /api.' }
      yield { type: 'block-end', index: 0 }
      yield { type: 'finish', reason: 'stop' }
    },
  },
})
`

describe('turnlog serve --base-path', () => {
  it('the chat and the session routes answer under the prefix (the README Chat.tsx uses /api/chat), not beside it', async () => {
    tmp = tempDir()
    const mod = join(tmp.dir, 'agent.mjs')
    writeFileSync(mod, AGENT_MODULE)
    const { out, io: cli } = io()
    const code = await serveCommand(tmp.dir, {
      port: '0', agent: mod, basePath: '/api',
      onListening: async (url) => {
        const chat = new NodeChat({ id: 'bp-1', api: `${url}/api/chat` })
        await chat.sendMessage({ text: 'hi' })
        expect(chat.messages[1]!.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['Hello under /api.'])
        expect((await fetch(`${url}/api/chat/bp-1/messages`)).status).toBe(200)
        expect((await fetch(`${url}/api/sessions/bp-1`)).status).toBe(200)
        expect((await fetch(`${url}/chat/bp-1/messages`)).status).toBe(404)
      },
    }, cli)
    expect(code).toBe(0)
    expect(out.join('')).toContain('/api/chat')
  })

  it('a base path that is not a path is a coded error', async () => {
    tmp = tempDir()
    const { io: cli } = io()
    for (const basePath of ['api', '/api?x', '/a/../b', '/a b']) {
      await expect(serveCommand(tmp.dir, { port: '0', basePath }, cli)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    }
  })
})
