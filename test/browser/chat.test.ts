/**
 * `useChat` in Debian's Chromium against turnlog/http, with both majors a user may have: @ai-sdk/react
 * 3 (AI SDK 6) and @ai-sdk/react 4 (AI SDK 7, installed beside it as `ai-sdk-react4`; issue 33
 * item 3), React 19. The same small page (test/browser/fixtures/chat) is built here with vite once
 * per major, `@ai-sdk/react` and `ai` resolved to that major's copies. The page types a message, the page is reloaded
 * mid-answer and the answer finishes in the reloaded page (history + resume), then a stop; and a
 * tool that needs approval: the page is reloaded while the turn is parked, the Approve button is
 * there again (from /chat/:id/messages and the resumed stream), a click answers it and the answer
 * finishes. The model is gated, so "mid-answer" is an exact place. The screenshot is written to the temp dir;
 * `TURNLOG_SCREENSHOT=1` also writes docs/http-chat.png (as report.test.ts does docs/inspector.png).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
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

const ROOT = join(import.meta.dirname, '..', '..')
const ANSWER = 'It is sunny in Paris today, twenty-one degrees, with a light breeze.'
const PAID = 'Paid the invoice: 12.00 EUR.'
/** Each major: where its `@ai-sdk/react` is, and the `ai` that copy depends on (the root `ai` is 5.x, for the bridge's peers). */
const MAJORS = [
  { react: 3, ai: 6, reactDir: 'node_modules/@ai-sdk/react', aiDir: 'node_modules/@ai-sdk/react/node_modules/ai' },
  { react: 4, ai: 7, reactDir: 'node_modules/ai-sdk-react4', aiDir: 'node_modules/ai-sdk-react4/node_modules/ai' },
] as const

