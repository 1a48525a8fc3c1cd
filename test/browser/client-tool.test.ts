/**
 * A client tool (docs/spec/lifecycle.md §11) answered in Debian's Chromium by the stock `useChat`
 * (@ai-sdk/react 3 with AI SDK 6, and @ai-sdk/react 4 with AI SDK 7, React 19) through the AI SDK's
 * client-side tool flow: the page (test/browser/fixtures/client-tool, built with vite once per
 * major) sends a message, the model calls the client tool `pick_color`, the turn parks on its round
 * and the page shows the call waiting (`input-available`, seen by `onToolCall`); the page is
 * reloaded, the call is still waiting (history + resumed stream) and nothing was answered; a click
 * answers it with `addToolOutput`, `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls`
 * posts it, the server logs the answer (`tool/input-provided`, by the user) and the answer finishes.
 */
import { readFileSync } from 'node:fs'
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
import { tempDir, until } from '../http/helpers.js'
import { hasChromium, launch, type Launched } from './chromium.js'

const ROOT = join(import.meta.dirname, '..', '..')
const FINAL = 'Blue it is: the page is repainted.'
const MAJORS = [
  { react: 3, ai: 6, reactDir: 'node_modules/@ai-sdk/react', aiDir: 'node_modules/@ai-sdk/react/node_modules/ai' },
  { react: 4, ai: 7, reactDir: 'node_modules/ai-sdk-react4', aiDir: 'node_modules/ai-sdk-react4/node_modules/ai' },
] as const

;(hasChromium() ? describe.each(MAJORS) : describe.skip.each(MAJORS))('a client tool in useChat (@ai-sdk/react $react, ai $ai) in Chromium', (major) => {
  let tmp: ReturnType<typeof tempDir>
  let handler: SessionHandler
  let server: Server
  let base = ''
  let chromium: Launched

  beforeAll(async () => {
    tmp = tempDir()
    const outDir = join(tmp.dir, 'page')
    await build({
      configFile: false, logLevel: 'silent', root: join(ROOT, 'test/browser/fixtures/client-tool'),
      resolve: { alias: { '@ai-sdk/react': join(ROOT, major.reactDir), ai: join(ROOT, major.aiDir) } },
      define: { 'process.env.NODE_ENV': '"production"' },
      build: { outDir, emptyOutDir: true, minify: false, target: 'es2022' },
    })
    const pickColor = defineTool({ name: 'pick_color', parameters: z.object({ palette: z.string() }), output: z.object({ color: z.string() }), client: true }) as AnyTool
    handler = sessionHandler({
      chatIdInBody: true,
      store: jsonlStore(join(tmp.dir, 'sessions')), authorize: () => true, basePath: '/api', pollMs: 20,
      agent: () => ({
        tools: [pickColor],
        model: scriptedModel((req) => req.messages.at(-1)?.role === 'tool' ? { text: FINAL, chunkSize: 6 } : { toolCalls: [{ name: 'pick_color', args: { palette: 'sea' } }] }),
      }),
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
    await chromium?.close()
    server?.closeAllConnections()
    await new Promise<void>((r) => server ? server.close(() => r()) : r())
    await handler?.close()
    tmp?.remove()
  })

  it('L21 R11 the call waits input-available across a reload, addToolOutput answers it once, the answer is logged and the message finishes', async () => {
    const chat = `ct-r${major.react}`
    const page = await chromium.browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(String(e)))
    await page.goto(`${base}/?chat=${chat}`)
    // the page's load effect (history, then resumeStream) first: under load a message sent before
    // it settled came back through that resume, and onToolCall saw the call twice
    await until(async () => (await page.evaluate(() => (globalThis as unknown as { loaded?: boolean }).loaded)) === true)
    await page.fill('input', 'Pick a colour for the page')
    await page.press('input', 'Enter')
    const pick = page.locator('button.pick')
    const tool = page.locator('span.tool')
    await until(async () => (await pick.count()) === 1 && (await page.locator('#status').innerText()) === 'ready')
    expect(await tool.first().getAttribute('data-state')).toBe('input-available')
    expect(await page.evaluate(() => (globalThis as unknown as { toolCalls: string[] }).toolCalls)).toEqual(['pick_color'])

    // reload between the call and the answer: the call is still waiting, from the log
    await page.reload()
    await until(async () => (await pick.count()) === 1 && (await page.locator('#status').innerText()) === 'ready')
    expect(await tool.first().getAttribute('data-state')).toBe('input-available')
    // the resumed stream showed the call again: the page's onToolCall saw it
    expect(await page.evaluate(() => (globalThis as unknown as { toolCalls: string[] }).toolCalls)).toEqual(['pick_color'])
    const read = async () => (await (await fetch(`${base}/api/sessions/${chat}`)).json()) as Array<{ type: string; seq: number; data: { answer?: unknown; by?: { kind: string }; reason?: { kind: string } } }>
    expect((await read()).some((e) => e.type === 'tool/input-provided')).toBe(false)

    await pick.click()
    const assistant = page.locator('p[data-role=assistant]')
    await until(async () => (await assistant.count()) === 1 && (await assistant.first().innerText()).includes(FINAL) && (await page.locator('#status').innerText()) === 'ready')
    expect(await tool.first().getAttribute('data-state')).toBe('output-available')
    expect(JSON.parse((await tool.first().getAttribute('data-output'))!)).toEqual({ color: 'blue' })
    expect(await pick.count()).toBe(0)
    const log = await read()
    expect(log.filter((e) => e.type === 'tool/input-provided').map((e) => [e.data.answer, e.data.by])).toEqual([[{ action: 'accept', responses: { output: { color: 'blue' } } }, { kind: 'user' }]])
    expect(log.findIndex((e) => e.type === 'tool/input-provided')).toBeLessThan(log.findIndex((e) => e.type === 'tool/result'))
    expect(log.filter((e) => e.type === 'user/message').length).toBe(1)
    expect(log.filter((e) => e.type === 'turn/end').map((e) => e.data.reason!.kind)).toEqual(['completed'])

    // after another reload: the answered call and the answer, no button
    await page.reload()
    await until(async () => (await assistant.count()) === 1 && (await assistant.first().innerText()).includes(FINAL))
    expect(await tool.first().getAttribute('data-state')).toBe('output-available')
    expect(await pick.count()).toBe(0)
    expect(errors).toEqual([])
  }, 120_000)
})
