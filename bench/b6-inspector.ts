/**
 * INSPECTOR (issue "See a session", item 4): the report page of a 1k- and a 100k-event log in
 * headless Chromium. Measured in the page (ms since navigation start, inspector/src/main.ts marks):
 * - first paint: the first frame with the shell, the timeline, the tokens chart and the events
 *   list (before any fold of the log);
 * - state shown: the first frame with the state at the selected (last) seq;
 * - ready: checkpoints, transcript and verify done.
 * Scrub: select a random seq (alternately behind and ahead of the current one), then the state
 * folded by the reducers from the nearest checkpoint and every panel redrawn (`lastShowMs`);
 * medians and p95 per direction. The JS heap after a GC (CDP) shows what the checkpoints cost.
 * Skipped with a message when /usr/bin/chromium (or TURNLOG_CHROMIUM) is missing.
 * Knobs: INSPECTOR_SCRUBS (default 40), INSPECTOR_SIZES (default 1000,100000).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { renderPage } from '../cli/page.js'
import { envInt, median, round, type BenchResult } from './common.js'
import { generateEvents } from './gen-log.js'

type Log = (line: string) => void

const p95 = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] ?? 0
}

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
  const detail: Record<string, Record<string, number>> = {}
  const sizes = (process.env.INSPECTOR_SIZES ?? '1000,100000').split(',').map(Number).filter((n) => n > 0)
  try {
    for (const n of sizes) {
      const events = generateEvents({ events: n })
      const html = await renderPage({ version: 1, mode: 'report', file: `bench-${n}.jsonl`, header: { id: 'bench' }, events })
      const file = join(dir, `r${n}.html`)
      writeFileSync(file, html)
      const page = await browser.newPage()
      await page.goto(pathToFileURL(file).href)
      await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready === '1', null, { timeout: 300_000 })
      const marks = await page.evaluate(() => ({ ...(globalThis as any).document.body.dataset })) as Record<string, string>
      const cdp = await page.context().newCDPSession(page)
      await cdp.send('HeapProfiler.collectGarbage')
      const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }
      const back: number[] = []
      const fwd: number[] = []
      const frames: number[] = []
      let at = events.length - 1
      let x = 12345
      for (let i = 0; i < envInt('INSPECTOR_SCRUBS', 40); i++) {
        x = (x * 1103515245 + 12345) % 2147483648
        // alternate: a seq behind the current one, then one ahead
        const seq = i % 2 === 0 ? x % Math.max(1, at) : at + 1 + (x % Math.max(1, events.length - at - 1))
        const target = Math.min(events.length - 1, seq)
        const r = await page.evaluate(async (s: number) => {
          const g = globalThis as any
          const t = performance.now()
          g.turnlogInspector.select(s)
          await new Promise((res) => g.requestAnimationFrame(() => g.requestAnimationFrame(res)))
          return { show: g.turnlogInspector.lastShowMs as number, total: performance.now() - t }
        }, target)
        ;(target < at ? back : fwd).push(r.show)
        frames.push(r.total)
        at = target
      }
      const all = [...back, ...fwd]
      const row = {
        events: events.length, htmlKB: Math.round(html.length / 1024),
        firstPaintMs: round(Number(marks.firstPaintMs), 0), parsedMs: round(Number(marks.parsedMs), 0),
        stateShownMs: round(Number(marks.stateMs), 0), readyMs: round(Number(marks.verifiedMs), 0),
        scrubMedianMs: round(median(all), 1), scrubP95Ms: round(p95(all), 1),
        scrubBackMedianMs: round(median(back), 1), scrubBackP95Ms: round(p95(back), 1),
        scrubFwdMedianMs: round(median(fwd), 1), scrubFwdP95Ms: round(p95(fwd), 1),
        scrubFrameMedianMs: round(median(frames), 1),
        checkpoints: await page.evaluate(() => (globalThis as any).turnlogInspector.checkpoints as number),
        heapMB: round(heap.usedSize / 1048576, 1),
      }
      detail[`${n}`] = row
      log(`  INSPECTOR ${n} events: first paint ${row.firstPaintMs} ms, state ${row.stateShownMs} ms, ready ${row.readyMs} ms; scrub median ${row.scrubMedianMs} ms (p95 ${row.scrubP95Ms}); back ${row.scrubBackMedianMs}/${row.scrubBackP95Ms}, fwd ${row.scrubFwdMedianMs}/${row.scrubFwdP95Ms}; ${row.checkpoints} checkpoints, heap ${row.heapMB} MB, ${row.htmlKB} kB`)
      await page.close()
    }
  } finally {
    await browser.close()
    rmSync(dir, { recursive: true, force: true })
  }
  const big = detail['100000'] ?? Object.values(detail).pop()!
  return { INSPECTOR: { value: big.firstPaintMs!, unit: 'ms first paint, 100k events', target: '<= 3000', detail } }
}
