// What a person notices on the report page (the inspector in report mode), checked in Chromium:
// the time axis has no label below zero and none cut by the canvas edge; every mark and every turn
// bar has a label (drawn, or the whole one as the tooltip); short bars that say something are
// labelled beside them; the selected event row is scrolled into view on load and on a jump; a log
// without usage says so instead of "max 1" over no bars.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { templatePath } from '../../cli/page.js'
import { cli, ROOT, tempDir } from '../cli/helpers.js'
import { hasChromium, launch, watchedPage, type Launched, type Watched } from './chromium.js'

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any
declare const window: any

const run = hasChromium() ? describe : describe.skip
const WEATHER = join(ROOT, 'examples', 'weather.jsonl')
const RETRY = join(ROOT, 'test', 'fixtures', 'valid', 'llm-retry.jsonl')
const NO_USAGE = join(ROOT, 'test', 'fixtures', 'valid', 'assistant-chunk.jsonl')

type Box = { x: number; y: number; seq: number; kind: string; label: string; mark?: string; shown: string }
type Tick = { value: number; label: string; left: number; right: number; width: number }

run('report visuals in Chromium', () => {
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

  async function open(log: string, name: string): Promise<Watched> {
    const out = join(tmp.dir, `${name}.html`)
    const r = await cli(['report', log, '-o', out])
    expect(r.code, r.stderr).toBe(0)
    const w = await watchedPage(b.browser)
    await w.page.goto(pathToFileURL(out).href)
    await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
    return w
  }

  /** The selected event row lies wholly inside the events list's visible area. */
  async function selectedRowVisible(w: Watched, seq: number): Promise<boolean> {
    await w.page.waitForFunction((s: number) => document.body.dataset.seq === String(s), seq)
    // the list scrolls in the next frames
    await w.page.evaluate(() => new Promise((r) => window.requestAnimationFrame(() => window.requestAnimationFrame(r))))
    return w.page.evaluate((s: number) => {
      const list = document.querySelector('.vlist[aria-label="events"]')
      const row = list.querySelector(`[data-row="${s}"]`)
      if (!row) return false
      const a = list.getBoundingClientRect()
      const r = row.getBoundingClientRect()
      return r.top >= a.top - 0.5 && r.bottom <= a.bottom + 0.5
    }, seq)
  }

  it('the time axis starts at zero and no label is cut by the canvas edge; the selected event row is in view on load and after a jump', async () => {
    const w = await open(WEATHER, 'weather')
    const ticks: Tick[] = await w.page.evaluate(() => window.turnlogInspector.ticks())
    expect(ticks.length).toBeGreaterThan(2)
    expect(ticks[0]!.value).toBe(0)
    for (const t of ticks) {
      expect(t.value, t.label).toBeGreaterThanOrEqual(0)
      expect(t.label, JSON.stringify(t)).not.toMatch(/^-/)
      expect(t.right, JSON.stringify(t)).toBeLessThanOrEqual(t.width)
    }
    // the last seq is selected on load: its row is visible
    const last = await w.page.evaluate(() => window.turnlogInspector.count - 1)
    expect(await w.page.evaluate(() => window.turnlogInspector.seq)).toBe(last)
    expect(await selectedRowVisible(w, last)).toBe(true)
    await w.page.evaluate(() => window.turnlogInspector.select(2))
    expect(await selectedRowVisible(w, 2)).toBe(true)
    await w.page.evaluate((s: number) => window.turnlogInspector.select(s), last)
    expect(await selectedRowVisible(w, last)).toBe(true)
    expect(w.errors).toEqual([])
  })

  it('every mark has a label and a tooltip; every turn bar shows its label (failed turns too); the tooltip names the bar', async () => {
    const w = await open(RETRY, 'retry')
    const boxes: Box[] = await w.page.evaluate(() => window.turnlogInspector.bars())
    const marks = boxes.filter((x) => x.kind === 'mark')
    expect(marks.length).toBeGreaterThan(3)
    for (const m of marks) expect(m.label, JSON.stringify(m)).not.toBe('')
    // where the next mark leaves room, the label is drawn beside the dot
    expect(marks.some((m) => m.shown !== '')).toBe(true)
    const turns = boxes.filter((x) => x.kind === 'turn')
    expect(turns.length).toBe(5)
    for (const t of turns) expect(t.shown, JSON.stringify(t)).not.toBe('')
    // hovering a mark gives its whole label as the tooltip
    const m = marks[0]!
    await w.page.mouse.move(m.x, m.y)
    await w.page.waitForFunction(() => document.querySelector('canvas.timeline').title !== '')
    const title: string = await w.page.evaluate(() => document.querySelector('canvas.timeline').title)
    expect(title).toContain(m.label)
    expect(w.errors).toEqual([])
  })

  it('a log whose requests report no usage says so on the tokens chart (no "max 1" over no bars)', async () => {
    const w = await open(NO_USAGE, 'no-usage')
    await w.page.waitForFunction(() => (document.querySelector('canvas.tokens').getAttribute('aria-label') ?? '').includes('request'))
    const label: string = await w.page.evaluate(() => document.querySelector('canvas.tokens').getAttribute('aria-label'))
    expect(label).toContain('no token usage recorded')
    expect(label).not.toContain('max')
    const withUsage = await open(WEATHER, 'weather-usage')
    expect(await withUsage.page.evaluate(() => document.querySelector('canvas.tokens').getAttribute('aria-label'))).toContain('max 78')
  })
})
