// Issue "See a session", item 4 (big logs): the page folds the log into checkpoints every N events
// (inspector/src/cursor.ts) and reaches any seq by folding at most N events from the nearest one,
// in either direction. P2: whatever the path (backward, forward, jumps across checkpoints), the state
// the page shows at a seq equals Node's stateAt(events, seq). Counts, not timings, are asserted.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { generateEvents } from '../../bench/gen-log.js'
import { renderPage } from '../../cli/page.js'
import { readLog } from '../../replay/read-log.js'
import { stateAt } from '../../replay/replay.js'
import { cli, tempDir } from '../cli/helpers.js'
import { hasChromium, launch, watchedPage, type Launched, type Watched } from './chromium.js'

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any
declare const window: any

const run = hasChromium() ? describe : describe.skip

run('inspector checkpoints in Chromium', () => {
  let b: Launched
  const tmp = tempDir()
  beforeAll(async () => { b = await launch() })
  afterAll(async () => {
    await b?.close()
    tmp.cleanup()
  })

  async function open(name: string, events: readonly LogEvent[], every: number, encoding: 'json' | 'gzip-base64' = 'json'): Promise<Watched> {
    const html = await renderPage({ version: 1, mode: 'report', file: name, header: { id: name }, events, checkpointEvery: every }, { encoding })
    const file = join(tmp.dir, `${name}.html`)
    writeFileSync(file, html)
    const w = await watchedPage(b.browser)
    await w.page.goto(pathToFileURL(file).href)
    await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 120_000 })
    return w
  }

  async function visit(w: Watched, events: readonly LogEvent[], seqs: number[], every: number): Promise<void> {
    for (const seq of seqs) {
      await w.page.evaluate((s: number) => window.turnlogInspector.select(s), seq)
      await w.page.waitForFunction((s: number) => document.body.dataset.seq === String(s), seq)
      const got = await w.page.evaluate(() => {
        const out: Record<string, string> = {}
        for (const el of document.querySelectorAll('[data-field]')) out[el.dataset.field] = el.textContent ?? ''
        out.history = document.querySelector('[data-testid="history-count"]').dataset.count
        out.nextTurn = document.querySelector('[data-testid="next-turn"]').dataset.count
        out.nextStep = document.querySelector('[data-testid="next-step"]').dataset.count
        out.pending = [...document.querySelectorAll('[data-testid="pending"] [data-callid]')].map((e: any) => e.dataset.callid).join(',')
        out.folded = String(window.turnlogInspector.lastFolded)
        return out
      })
      const st = stateAt(events as LogEvent[], seq)
      const at = `seq ${seq}`
      expect(Number(got.folded), at).toBeLessThanOrEqual(every)
      expect(got['usage.requests'], at).toBe(st.usage.total.requests.toLocaleString('en-US'))
      expect(got['usage.inputTokens'], at).toBe(st.usage.total.inputTokens.toLocaleString('en-US'))
      expect(got['usage.outputTokens'], at).toBe(st.usage.total.outputTokens.toLocaleString('en-US'))
      expect(got['usage.failed.requests'], at).toBe(st.usage.failed.requests.toLocaleString('en-US'))
      expect(got.history, at).toBe(String(st.history.messages.length))
      expect(got.nextTurn, at).toBe(String(st.inbox.nextTurn.length))
      expect(got.nextStep, at).toBe(String(st.inbox.nextStep.length))
      expect(got.pending, at).toBe(st.lifecycle.pendingToolCalls.map((c) => c.callId).join(','))
      expect(got.openTurn, at).toBe(String(st.lifecycle.openTurn ?? '—'))
      expect(got.openStep, at).toBe(String(st.lifecycle.openStep ?? '—'))
      expect(got.lastStepOutcome, at).toBe(String(st.lifecycle.lastStepOutcome?.kind ?? '—'))
    }
  }

  it('P2: the demo session (steering, a rejected prompt, a retry) with a checkpoint every 5 events: every seq backward, then jumps both ways, equal stateAt, each reached by folding ≤ 5 events', async () => {
    const demo = join(tmp.dir, 'demo.jsonl')
    expect((await cli(['demo', '--store', demo])).code).toBe(0)
    const { events } = await readLog(demo)
    const w = await open('demo', events, 5)
    expect(await w.page.evaluate(() => window.turnlogInspector.checkpointEvery)).toBe(5)
    expect(await w.page.evaluate(() => window.turnlogInspector.checkpoints)).toBe(Math.floor(events.length / 5) + 1)
    const n = events.length
    const backward = Array.from({ length: n }, (_, i) => n - 1 - i)
    const jumps = [3, n - 2, 11, 12, 4, Math.floor(n / 2), 0, n - 1, 27, 26, 25, 40]
    await visit(w, events, [...backward, ...jumps.filter((s) => s < n)], 5)
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })

  it('P2: a 3,000-event generated log (embedded gzipped: the page inflates it) with a checkpoint every 250 events: seqs around checkpoint edges in both directions equal stateAt, each reached by folding ≤ 250 events', async () => {
    const events = generateEvents({ events: 3000 })
    const w = await open('gen', events, 250, 'gzip-base64')
    const seqs = [events.length - 1, 0, 249, 250, 248, 2999, 1750, 1499, 1500, 1501, 10, 2000, 1999, 251, 749]
    await visit(w, events, seqs.filter((s) => s < events.length), 250)
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })
})
