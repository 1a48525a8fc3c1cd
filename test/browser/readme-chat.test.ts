/**
 * README "Show a session in your app": the `useChat` component is taken from the README's text
 * (the ```tsx block of that section, byte for byte), compiled by vite (esbuild, the automatic JSX
 * runtime) into a page with a two-line harness that renders `<Chat id=…/>`, and run in Debian's
 * Chromium against turnlog/http under the README's `/api` base path. So the README cannot drift:
 * type, reload mid-answer (the history and the answer still being written come back), Stop; and
 * its approval buttons: a tool that needs approval parks the turn, the page is reloaded, Deny
 * answers it and the answer finishes.
 * `ai` resolves to the copy `@ai-sdk/react` depends on (an app that installs `ai@6` and
 * `@ai-sdk/react` gets one copy).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { build } from 'vite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { sessionHandler, toNodeListener, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { Gate, tempDir, until } from '../http/helpers.js'
import { hasChromium, launch, type Launched } from './chromium.js'

// the page functions run in Chromium; the project's tsconfig has no DOM lib
declare const document: { querySelectorAll(s: string): ArrayLike<{ textContent: string | null; querySelector(s: string): { textContent: string | null } | null }> }

const ROOT = join(import.meta.dirname, '..', '..')
const ANSWER = 'It is sunny in Paris today, twenty-one degrees, with a light breeze.'
const NOT_PAID = 'Understood, I did not pay it.'
const run = hasChromium() ? describe : describe.skip

/** The README's useChat component, as written. */
export function readmeComponent(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const at = readme.indexOf('## Show a session in your app')
  const end = readme.indexOf('\n## ', at + 1)
  expect(at).toBeGreaterThan(0)
  const m = /```tsx\n([\s\S]*?)```/.exec(readme.slice(at, end))
  expect(m).not.toBeNull()
  return m![1]!
}

const HARNESS = `import { createRoot } from 'react-dom/client'
import { Chat } from './Chat.tsx'
createRoot(document.getElementById('root')!).render(<Chat id={new URLSearchParams(location.search).get('chat')!} />)
`

