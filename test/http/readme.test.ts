/**
 * README "Show a session in your app": the server block runs as written (imports pointed at this
 * repository's sources, the directory and port made free, the server exported so the test can
 * close it), and the stock AI SDK 6 chat client talks to it under the README's `/api` base path.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { NodeChat } from './chat-client.js'

const ROOT = join(import.meta.dirname, '..', '..')

function serverBlock(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const at = readme.indexOf('## Show a session in your app')
  expect(at).toBeGreaterThan(0)
  const m = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))
  expect(m).not.toBeNull()
  return m![1]!
}

describe('README: Show a session in your app', () => {
  it('the node:http server block works as written with the AI SDK chat client (send, history)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnlog-readme-http-'))
    try {
      let code = serverBlock()
      expect(code).toContain("authorize: (req, sessionId, action) => true")
      code = code
        .replace("from 'turnlog/stores/jsonl'", `from '${join(ROOT, 'stores/jsonl/index.ts')}'`)
        .replace("from 'turnlog/http'", `from '${join(ROOT, 'http/index.ts')}'`)
        .replace("from 'turnlog'", `from '${join(ROOT, 'index.ts')}'`)
        .replace("jsonlStore('./sessions')", `jsonlStore(${JSON.stringify(join(dir, 'sessions'))})`)
        .replace('createServer(toNodeListener(handler)).listen(3000, ', 'export const server = createServer(toNodeListener(handler)); export { handler }; server.listen(0, ')
      expect(code).toContain('server.listen(0, ')
      const file = join(dir, 'server.ts')
      writeFileSync(file, code)
      const mod = (await import(file)) as { server: Server; handler: { close(): Promise<void> } }
      await new Promise<void>((r) => (mod.server.listening ? r() : mod.server.once('listening', () => r())))
      const { port } = mod.server.address() as AddressInfo
      try {
        // posts to /api/chat/:id, as the README's Chat.tsx does (prepareSendMessagesRequest)
        const chat = new NodeChat({ id: 'readme-1', api: `http://127.0.0.1:${port}/api/chat`, idInPath: true })
        await chat.sendMessage({ text: 'Weather in Paris?' })
        await chat.sendMessage({ text: 'And tomorrow?' })
        const answers = chat.messages.filter((m) => m.role === 'assistant').map((m) => m.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join(''))
        expect(answers).toEqual(['Sunny in Paris, 21 °C.', 'Sunny in Paris, 21 °C.'])
        const history = (await (await fetch(`http://127.0.0.1:${port}/api/chat/readme-1/messages`)).json()) as Array<{ id: string }>
        expect(history.map((m) => m.id)).toEqual(chat.messages.map((m) => m.id))
      } finally {
        mod.server.closeAllConnections()
        await new Promise<void>((r) => mod.server.close(() => r()))
        await mod.handler.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
