/**
 * INSPECTOR (issue "See a session", item 4): the report page of a 1k- and a 100k-event log in
 * headless Chromium: first paint (navigation start → the first frame showing the state at the last
 * seq: timeline, transcript, state panels) and scrub time (select a random seq → state folded by the
 * reducers and every panel redrawn, measured in the page). Skipped with a message when
 * /usr/bin/chromium (or TURNLOG_CHROMIUM) is missing. Knobs: INSPECTOR_SCRUBS (default 30).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { renderPage } from '../cli/page.js'
import { envInt, median, round, type BenchResult } from './common.js'
import { generateEvents } from './gen-log.js'

type Log = (line: string) => void

export async function benchInspector(log: Log): Promise<Record<string, BenchResult>> {
  const exe = process.env.TURNLOG_CHROMIUM ?? '/usr/bin/chromium'
  if (!existsSync(exe)) {
    log(`  INSPECTOR: skipped: ${exe} is missing (apt-get install chromium)`)
    return { INSPECTOR: { value: 0, unit: 'ms', target: 'skipped', detail: { skipped: `${exe} is missing` } } }
  }
  const { chromium } = await import('playwright-core')
  const dir = mkdtempSync(join(tmpdir(), 'turnlog-bench-inspector-'))
  const browser = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: exe, headless: true, viewport: { width: 1440, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  const detail: Record<string, unknown> = {}
  try {
    for (const n of [1_000, 100_000]) {
      const events = generateEvents({ events: n })
      const html = await renderPage({ version: 1, mode: 'report', file: `bench-${n}.jsonl`, header: { id: 'bench' }, events })
      const file = join(dir, `r${n}.html`)
      writeFileSync(file, html)
      const page = await browser.newPage()
      await page.goto(pathToFileURL(file).href)
      await page.waitForFunction(() => (globalThis as any).document.body.dataset.firstPaintMs !== undefined, null, { timeout: 300_000 })
      const firstPaint = Number(await page.evaluate(() => (globalThis as any).document.body.dataset.firstPaintMs))
      await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready === '1', null, { timeout: 300_000 })
      const scrubs: number[] = []
      const roundTrips: number[] = []
      let x = 12345
      for (let i = 0; i < envInt('INSPECTOR_SCRUBS', 30); i++) {
        x = (x * 1103515245 + 12345) % 2147483648
        const seq = x % events.length
        const r = await page.evaluate(async (s: number) => {
          const g = globalThis as any
          const t = performance.now()
          g.turnlogInspector.select(s)
          await new Promise((res) => g.requestAnimationFrame(() => g.requestAnimationFrame(res)))
          return { show: g.turnlogInspector.lastShowMs as number, total: performance.now() - t }
        }, seq)
        scrubs.push(r.show)
        roundTrips.push(r.total)
      }
      scrubs.sort((a, b) => a - b)
      const row = {
        events: events.length, htmlKB: Math.round(html.length / 1024), firstPaintMs: round(firstPaint, 0),
        scrubMedianMs: round(median(scrubs), 1), scrubP95Ms: round(scrubs[Math.floor(scrubs.length * 0.95)] ?? 0, 1),
        scrubFrameMedianMs: round(median(roundTrips), 1),
      }
      detail[`${n}`] = row
      log(`  INSPECTOR ${n} events: first paint ${row.firstPaintMs} ms, scrub median ${row.scrubMedianMs} ms (p95 ${row.scrubP95Ms} ms)`)
      await page.close()
    }
  } finally {
    await browser.close()
    rmSync(dir, { recursive: true, force: true })
  }
  const big = detail['100000'] as { firstPaintMs: number }
  return { INSPECTOR: { value: big.firstPaintMs, unit: 'ms first paint, 100k events', target: '<= 5000', detail } }
}
