// Issue 26 (golden sessions), item 3: `turnlog eval … --report OUT` in headless Chromium. P4 seen in
// the page: the golden and its re-run side by side, each a full timeline and event list, the first
// divergence marked in both and selected when the page opens; one selected seq in both panes; the
// page opens from file:// with no request and no console error.
import { mkdirSync } from 'node:fs'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeLog } from '../../replay/index.js'
import { writeEvalModules } from '../cli/eval-modules.js'
import { cli, tempDir } from '../cli/helpers.js'
import { twoTurnGolden } from '../evals/goldens.js'
import { hasChromium, launch, watchedPage, type Launched } from './chromium.js'
import { embedded } from './page-data.js'

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any
declare const window: any

const run = hasChromium() ? describe : describe.skip
if (!hasChromium()) console.warn('browser tests skipped: /usr/bin/chromium is missing (apt-get install chromium)')

run('turnlog eval --report in Chromium', () => {
  let b: Launched
  const tmp = tempDir()
  let out = ''
  let data: Record<string, any> = {}
  beforeAll(async () => {
    const dir = join(tmp.dir, 'goldens')
    mkdirSync(dir, { recursive: true })
    await writeLog(join(dir, 'weather.jsonl'), await twoTurnGolden())
    const { tools, model } = writeEvalModules(tmp.dir)
    out = join(tmp.dir, 'eval.html')
    const r = await cli(['eval', dir, '--model', model, '--tools', tools, '--report', out])
    expect(r.code, r.stdout + r.stderr).toBe(1)
    data = embedded(readFileSync(out, 'utf8'))
    b = await launch()
  })
  afterAll(async () => {
    await b?.close()
    tmp.cleanup()
  })

  it('P4: two full timelines side by side (golden left, re-run right), the first divergence marked in both and selected; no request, no error', async () => {
    const d = data.divergence as { seq: number; kind: string }
    const golden = data.events as unknown[]
    const rerun = data.compare.events as unknown[]
    expect(golden.length).not.toBe(rerun.length) // the model under test answers at once: a shorter log
    const w = await watchedPage(b.browser)
    await w.page.goto(pathToFileURL(out).href)
    await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
    await w.page.waitForFunction((s: number) => document.body.dataset.seq === String(s), d.seq, { timeout: 60_000 })
    expect(await w.page.evaluate(() => [window.turnlogInspector.seq, window.turnlogInspector.compareSeq])).toEqual([d.seq, d.seq])
    // side by side: one row, the golden left of the re-run, each with its own timeline and list
    const [gl, rr] = await Promise.all([w.page.locator('[data-testid="compare-golden"]').boundingBox(), w.page.locator('[data-testid="compare-rerun"]').boundingBox()])
    expect(gl!.x + gl!.width).toBeLessThanOrEqual(rr!.x)
    expect(Math.abs(gl!.y - rr!.y)).toBeLessThan(1)
    for (const [role, n] of [['golden', golden.length], ['rerun', rerun.length]] as const) {
      const pane = w.page.locator(`[data-testid="compare-${role}"]`)
      expect(await pane.locator('canvas.timeline').count()).toBe(1)
      expect((await pane.locator('canvas.timeline').boundingBox())!.height).toBeGreaterThan(50)
      expect(await pane.locator('h3').textContent()).toContain(`${n} events`)
      // the whole log: the list is as tall as all its rows
      expect(await pane.locator('.vlist-inner').evaluate((el: any) => el.style.height)).toBe(`${n * 22}px`)
      // the divergence row is marked, selected and on screen
      const mark = pane.locator(`[data-testid="diverged-${role}"]`)
      await mark.waitFor({ state: 'visible', timeout: 10_000 })
      expect(await mark.getAttribute('data-row')).toBe(String(d.seq))
      expect(await mark.getAttribute('class')).toContain('selected')
      expect(await mark.textContent()).toContain('≠')
    }
    expect(await w.page.textContent('[data-testid="compare"] h2')).toBe(`Golden and re-run side by side · they part at seq ${d.seq}`)
    // the expected/actual events of the divergence are still shown above
    expect(await w.page.textContent('[data-testid="divergence"] h2')).toBe(`First divergence at seq ${d.seq} (${d.kind})`)
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })

  it('P4: a click on a row in either pane selects that seq in both panes and in the golden\'s state view', async () => {
    const w = await watchedPage(b.browser)
    await w.page.goto(pathToFileURL(out).href)
    await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
    await w.page.locator('[data-testid="compare-rerun"] [data-row="1"]').click()
    await w.page.waitForFunction(() => document.body.dataset.seq === '1', null, { timeout: 10_000 })
    expect(await w.page.evaluate(() => window.turnlogInspector.compareSeq)).toBe(1)
    expect(await w.page.locator('[data-testid="compare-golden"] [data-row="1"]').getAttribute('class')).toContain('selected')
    // a seq past the end of the re-run: its pane shows its last event, the golden that seq
    const last = (data.compare.events as unknown[]).length - 1
    const beyond = (data.events as unknown[]).length - 1
    await w.page.evaluate((s: number) => window.turnlogInspector.select(s), beyond)
    await w.page.waitForFunction((s: number) => document.body.dataset.seq === String(s), beyond, { timeout: 10_000 })
    expect(await w.page.locator(`[data-testid="compare-rerun"] [data-row="${last}"]`).getAttribute('class')).toContain('selected')
    expect(w.errors).toEqual([])
  })
})
