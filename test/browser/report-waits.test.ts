// Lifecycle §9, §10 on the report page in headless Chromium: approval requests and decisions,
// parked time and wakeups on the timeline; the open approvals and pending wakeups in the state
// panel at a seq (equal to Node's stateAt); a budget end labelled with its limit; a parent's child
// linked to the child's report (report --children) and the child's header linking back.
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { templatePath } from '../../cli/page.js'
import type { LogEvent } from '../../events/index.js'
import { openApprovals } from '../../reducers/approvals.js'
import { stateAt } from '../../replay/replay.js'
import { writeLog } from '../../replay/write-log.js'
import { cli, tempDir } from '../cli/helpers.js'
import { approvalSession, budgetSession, CHILD_ID, familySession } from '../fixtures/view-logs.js'
import { hasChromium, launch, watchedPage, type Launched, type Watched } from './chromium.js'

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any
declare const window: any

const run = hasChromium() ? describe : describe.skip

async function open(b: Launched, html: string): Promise<Watched> {
  const w = await watchedPage(b.browser)
  await w.page.goto(pathToFileURL(html).href)
  await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
  return w
}

async function at(w: Watched, seq: number): Promise<{ approvals: string[]; parked: string | null; schedules: string[] }> {
  await w.page.evaluate((s) => window.turnlogInspector!.select(s), seq)
  await w.page.waitForFunction((s) => document.body.dataset.seq === String(s), seq)
  return w.page.evaluate(() => ({
    approvals: [...document.querySelectorAll('[data-testid="approvals"] [data-approval]')].map((e: any) => e.dataset.approval),
    parked: document.querySelector('[data-testid="parked-since"]')?.textContent ?? null,
    schedules: [...document.querySelectorAll('[data-testid="schedules"] [data-schedule]')].map((e: any) => e.dataset.schedule),
  }))
}

run('report page: approvals, parked time, wakeups, budgets, children', () => {
  let b: Launched
  const tmp = tempDir()
  let events: LogEvent[]
  const header = (id: string) => ({ type: 'session' as const, format: 1 as const, id, createdAt: 0 })
  beforeAll(async () => {
    expect(existsSync(templatePath()), 'run npm run build: the inspector template is missing').toBe(true)
    events = (await approvalSession()).events
    await writeLog(join(tmp.dir, 'ap1.jsonl'), { header: header('ap1'), events })
    await writeLog(join(tmp.dir, 'bu1.jsonl'), { header: header('bu1'), events: await budgetSession() })
    await familySession(join(tmp.dir, 'fam'))
    b = await launch()
  })
  afterAll(async () => {
    await b?.close()
    tmp.cleanup()
  })

  it('L17/L18: requests and decisions are marks, parked time a bar; the state panel lists the open approvals and wakeups at each seq as stateAt has them', async () => {
    const out = join(tmp.dir, 'ap1.html')
    expect((await cli(['report', join(tmp.dir, 'ap1.jsonl'), '-o', out])).code).toBe(0)
    const w = await open(b, out)
    const boxes: Array<{ kind: string; mark?: string; label: string; seq: number }> = await w.page.evaluate(() => window.turnlogInspector!.bars())
    expect(boxes.filter((x) => x.mark === 'approval').map((x) => x.seq)).toEqual(events.filter((e) => e.type === 'tool/approval-requested').map((e) => e.seq))
    const decisions = boxes.filter((x) => x.mark === 'decision').map((x) => x.label)
    expect(decisions).toEqual(['approval m3 approved with edited arguments by ann', 'approval m2 denied: keep b by bob'])
    expect(boxes.filter((x) => x.mark === 'schedule').map((x) => x.label)).toEqual([
      expect.stringMatching(/^wakeup w-done set for /), expect.stringMatching(/^wakeup w-cancel set for /), 'wakeup w-cancel canceled',
      'wakeup w-done fired', expect.stringMatching(/^wakeup w-pending set for /),
    ])
    const parked = boxes.filter((x) => x.kind === 'parked')
    expect(parked.map((x) => x.label)).toEqual(['parked for m2, m3 · 3 h 2 min', 'parked for m6'])
    for (const seq of [20, 21, 23, 25, events.length - 1]) {
      const st = stateAt(events, seq)
      const s = await at(w, seq)
      expect(s.approvals, `seq ${seq}`).toEqual(openApprovals(st.approvals).map((a) => a.approvalId))
      expect(s.parked, `seq ${seq}`).toBe(st.approvals.waiting ? `parked since seq ${st.approvals.waiting.parkedSeq}` : null)
      expect(s.schedules, `seq ${seq}`).toEqual(st.schedules.pending.map((p) => p.scheduleId))
    }
    expect(w.errors).toEqual([])
    expect(w.outside).toEqual([])
  })

  it('L20: a budget end is labelled with its limit on the timeline', async () => {
    const out = join(tmp.dir, 'bu1.html')
    expect((await cli(['report', join(tmp.dir, 'bu1.jsonl'), '-o', out])).code).toBe(0)
    const w = await open(b, out)
    const boxes: Array<{ kind: string; label: string }> = await w.page.evaluate(() => window.turnlogInspector!.bars())
    expect(boxes.find((x) => x.kind === 'turn')!.label).toBe('turn 1 · budget: tokens 1,200/1,000 (turn)')
    expect(w.errors).toEqual([])
  })

  it('L19: report --children writes the child\'s report; the parent links to it and it links back', async () => {
    mkdirSync(join(tmp.dir, 'fam-out'))
    const out = join(tmp.dir, 'fam-out', 'p1.html')
    const r = await cli(['report', join(tmp.dir, 'fam', 'p1.jsonl'), '-o', out, '--children'])
    expect(r.code, r.stderr).toBe(0)
    const childHtml = join(tmp.dir, 'fam-out', `${CHILD_ID}.html`)
    expect(existsSync(childHtml)).toBe(true)
    const w = await open(b, out)
    const spawned = await w.page.evaluate(() => window.turnlogInspector!.bars().find((x: any) => x.mark === 'child'))
    expect(spawned.label).toBe(`child session ${CHILD_ID} (call c1)`)
    await w.page.evaluate((s) => window.turnlogInspector!.select(s), spawned.seq)
    await w.page.waitForSelector('[data-testid="child-link"]')
    expect(await w.page.getAttribute('[data-testid="child-link"]', 'href')).toBe(`${CHILD_ID}.html`)
    await w.page.click('[data-testid="child-link"]')
    await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
    expect(w.page.url()).toBe(pathToFileURL(childHtml).href)
    expect(await w.page.textContent('[data-testid="parent"]')).toMatch(/^child of p1 \(call c1, seq \d+\)$/)
    expect(await w.page.getAttribute('[data-testid="parent"]', 'href')).toBe('p1.html')
    expect(w.errors).toEqual([])
  })
})
