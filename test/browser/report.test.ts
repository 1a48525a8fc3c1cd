// Issue "See a session": the self-contained report in headless Chromium. R3/P2: the numbers the
// page shows at a seq equal Node's stateAt(events, seq); the page makes no request but file:/data:;
// log text is text (item 5).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readLog } from '../../replay/read-log.js'
import { stateAt } from '../../replay/replay.js'
import { templatePath } from '../../cli/page.js'
import { cli, ROOT, tempDir } from '../cli/helpers.js'
import { hasChromium, launch, watchedPage, type Launched, type Watched } from './chromium.js'

// the functions passed to page.evaluate run in the page; the test program has no DOM types
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any
declare const window: any
type HTMLElement = { dataset: Record<string, string>; textContent: string | null }

const WEATHER = join(ROOT, 'examples', 'weather.jsonl')
const run = hasChromium() ? describe : describe.skip
if (!hasChromium()) console.warn('browser tests skipped: /usr/bin/chromium is missing (apt-get install chromium)')

async function openReport(b: Launched, html: string): Promise<Watched> {
  const w = await watchedPage(b.browser)
  await w.page.goto(pathToFileURL(html).href)
  await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
  return w
}

/** What the page shows for the state at its selected seq. */
async function shown(w: Watched): Promise<Record<string, string>> {
  return w.page.evaluate(() => {
    const out: Record<string, string> = {}
    for (const el of document.querySelectorAll('[data-field]')) out[el.dataset.field!] = el.textContent ?? ''
    out.history = document.querySelector('[data-testid="history-count"]')!.dataset.count ?? ''
    out.nextTurn = document.querySelector('[data-testid="next-turn"]')!.dataset.count ?? ''
    out.nextStep = document.querySelector('[data-testid="next-step"]')!.dataset.count ?? ''
    out.pending = [...document.querySelectorAll('[data-testid="pending"] [data-callid]')].map((e) => e.dataset.callid).join(',')
    out.seq = document.body.dataset.seq ?? ''
    return out
  })
}

