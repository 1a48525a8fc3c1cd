/**
 * The SIGKILL crash loop against jsonlStore (docs/spec/reliability.md "Faults"), run by `npm run
 * test:faults` (CI runs it once, beside the suite): a child runs an agent and is killed at random
 * moments; after each kill every durable followup and every event `flush()` acknowledged is in the
 * log, the log reads (torn tail tolerated and quarantined), and after repair it verifies (L1–L16).
 *
 * The children run the compiled library (test/stores/child-lib.ts: `dist/` when fresh, else a
 * tsc build of the sources they import). `TURNLOG_CRASH_KILLS` sets the number of kills (default 50).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { readLog } from '../../replay/read-log.js'
import * as replayApi from '../../replay/index.js'
import { verify } from '../../replay/verify.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { LineChild } from '../support/line-child.js'
import { childLib, ROOT } from '../stores/child-lib.js'

const CRASH_CHILD = fileURLToPath(new URL('../stores/children/crash-child.mjs', import.meta.url))
const KILLS = Number(process.env.TURNLOG_CRASH_KILLS ?? 50)

let lib = ''
let dir = ''
beforeAll(async () => {
  lib = childLib()
  dir = await mkdtemp(join(tmpdir(), 'turnlog-crash-loop-'))
}, 120_000)
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

function inboxFates(events: readonly LogEvent[]): Map<string, 'pending' | 'claimed' | 'canceled'> {
  const fate = new Map<string, 'pending' | 'claimed' | 'canceled'>()
  const lists: Record<string, string[]> = { 'next-turn': [], 'next-step': [] }
  for (const e of events) {
    if (e.type !== 'agent/inbox/spliced') continue
    const d = e.data as { target: string; start: number; removedCount?: number; inserted: Array<{ id: string }>; outcome?: string }
    const list = lists[d.target]!
    const removed = list.splice(d.start, d.removedCount ?? 0, ...d.inserted.map((m) => m.id))
    for (const id of removed) fate.set(id, d.outcome === 'canceled' ? 'canceled' : 'claimed')
    for (const m of d.inserted) fate.set(m.id, 'pending')
  }
  return fate
}

/** The longest prefix that ends with no turn open. */
function closedPrefix(events: readonly LogEvent[]): LogEvent[] {
  let open = false
  let cut = 0
  for (let i = 0; i < events.length; i++) {
    const t = events[i]!.type
    if (t === 'turn/start') open = true
    else if (t === 'turn/end') open = false
    if (!open) cut = i + 1
  }
  return events.slice(0, cut)
}

describe('SIGKILL crash loop (reliability: crash between write and fsync, crash mid-batch; R: accepted followups survive)', () => {
  it(`${KILLS} SIGKILLs at random moments: every durable followup is pending or has run, every flushed event is there, the torn tail is quarantined, repair closes the open turn and the log verifies`, async () => {
    const repair = (replayApi as Record<string, unknown>).repair as
      | ((src: string | Uint8Array) => Promise<{ log: { events: LogEvent[] }; closers: LogEvent[] }>)
      | undefined
    const stats = { kills: 0, durableIds: 0, openTurnAtKill: 0, torn: 0, quarantined: 0, pendingSurvivors: 0, repaired: 0, events: 0 }
    const t0 = Date.now()
    const PARALLEL = 3
    let next = 0
    const runOne = async (k: number): Promise<void> => {
      const sessionId = `crash-${k}`
      const seed = 1000 + k
      const child = new LineChild(spawn, CRASH_CHILD, [lib, dir, sessionId, String(seed)], ROOT)
      await child.line((l) => l === 'READY')
      // the kill must hit real work whatever the machine's load: wait until the child has made
      // 1–3 followups durable (a bare timer after READY left slow children with nothing done, and
      // the "kills hit real work" counts below failed under load), then a random moment more
      const want = 1 + (seed % 3)
      await child.line((l) => l.startsWith('D '), 0, 60_000)
      while (child.lines.filter((l) => l.startsWith('D ')).length < want) {
        const seen = child.lines.length
        await child.line((l) => l.startsWith('D '), seen, 60_000)
      }
      await new Promise((r) => setTimeout(r, (seed * 7919) % 290))
      child.proc.kill('SIGKILL')
      const exit = await child.exited
      expect(exit.signal, child.stderr).toBe('SIGKILL')
      stats.kills++

      const durable = child.lines.filter((l) => l.startsWith('D ')).map((l) => {
        const [, id, n] = l.split(' ')
        return { id: id!, n: Number(n) }
      })
      stats.durableIds += durable.length
      const store = jsonlStore(dir)
      const file = store.path(sessionId)
      // the log reads: complete records, at most a torn tail (no corruption mid-file)
      const log = await readLog(file, { tolerateTornTail: true })
      stats.events += log.events.length
      if (log.torn) {
        stats.torn++
        expect(log.torn.error.repairable).toBe(true)
      }
      // every event flush() acknowledged is there
      const maxN = Math.max(0, ...durable.map((d) => d.n))
      expect(log.events.length).toBeGreaterThanOrEqual(maxN)
      // every durable accepted followup is pending or has run (never lost, never canceled)
      const fates = inboxFates(log.events)
      for (const d of durable) {
        const fate = fates.get(d.id)
        expect(fate === 'pending' || fate === 'claimed', `${sessionId}: ${d.id} is ${fate}`).toBe(true)
        if (fate === 'pending') stats.pendingSurvivors++
      }
      if (closedPrefix(log.events).length < log.events.length) stats.openTurnAtKill++
      // the dead owner's lock is stale: a new writer takes the session, quarantines a torn tail
      const w = await store.open(sessionId, 'write', { allowTornTail: true })
      if (w.torn) {
        const q = await w.quarantineTornTail!()
        expect(q).not.toBeNull()
        expect(await readFile(q!.file)).toEqual(Buffer.from(log.torn!.bytes))
        stats.quarantined++
      }
      expect(w.length).toBe(log.events.length)
      await w.close()
      // verify: after repair when the repair engine is there, else the prefix up to the last closed turn
      if (typeof repair === 'function') {
        const r = await repair(file)
        expect(verify(r.log.events).violations, sessionId).toEqual([])
        expect(r.log.events.slice(0, log.events.length)).toEqual(log.events)
        stats.repaired++
      } else {
        expect(verify(closedPrefix(log.events)).violations, sessionId).toEqual([])
      }
    }
    await Promise.all(Array.from({ length: PARALLEL }, async () => {
      while (next < KILLS) await runOne(next++)
    }))
    const ms = Date.now() - t0
    // the kills hit real work: followups were durable, and many kills landed inside a turn
    expect(stats.kills).toBe(KILLS)
    expect(stats.durableIds).toBeGreaterThan(KILLS)
    expect(stats.openTurnAtKill).toBeGreaterThan(KILLS / 5)
    expect(stats.pendingSurvivors).toBeGreaterThan(0)
    // no leftovers beside the logs but quarantine files
    const names = await readdir(dir)
    expect(names.filter((n) => n.endsWith('.lock') || n.includes('takeover') || n.endsWith('.tmp'))).toEqual([])
    console.log(`[crash loop] ${JSON.stringify({ ...stats, ms })}`)
  }, 180_000)
})
