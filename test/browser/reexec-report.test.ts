// Issue "See a session", item 1: `turnlog reexec LOG --tools M --report OUT`. P4 (re-execution
// reproduces the log) seen in the page: a diverging re-execution writes a report that opens from
// file:// with no request, shows the divergence banner, the diff and the recorded/re-executed events
// side by side, with the divergent seq selected; a reproducing one writes a report that says so.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demoTools } from '../../cli/demo-session.js'
import { readLog } from '../../replay/read-log.js'
import { reexecute } from '../../replay/reexecute.js'
import { cli, ROOT, tempDir } from '../cli/helpers.js'
import { hasChromium, launch, watchedPage, type Launched } from './chromium.js'
import { embedded } from './page-data.js'

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any
declare const window: any

const tmp = tempDir()
let demo = ''
/** The demo's tools without its pre-step hook: today's code enters the prompt the hook rejected. */
let noHooks = ''
/** The demo's tools and hooks (examples/demo-tools.mjs, from the sources). */
let withHooks = ''

beforeAll(async () => {
  demo = join(tmp.dir, 'demo.jsonl')
  const r = await cli(['demo', '--store', demo])
  expect(r.code, r.stderr).toBe(0)
  const src = pathToFileURL(join(ROOT, 'cli', 'demo-session.ts')).href
  noHooks = join(tmp.dir, 'no-hooks.mjs')
  writeFileSync(noHooks, `import { demoTools } from ${JSON.stringify(src)}\nexport const tools = demoTools()\n`)
  withHooks = join(tmp.dir, 'with-hooks.mjs')
  writeFileSync(withHooks, `import { demoHooks, demoTools } from ${JSON.stringify(src)}\nexport const tools = demoTools()\nexport const hooks = demoHooks\n`)
})
afterAll(() => tmp.cleanup())

describe('turnlog reexec --report (CLI)', () => {
  it('P4: a log that re-executes identically still gets its report, which says so (reexec.ok, no divergence, the last seq selected)', async () => {
    const out = join(tmp.dir, 'same.html')
    const r = await cli(['reexec', demo, '--tools', withHooks, '--report', out])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toContain('identical to the recording')
    expect(r.stderr).toContain(`wrote ${out}`)
    const data = embedded(readFileSync(out, 'utf8'))
    const { events } = await readLog(demo)
    expect(data.divergence).toBeNull()
    expect(data.reexec).toEqual({ ok: true, eventCount: events.length })
    expect(data.select).toBeUndefined()
    expect(data.events).toEqual(JSON.parse(JSON.stringify(events)))
  })

  it('report --gzip embeds the same page data gzipped in base64 (no `<` in the element), a smaller file', async () => {
    const plain = join(tmp.dir, 'plain.html')
    const packed = join(tmp.dir, 'packed.html')
    expect((await cli(['report', demo, '-o', plain])).code).toBe(0)
    expect((await cli(['report', demo, '-o', packed, '--gzip'])).code).toBe(0)
    const a = readFileSync(plain, 'utf8')
    const z = readFileSync(packed, 'utf8')
    expect(z).toContain('data-encoding="gzip-base64"')
    expect(a).not.toContain('data-encoding="gzip-base64"')
    expect(embedded(z)).toEqual(embedded(a))
    expect(z.length).toBeLessThan(a.length)
  })

  it('P4: a diverging log exits 1 and its report carries the first divergence, that seq selected', async () => {
    const out = join(tmp.dir, 'diverged.html')
    const r = await cli(['reexec', demo, '--tools', noHooks, '--report', out])
    expect(r.code, r.stdout + r.stderr).toBe(1)
    const expected = await reexecute(await readLog(demo), { tools: demoTools() })
    expect(expected.ok).toBe(false)
    if (expected.ok) return
    const data = embedded(readFileSync(out, 'utf8'))
    expect(data.divergence).toEqual(JSON.parse(JSON.stringify({
      seq: expected.divergence.seq, kind: expected.divergence.kind, diff: expected.divergence.diff,
      expected: expected.divergence.expected, actual: expected.divergence.actual,
    })))
    expect(data.select).toBe(expected.divergence.seq)
    expect(data.reexec).toBeUndefined()
  })
})

const run = hasChromium() ? describe : describe.skip
if (!hasChromium()) console.warn('browser tests skipped: /usr/bin/chromium is missing (apt-get install chromium)')

run('turnlog reexec --report in Chromium', () => {
  let b: Launched
  beforeAll(async () => { b = await launch() })
  afterAll(async () => { await b?.close() })

  it('P4: the report of a diverging re-execution opens from file:// with no request, shows the banner, the diff and expected/actual side by side, the divergent seq selected', async () => {
    const out = join(tmp.dir, 'diverged-page.html')
    expect((await cli(['reexec', demo, '--tools', noHooks, '--report', out])).code).toBe(1)
    const r = await reexecute(await readLog(demo), { tools: demoTools() })
    if (r.ok) throw new Error('the demo without its hooks should diverge')
    const d = r.divergence
    const w = await watchedPage(b.browser)
    await w.page.goto(pathToFileURL(out).href)
    await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
    await w.page.waitForFunction((s: number) => document.body.dataset.seq === String(s), d.seq, { timeout: 60_000 })
    expect(await w.page.evaluate(() => window.turnlogInspector.seq)).toBe(d.seq)
    expect(await w.page.textContent('[data-testid="divergence"] h2')).toBe(`First divergence at seq ${d.seq} (${d.kind})`)
    expect(await w.page.textContent('[data-testid="diff"]')).toBe(d.diff)
    const show = (v: unknown): string => (v === undefined || v === null ? '(nothing)' : JSON.stringify(v, null, 2))
    expect(await w.page.textContent('[data-testid="expected"]')).toBe(show(d.expected))
    expect(await w.page.textContent('[data-testid="actual"]')).toBe(show(d.actual))
    // side by side: the two panes sit on one row, expected left of actual
    const [e, a] = await Promise.all([w.page.locator('[data-testid="expected"]').boundingBox(), w.page.locator('[data-testid="actual"]').boundingBox()])
    expect(e!.x).toBeLessThan(a!.x)
    expect(Math.abs(e!.y - a!.y)).toBeLessThan(1)
    // the raw event shown is the recorded event at that seq
    expect(JSON.parse((await w.page.textContent('[data-testid="raw"]'))!).seq).toBe(d.seq)
    expect(await w.page.locator('[data-testid="reexec-ok"]').count()).toBe(0)
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })

  it('P4: the report of a reproducing re-execution shows "identical to the recording" and no divergence', async () => {
    const out = join(tmp.dir, 'same-page.html')
    expect((await cli(['reexec', demo, '--tools', withHooks, '--report', out])).code).toBe(0)
    const w = await watchedPage(b.browser)
    await w.page.goto(pathToFileURL(out).href)
    await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
    expect(await w.page.textContent('[data-testid="reexec-ok"]')).toContain('identical to the recording')
    expect(await w.page.locator('[data-testid="divergence"]').count()).toBe(0)
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })
})
