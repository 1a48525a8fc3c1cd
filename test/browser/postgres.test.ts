// Issue "See a session" with "Run across machines": `turnlog report postgres://…#id -o OUT` and
// `turnlog inspect postgres://…#id` with a live tail by seq offset, against a real PostgreSQL (the
// globalSetup's server: TURNLOG_PG_URL in CI, else a throwaway one from scripts/pg.sh; see
// test/stores/postgres/global-setup.ts). P3: the page gets the session's events exactly as stored;
// P2: the state the page shows at the last seq equals stateAt.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { inspectCommand } from '../../cli/commands/inspect.js'
import { readLog } from '../../replay/read-log.js'
import { stateAt } from '../../replay/replay.js'
import { postgresStore, type PostgresStore } from '../../stores/postgres/index.js'
import { cli, tempDir } from '../cli/helpers.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { hasChromium, launch, watchedPage, type Launched } from './chromium.js'
import { embedded } from './page-data.js'

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any

// Like test/stores/postgres: the globalSetup provides the server (TURNLOG_PG_URL, else scripts/pg.sh).
// It starts one only when the run can reach a postgres test by name; a run filtered to other paths
// (`vitest run test/browser/`) gets none, and this file says so and skips instead of failing.
const hasPg = Boolean(inject('pgUrl') ?? process.env.TURNLOG_PG_URL)
if (!hasPg) console.warn('postgres inspector tests skipped: no server (set TURNLOG_PG_URL, or name this file so the globalSetup starts one)')
const pgDescribe = hasPg ? describe : describe.skip

const tmp = tempDir()
let url = ''
let store: PostgresStore
let events: LogEvent[] = []

beforeAll(async () => {
  if (!hasPg) return
  url = await freshDb('view')
  store = postgresStore({ connectionString: url })
  await store.migrate()
  const demo = join(tmp.dir, 'demo.jsonl')
  expect((await cli(['demo', '--store', demo])).code).toBe(0)
  events = (await readLog(demo)).events as LogEvent[]
  await store.create('demo-1')
  const w = await store.open('demo-1', 'write')
  await w.append(events, { expectedSeq: 0 })
  await w.close()
})
afterAll(async () => {
  await store?.close()
  if (hasPg) await dropAll()
  tmp.cleanup()
})

pgDescribe('turnlog report postgres://…#id', () => {
  it('P3: writes the page of the stored session: its events exactly, its header, the URL without a password', async () => {
    const out = join(tmp.dir, 'pg.html')
    const r = await cli(['report', `${url}#demo-1`, '-o', out])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`(${events.length} events`)
    const data = embedded(readFileSync(out, 'utf8'))
    expect(data.events).toEqual(JSON.parse(JSON.stringify(events)))
    expect(data.header.id).toBe('demo-1')
    expect(data.file).toBe(`${url}#demo-1`)
    // a session that does not exist: a coded error, exit 2, nothing written
    const missing = await cli(['report', `${url}#nope`, '-o', join(tmp.dir, 'nope.html')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('SESSION_NOT_FOUND')
  })
})

const run = hasChromium() && hasPg ? describe : describe.skip

run('report and inspect of a postgres session in Chromium', () => {
  let b: Launched
  beforeAll(async () => { b = await launch() })
  afterAll(async () => { await b?.close() })

  it('P2: the report opens from file:// with no request; the state at the last seq equals stateAt', async () => {
    const out = join(tmp.dir, 'pg-page.html')
    expect((await cli(['report', `${url}#demo-1`, '-o', out])).code).toBe(0)
    const w = await watchedPage(b.browser)
    await w.page.goto(pathToFileURL(out).href)
    await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
    await w.page.waitForFunction((s: number) => document.body.dataset.seq === String(s), events.length - 1)
    const st = stateAt(events, events.length - 1)
    expect(await w.page.getAttribute('[data-testid="history-count"]', 'data-count')).toBe(String(st.history.messages.length))
    expect(await w.page.textContent('[data-field="usage.requests"]')).toBe(String(st.usage.total.requests))
    expect(await w.page.textContent('[data-testid="verify"]')).toBe('verify: ok')
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })

  it('P3: turnlog inspect postgres://…#id follows appends by seq offset: the page shows the new turn without a reload', async () => {
    const cut = events.findIndex((e) => e.type === 'turn/end') + 1
    await store.create('live')
    const writer = await store.open('live', 'write')
    await writer.append(events.slice(0, cut), { expectedSeq: 0 })
    let stdout = ''
    const code = await inspectCommand(`${url}#live`, {
      port: '0',
      onListening: async (inspector) => {
        const w = await watchedPage(b.browser, (u) => u.startsWith(inspector.url))
        await w.page.goto(inspector.url)
        await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
        expect(await w.page.textContent('[data-testid="counts"]')).toBe(`${cut} events · 1 turn`)
        // the rest of the session arrives in the database; the server reads it by seq offset
        await writer.append(events.slice(cut), { expectedSeq: cut })
        await inspector.poll()
        expect(inspector.events.length).toBe(events.length)
        const turns = new Set(events.filter((e) => e.type === 'turn/start').map((e) => (e.data as { turn: number }).turn)).size
        await w.page.waitForFunction((t: string) => document.querySelector('[data-testid="counts"]').textContent === t,
          `${events.length} events · ${turns} turns`, { timeout: 60_000 })
        await w.page.waitForFunction((s: number) => document.body.dataset.seq === String(s), events.length - 1, { timeout: 60_000 })
        expect(inspector.events).toEqual(events)
        expect(w.outside).toEqual([])
        expect(w.errors).toEqual([])
        await w.page.close()
      },
    }, { stdout: (t) => void (stdout += t), stderr: () => {}, color: false, progress: false })
    await writer.close()
    expect(code).toBe(0)
    expect(stdout).toContain(`inspecting ${url}#live at http://127.0.0.1:`)
  })
})
