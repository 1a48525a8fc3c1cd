// Issue "See a session", item 2: `turnlog inspect` serves the page on 127.0.0.1 and follows a log an
// agent is still writing (live tail by seq over SSE): the agent's next turn appears in the page.
import { join } from 'node:path'
import { z } from 'zod'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import { scriptedModel } from '../../models/scripted.js'
import { defineTool } from '../../tools/define.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { startInspector } from '../../cli/inspect-server.js'
import { tempDir } from '../cli/helpers.js'
import { hasChromium, launch, watchedPage, type Launched } from './chromium.js'

declare const document: any // eslint-disable-line @typescript-eslint/no-explicit-any

const run = hasChromium() ? describe : describe.skip

run('turnlog inspect: live tail in Chromium', () => {
  let b: Launched
  const tmp = tempDir()
  beforeAll(async () => { b = await launch() })
  afterAll(async () => {
    await b?.close()
    tmp.cleanup()
  })

  it('an agent appends a turn to the JSONL file; the page shows it without a reload; only 127.0.0.1 is asked', async () => {
    const weather = defineTool({
      name: 'weather', description: 'Current weather for a city', parameters: z.object({ city: z.string() }),
      isConcurrencySafe: () => true, execute: async ({ city }) => ({ city, tempC: 21 }),
    })
    const agent = createAgent({
      model: scriptedModel([
        { toolCalls: [{ name: 'weather', args: { city: 'Paris' } }] },
        { text: 'It is 21 °C in Paris.' },
        { text: 'And 18 °C in Lyon.' },
      ]),
      tools: [weather],
      store: jsonlStore(tmp.dir),
      sessionId: 'live',
    })
    agent.followup('What is the weather in Paris?')
    await agent.whenIdle()
    await agent.flush() // durable: the file holds turn 1
    const inspector = await startInspector({ file: join(tmp.dir, 'live.jsonl'), pollMs: 50 })
    try {
      expect(inspector.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
      const w = await watchedPage(b.browser, (url) => url.startsWith(inspector.url))
      await w.page.goto(inspector.url)
      await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
      expect(await w.page.textContent('[data-testid="counts"]')).toMatch(/ 1 turn$/)
      expect(await w.page.textContent('[data-testid="live"]')).toContain('live')
      agent.followup('And in Lyon?')
      await agent.whenIdle()
      await agent.flush()
      await agent.dispose()
      await w.page.waitForFunction(() => / 2 turns$/.test(document.querySelector('[data-testid="counts"]').textContent), null, { timeout: 60_000 })
      // following the tail: the selection moved to the new last event, whose state is the end of turn 2
      const count = inspector.events.length
      await w.page.waitForFunction((n: number) => document.body.dataset.seq === String(n - 1), count, { timeout: 30_000 })
      expect(await w.page.textContent('.vlist[aria-label="transcript"]')).toContain('Turn 2')
      expect(w.outside).toEqual([])
      expect(w.errors).toEqual([])
    } finally {
      await inspector.close()
    }
  })

  it('refuses a request whose Host is not the loopback address (DNS rebinding)', async () => {
    const tmp2 = tempDir()
    const file = join(tmp2.dir, 'x.jsonl')
    const { writeFileSync } = await import('node:fs')
    writeFileSync(file, '{"type":"session","format":1,"id":"x","createdAt":1}\n')
    const inspector = await startInspector({ file })
    try {
      const http = await import('node:http')
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: inspector.port, path: '/', headers: { host: `evil.example:${inspector.port}` } }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on('error', reject)
        req.end()
      })
      expect(status).toBe(403)
      const ok = await fetch(inspector.url)
      expect(ok.status).toBe(200)
      expect(await ok.text()).toContain('"mode":"live"')
    } finally {
      await inspector.close()
      tmp2.cleanup()
    }
  })
})