run('inspector report in Chromium', () => {
  let b: Launched
  const tmp = tempDir()
  beforeAll(async () => {
    expect(existsSync(templatePath()), 'run npm run build: the inspector template is missing').toBe(true)
    b = await launch()
  })
  afterAll(async () => {
    await b?.close()
    tmp.cleanup()
  })

  it('loads the demo log from file:// with no request but file:/data: and no console error; the state at several seqs equals stateAt (P2)', async () => {
    const out = join(tmp.dir, 'weather.html')
    const r = await cli(['report', WEATHER, '-o', out])
    expect(r.code, r.stderr).toBe(0)
    const w = await openReport(b, out)
    const { events } = await readLog(WEATHER)
    expect(await w.page.evaluate(() => window.turnlogInspector!.violations)).toBe(0)
    // keyboard: Home, then → to each seq in turn
    await w.page.keyboard.press('Home')
    let at = 0
    for (const seq of [0, 4, 7, 13, 14, 20, 25]) {
      while (at < seq) {
        await w.page.keyboard.press('ArrowRight')
        at++
      }
      await w.page.waitForFunction((s) => document.body.dataset.seq === String(s), seq)
      const st = stateAt(events, seq)
      const s = await shown(w)
      expect(s.seq).toBe(String(seq))
      expect(s['usage.requests']).toBe(String(st.usage.total.requests))
      expect(s['usage.inputTokens']).toBe(st.usage.total.inputTokens.toLocaleString('en-US'))
      expect(s['usage.outputTokens']).toBe(st.usage.total.outputTokens.toLocaleString('en-US'))
      expect(s.history).toBe(String(st.history.messages.length))
      expect(s.nextTurn).toBe(String(st.inbox.nextTurn.length))
      expect(s.nextStep).toBe(String(st.inbox.nextStep.length))
      expect(s.pending).toBe(st.lifecycle.pendingToolCalls.map((c) => c.callId).join(','))
      expect(s.openTurn).toBe(String(st.lifecycle.openTurn ?? '—'))
      expect(s.openStep).toBe(String(st.lifecycle.openStep ?? '—'))
    }
    // the scrubber and the seq box move it too
    await w.page.fill('[data-testid="seq-input"]', '5')
    await w.page.press('[data-testid="seq-input"]', 'Enter')
    await w.page.waitForFunction(() => document.body.dataset.seq === '5')
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })

  it('a click on a tool call bar selects it and shows its arguments and result; the raw event is its JSON', async () => {
    const out = join(tmp.dir, 'weather2.html')
    expect((await cli(['report', WEATHER, '-o', out, '--at', '0'])).code).toBe(0)
    const w = await openReport(b, out)
    const bars: Array<{ x: number; y: number; seq: number; kind: string }> = await w.page.evaluate(() => window.turnlogInspector!.bars())
    const tool = bars.find((x) => x.kind === 'tool')
    expect(tool, JSON.stringify(bars)).toBeDefined()
    await w.page.mouse.click(tool!.x, tool!.y)
    await w.page.waitForFunction((s) => document.body.dataset.seq === String(s), tool!.seq)
    expect(await w.page.textContent('[data-testid="tool-name"]')).toBe('weather')
    expect(JSON.parse((await w.page.textContent('[data-testid="tool-args"]'))!)).toEqual({ city: 'Paris' })
    expect(await w.page.textContent('[data-testid="tool-result"]')).toBe('{"city":"Paris","tempC":21}')
    const raw = JSON.parse((await w.page.textContent('[data-testid="raw"]'))!)
    expect(raw.type).toBe('tool/call')
    expect(raw.seq).toBe(tool!.seq)
    // the step machine is lit in runningTools while the call is pending
    expect(await w.page.getAttribute('[data-machine="step"]', 'data-state')).toBe('runningTools')
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })

  it('a screenshot of the demo session (tools, steering, a rejected prompt, a retry) is written (docs/inspector.png with TURNLOG_SCREENSHOT=1)', async () => {
    const demo = join(tmp.dir, 'demo.jsonl')
    expect((await cli(['demo', '--store', demo])).code).toBe(0)
    const out = join(tmp.dir, 'demo.html')
    expect((await cli(['report', demo, '-o', out])).code).toBe(0)
    const w = await openReport(b, out)
    const bars: Array<{ x: number; y: number; seq: number; kind: string }> = await w.page.evaluate(() => window.turnlogInspector!.bars())
    const tools = bars.filter((x) => x.kind === 'tool')
    expect(tools.length).toBeGreaterThan(1)
    await w.page.mouse.click(tools[1]!.x, tools[1]!.y)
    await w.page.waitForFunction((s: number) => document.body.dataset.seq === String(s), tools[1]!.seq)
    const png = await w.page.screenshot({ fullPage: false })
    expect(png.subarray(1, 4).toString()).toBe('PNG')
    writeFileSync(join(tmp.dir, 'inspector.png'), png)
    if (process.env.TURNLOG_SCREENSHOT === '1') {
      mkdirSync(join(ROOT, 'docs'), { recursive: true })
      writeFileSync(join(ROOT, 'docs', 'inspector.png'), png)
    }
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })

  it('item 5: <script>, <img onerror> and javascript: in messages, tool arguments, ids and tool names execute nothing and show as text', async () => {
    const payloads = {
      script: '<script>window.__xss = (window.__xss || 0) + 1</script>',
      img: '<img src=x onerror="window.__xss = (window.__xss || 0) + 1">',
      js: 'javascript:window.__xss=1',
      close: '</script><script>window.__xss=1</script>',
    }
    const lines = readFileSync(WEATHER, 'utf8').trim().split('\n')
    // every string of every event, at its own level (so JSON inside strings stays JSON)
    const swap = (v: string): string => {
      if (v === 'What is the weather in Paris?') return `${payloads.script} ${payloads.js}`
      if (v === 'It is 21 °C in Paris.') return payloads.img
      if (v === 'weather') return `w${payloads.img}`
      if (v === 'm1') return `m${payloads.js}`
      return v.replaceAll('call_1', `call${payloads.close}`).replaceAll('Paris', payloads.close)
    }
    const rewritten = lines.map((l, i) => (i === 0 ? l : JSON.stringify(JSON.parse(l, (_k, v) => (typeof v === 'string' ? swap(v) : v)))))
    const log = join(tmp.dir, 'xss.jsonl')
    writeFileSync(log, `${rewritten.join('\n')}\n`)
    const out = join(tmp.dir, 'xss.html')
    const r = await cli(['report', log, '-o', out])
    expect(r.code, r.stderr).toBe(0)
    const w = await openReport(b, out)
    // walk every seq so every panel renders every string
    for (let s = 0; s < rewritten.length - 1; s++) {
      await w.page.evaluate((x: number) => window.turnlogInspector!.select(x), s)
      await w.page.waitForFunction((x) => document.body.dataset.seq === String(x), s)
    }
    const res = await w.page.evaluate(() => ({
      xss: (window as unknown as { __xss?: number }).__xss,
      imgs: document.querySelectorAll('img').length,
      scripts: document.querySelectorAll('script').length,
      links: document.querySelectorAll('a[href]').length,
      text: document.body.textContent ?? '',
    }))
    expect(res.xss).toBeUndefined()
    expect(res.imgs).toBe(0)
    expect(res.scripts).toBe(2) // the data element and the page's own module
    expect(res.links).toBe(0)
    expect(res.text).toContain('<img src=x onerror=')
    expect(res.text).toContain('javascript:window.__xss=1')
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })
})
