// docs/spec/lifecycle.md §11 on the report page (`turnlog report`; `turnlog inspect` serves the same page)
// in headless Chromium: the transcript shows each input round (what it asked: keys and kinds; a client
// tool's round as such) and its answer (accepted, declined; by whom; after how long) at their seqs.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, expect, it, describe } from 'vitest'
import { templatePath } from '../../cli/page.js'
import type { LogEvent } from '../../events/index.js'
import { writeLog } from '../../replay/write-log.js'
import { cli, tempDir } from '../cli/helpers.js'
import { inputSession } from '../fixtures/input-logs.js'
import { hasChromium, launch, watchedPage, type Launched } from './chromium.js'

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any
declare const window: any

const run = hasChromium() ? describe : describe.skip

run('report page: input rounds', () => {
  let b: Launched
  const tmp = tempDir()
  let events: LogEvent[]
  beforeAll(async () => {
    expect(existsSync(templatePath()), 'run npm run build: the inspector template is missing').toBe(true)
    events = (await inputSession()).events
    await writeLog(join(tmp.dir, 'in1.jsonl'), { header: { type: 'session', format: 1, id: 'in1', createdAt: 0 }, events })
    b = await launch()
  })
  afterAll(async () => {
    await b?.close()
    tmp.cleanup()
  })

  it('L21 the transcript lines show each round and its answer (how, by whom, after how long) at their seqs', async () => {
    const out = join(tmp.dir, 'in1.html')
    expect((await cli(['report', join(tmp.dir, 'in1.jsonl'), '-o', out])).code).toBe(0)
    const w = await watchedPage(b.browser)
    await w.page.goto(pathToFileURL(out).href)
    await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
    const seen = new Map<string, string>()
    const req = events.filter((e) => e.type === 'tool/input-requested').map((e) => e.seq)
    const ans = events.filter((e) => e.type === 'tool/input-provided').map((e) => e.seq)
    for (const s of [...req, ...ans]) {
      await w.page.evaluate((x) => window.turnlogInspector!.select(x), s)
      await w.page.waitForFunction((x) => document.body.dataset.seq === String(x), s)
      const rows: Array<[string, string]> = await w.page.evaluate(() => [...document.querySelectorAll('.tline.k-input, .tline.k-answer')].map((e: any) => [e.querySelector('.seq').textContent, e.textContent]))
      for (const [seq, text] of rows) seen.set(seq, text)
    }
    expect([...seen.entries()].sort((x, y) => Number(x[0]) - Number(y[0]))).toEqual([
      [String(req[0]), `${req[0]}input q2: round 1 of ship({"item":"books"}) c1 asks address (form)`],
      [String(ans[0]), `${ans[0]}answer q2 accepted by ann after 2 h`],
      [String(req[1]), `${req[1]}input q3: round 2 of ship({"item":"books"}) c1 asks speed (choice)`],
      [String(ans[1]), `${ans[1]}answer q3 declined by bob after 2 h`],
      [String(req[2]), `${req[2]}input q4: client tool pick_color({"palette":"sea"}) c2 waits for the client`],
      [String(ans[2]), `${ans[2]}answer q4 accepted by ann after 2 h`],
      [String(req[3]), `${req[3]}input q6: round 1 of ship({"item":"lamp"}) c3 asks address (form)`],
    ])
    expect(w.errors).toEqual([])
    expect(w.outside).toEqual([])
  }, 120_000)
})