run('the README useChat component, compiled from the README, in Chromium', () => {
  let tmp: ReturnType<typeof tempDir>
  // inside the repository so the page resolves react, @ai-sdk/react from its node_modules
  const src = join(ROOT, 'node_modules', '.cache', `turnlog-readme-chat-${process.pid}`)
  let handler: SessionHandler
  let server: Server
  let base = ''
  let chromium: Launched
  const gate = new Gate()
  const paid: number[] = []
  const pay = defineTool({
    name: 'pay', description: 'pay an invoice', parameters: z.object({ cents: z.number().int() }), needsApproval: true,
    execute: (a) => { paid.push(a.cents); return `paid ${a.cents}` },
  }) as AnyTool

  beforeAll(async () => {
    tmp = tempDir()
    mkdirSync(src, { recursive: true })
    writeFileSync(join(src, 'Chat.tsx'), readmeComponent())
    writeFileSync(join(src, 'main.tsx'), HARNESS)
    writeFileSync(join(src, 'index.html'), '<!doctype html><html><head><meta charset="utf-8"><title>README chat</title></head><body><div id="root"></div><script type="module" src="./main.tsx"></script></body></html>')
    const outDir = join(tmp.dir, 'page')
    await build({
      configFile: false, logLevel: 'silent', root: src, mode: 'production',
      // vitest runs with NODE_ENV=test, which would pick React's dev JSX runtime
      esbuild: { jsx: 'automatic', jsxDev: false },
      resolve: { alias: { ai: join(ROOT, 'node_modules/@ai-sdk/react/node_modules/ai') } },
      define: { 'process.env.NODE_ENV': '"production"' },
      build: { outDir, emptyOutDir: true, minify: false, target: 'es2022' },
    })
    handler = sessionHandler({
      store: jsonlStore(join(tmp.dir, 'sessions')), authorize: () => true, basePath: '/api', pollMs: 20,
      agent: (sessionId) => sessionId.startsWith('approve')
        ? { tools: [pay], model: scriptedModel([{ toolCalls: [{ name: 'pay', args: { cents: 4200 } }] }, { text: NOT_PAID }]) }
        : { model: scriptedModel(() => ({ text: ANSWER, chunkSize: 6 }), { beforeChunk: gate.wait }) },
    })
    const api = toNodeListener(handler)
    server = createServer((req, res) => {
      if (req.url?.startsWith('/api/')) return api(req, res)
      const path = (req.url ?? '/').split('?')[0]!
      const file = join(outDir, path === '/' ? 'index.html' : path)
      if (!file.startsWith(outDir)) { res.writeHead(404); res.end(); return }
      try {
        const body = readFileSync(file)
        res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : 'text/html' })
        res.end(body)
      } catch {
        res.writeHead(404)
        res.end()
      }
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    chromium = await launch()
  }, 120_000)

  afterAll(async () => {
    gate.release(Infinity)
    await chromium?.close()
    server?.closeAllConnections()
    await new Promise<void>((r) => server ? server.close(() => r()) : r())
    await handler?.close()
    tmp?.remove()
    rmSync(src, { recursive: true, force: true })
  })

  it('H5 the README component as written: type a message, reload mid-answer and see it finish, Stop cancels the next answer', async () => {
    const page = await chromium.browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(String(e)))
    // the component renders each message as <p><b>role:</b> text</p>
    const lines = (role: string): Promise<string[]> => page.evaluate((r) => Array.from(document.querySelectorAll('p'))
      .filter((p) => p.querySelector('b')?.textContent === `${r}:`)
      .map((p) => (p.textContent ?? '').slice(r.length + 1).trim()), role)
    await page.goto(`${base}/?chat=readme-b1`)
    await page.fill('input', 'Weather in Paris?')
    await page.press('input', 'Enter')
    gate.release(3)
    await until(async () => ((await lines('assistant'))[0] ?? '').length > 0)
    const partial = (await lines('assistant'))[0]!
    expect(ANSWER.startsWith(partial) && partial.length < ANSWER.length).toBe(true)
    await page.reload()
    await until(async () => (await lines('user')).length === 1)
    gate.release(Infinity)
    await until(async () => (await lines('assistant')).join('|') === ANSWER)
    expect(await lines('user')).toEqual(['Weather in Paris?'])
    // Stop (shown while streaming) posts /api/chat/:id/stop: the turn is cancelled
    gate.close()
    await page.fill('input', 'And tomorrow?')
    await page.press('input', 'Enter')
    gate.release(3)
    await until(async () => ((await lines('assistant'))[1] ?? '').length > 0)
    await page.click('button:text-is("Stop")')
    await until(async () => (await page.locator('button').count()) === 0)
    const cut = (await lines('assistant'))[1]!
    expect(cut.length).toBeLessThan(ANSWER.length)
    const log = (await (await fetch(`${base}/api/sessions/readme-b1`)).json()) as Array<{ type: string; data: { reason?: { kind: string } } }>
    expect(log.filter((e) => e.type === 'turn/end').map((e) => e.data.reason!.kind)).toEqual(['completed', 'aborted'])
    await page.reload()
    await until(async () => (await lines('assistant')).length === 2)
    expect((await lines('assistant'))[1]).toBe(cut)
    expect(errors).toEqual([])
  }, 120_000)

  it('H8 the README component as written answers an approval: the turn parks, reload, Deny, the answer finishes without running the tool', async () => {
    const page = await chromium.browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(String(e)))
    await page.goto(`${base}/?chat=approve-readme-1`)
    await page.fill('input', 'Pay invoice 42')
    await page.press('input', 'Enter')
    const deny = page.locator('button:text-is("Deny")')
    await until(async () => (await deny.count()) === 1)
    await page.reload()
    await until(async () => (await deny.count()) === 1 && (await page.locator('button:text-is("Approve")').count()) === 1)
    await deny.click()
    await until(async () => ((await page.locator('p').last().textContent()) ?? '').includes(NOT_PAID))
    expect(await deny.count()).toBe(0)
    expect(paid).toEqual([])
    const log = (await (await fetch(`${base}/api/sessions/approve-readme-1`)).json()) as Array<{ type: string; data: { decision?: unknown; error?: { code: string } } }>
    expect(log.filter((e) => e.type === 'tool/approval-decided').map((e) => e.data.decision)).toEqual([{ kind: 'deny', reason: 'No' }])
    expect(log.filter((e) => e.type === 'tool/result').map((e) => e.data.error?.code)).toEqual(['DENIED'])
    expect(errors).toEqual([])
  }, 120_000)
})