;(hasChromium() ? describe.each(MAJORS) : describe.skip.each(MAJORS))('useChat (@ai-sdk/react $react, ai $ai) in Chromium against turnlog/http', (major) => {
  let tmp: ReturnType<typeof tempDir>
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
    const outDir = join(tmp.dir, 'page')
    await build({
      configFile: false, logLevel: 'silent', root: join(ROOT, 'test/browser/fixtures/chat'),
      // this major's @ai-sdk/react and the `ai` it depends on
      resolve: { alias: { '@ai-sdk/react': join(ROOT, major.reactDir), ai: join(ROOT, major.aiDir) } },
      define: { 'process.env.NODE_ENV': '"production"' },
      build: { outDir, emptyOutDir: true, minify: false, target: 'es2022' },
    })
    handler = sessionHandler({
      chatIdInBody: true,
      store: jsonlStore(join(tmp.dir, 'sessions')), authorize: () => true, basePath: '/api', pollMs: 20,
      agent: (sessionId) => sessionId.includes('approve')
        ? { tools: [pay], model: scriptedModel([{ toolCalls: [{ name: 'pay', args: { cents: 1200 } }] }, { text: PAID, chunkSize: 6 }]) }
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
        res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : file.endsWith('.css') ? 'text/css' : 'text/html' })
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
  })

  it('the page is built with this major: its bundle parses the UI message stream of that `ai` (v7 added `reset-step`)', () => {
    const version = (JSON.parse(readFileSync(join(ROOT, major.aiDir, 'package.json'), 'utf8')) as { version: string }).version
    expect(version.startsWith(`${major.ai}.`)).toBe(true)
    const assets = join(tmp.dir, 'page', 'assets')
    const bundle = readdirSync(assets).filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(assets, f), 'utf8')).join('\n')
    expect(bundle).toContain('"tool-approval-request"')
    expect(bundle.includes('"reset-step"')).toBe(major.ai >= 7)
  })

  it('H5 type a message, reload mid-answer, the answer finishes in the reloaded page; stop cancels the next one', async () => {
    const page = await chromium.browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(String(e)))
    await page.goto(`${base}/?chat=r${major.react}-b1`)
    await until(async () => (await page.evaluate(() => (globalThis as unknown as { loaded?: boolean }).loaded)) === true)
    await page.fill('input', 'Weather in Paris?')
    await page.press('input', 'Enter')
    gate.release(3)
    const assistant = page.locator('p[data-role=assistant]')
    await until(async () => ((await assistant.count()) > 0 ? (await assistant.first().innerText()).length > 'assistant: '.length : false))
    const partial = (await assistant.first().innerText()).replace('assistant: ', '')
    expect(ANSWER.startsWith(partial) && partial.length < ANSWER.length).toBe(true)
    await page.reload()
    await until(async () => (await page.locator('p[data-role=user]').count()) === 1)
    gate.release(Infinity)
    await until(async () => (await assistant.count()) === 1 && (await assistant.first().innerText()) === `assistant: ${ANSWER}`)
    expect(await page.locator('p[data-role=user]').first().innerText()).toBe('user: Weather in Paris?')
    // the screenshot goes to the temp dir; docs/http-chat.png is rewritten only on request
    const png = await page.screenshot()
    expect(png.subarray(1, 4).toString()).toBe('PNG')
    writeFileSync(join(tmp.dir, 'http-chat.png'), png)
    if (process.env.TURNLOG_SCREENSHOT === '1' && major.react === 3) writeFileSync(join(ROOT, 'docs/http-chat.png'), png)
    // stop: the next answer is held mid-way; the Stop button (POST /chat/:id/stop) cancels the turn
    gate.close()
    await page.fill('input', 'And tomorrow?')
    await page.press('input', 'Enter')
    gate.release(3)
    await until(async () => (await assistant.count()) === 2 && (await assistant.nth(1).innerText()).length > 'assistant: '.length)
    await page.click('#stop')
    await until(async () => (await page.locator('#status').innerText()) === 'ready')
    const cut = (await assistant.nth(1).innerText()).replace('assistant: ', '')
    expect(cut.length).toBeLessThan(ANSWER.length)
    const log = (await (await fetch(`${base}/api/sessions/r${major.react}-b1`)).json()) as Array<{ type: string; data: { reason?: { kind: string } } }>
    expect(log.filter((e) => e.type === 'turn/end').map((e) => e.data.reason!.kind)).toEqual(['completed', 'aborted'])
    // the history after a reload shows the same cut answer
    await page.reload()
    await until(async () => (await assistant.count()) === 2)
    expect((await assistant.nth(1).innerText()).replace('assistant: ', '')).toBe(cut)
    expect(errors).toEqual([])
  }, 120_000)

  it('H8 approve a tool after a reload: the turn parks, the page is reloaded, the Approve button is back, a click runs the tool once and the answer finishes', async () => {
    const page = await chromium.browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(String(e)))
    await page.goto(`${base}/?chat=r${major.react}-approve-b1`)
    await until(async () => (await page.evaluate(() => (globalThis as unknown as { loaded?: boolean }).loaded)) === true)
    await page.fill('input', 'Pay my invoice')
    await page.press('input', 'Enter')
    const approve = page.locator('button.approve')
    await until(async () => (await approve.count()) === 1)
    expect(await page.locator('span.tool').first().getAttribute('data-state')).toBe('approval-requested')
    await until(async () => (await page.locator('#status').innerText()) === 'ready')
    // reload while parked: the request comes back from the history and the resumed stream
    await page.reload()
    await until(async () => (await approve.count()) === 1 && (await page.locator('#status').innerText()) === 'ready')
    expect(paid).toEqual([])
    const png = await page.screenshot()
    writeFileSync(join(tmp.dir, 'http-chat-approval.png'), png)
    if (process.env.TURNLOG_SCREENSHOT === '1' && major.react === 3) writeFileSync(join(ROOT, 'docs/http-chat-approval.png'), png)
    await approve.click()
    const assistant = page.locator('p[data-role=assistant]')
    await until(async () => (await assistant.count()) === 1 && (await assistant.first().innerText()).includes(PAID) && (await page.locator('#status').innerText()) === 'ready')
    expect(await page.locator('span.tool').first().getAttribute('data-state')).toBe('output-available')
    expect(await approve.count()).toBe(0)
    expect(paid).toEqual([1200])
    const log = (await (await fetch(`${base}/api/sessions/r${major.react}-approve-b1`)).json()) as Array<{ type: string; data: { decision?: { kind: string }; by?: { kind: string }; reason?: { kind: string } } }>
    expect(log.filter((e) => e.type === 'tool/approval-decided').map((e) => [e.data.decision!.kind, e.data.by!.kind])).toEqual([['approve', 'user']])
    expect(log.filter((e) => e.type === 'user/message').length).toBe(1)
    expect(log.filter((e) => e.type === 'turn/end').map((e) => e.data.reason!.kind)).toEqual(['completed'])
    // after another reload: the same answer, no button
    await page.reload()
    await until(async () => (await assistant.count()) === 1 && (await assistant.first().innerText()).includes(PAID))
    expect(await approve.count()).toBe(0)
    expect(errors).toEqual([])
  }, 120_000)
})
