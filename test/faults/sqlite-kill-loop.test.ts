/**
 * The workers' SIGKILL loop on one SQLite file (bench/README.md: the PostgreSQL fault
 * loop's accounting repeated on SQLite; test/stores/kill-loop.ts): 3 worker processes on one file
 * serve 40 sessions while this process sends messages; a serving worker is SIGKILLed
 * `TURNLOG_SQLITE_WORKER_KILLS` times (default 40) mid-stream, mid-tool, mid-claim or at a random
 * moment (mid-commit). Every acknowledged message is answered or named as given up (§8), none
 * twice, none lost, none silent; the inbox is empty; every log verifies (L1, L13, …).
 * In `npm run test:faults` (the loops' minutes stay out of `npm test`).
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { sqliteStore, type SqliteStore } from '../../stores/sqlite/index.js'
import { childLib } from '../stores/child-lib.js'
import { killLoop } from '../stores/kill-loop.js'
import type { LineChild } from '../support/line-child.js'
import { tempDir } from '../stores/sqlite/helpers.js'

// mulberry32: the test's own choices are reproducible from TURNLOG_SQLITE_SEED
let seed = Number(process.env.TURNLOG_SQLITE_SEED ?? 20261207) >>> 0
const rand = () => {
  seed = (seed + 0x6d2b79f5) >>> 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const KILLS = Number(process.env.TURNLOG_SQLITE_WORKER_KILLS ?? 40)
const children: LineChild[] = []
const stores: SqliteStore[] = []
let lib = ''

beforeAll(() => {
  lib = childLib()
}, 180_000)
afterAll(async () => {
  for (const c of children) if (c.alive) c.proc.kill('SIGKILL')
  for (const s of stores) await s.close()
})

describe('sqlite workers under faults', () => {
  it(`L13 §8: SIGKILL of worker processes on one SQLite file (${KILLS} kills, 3 workers, 40 sessions): acknowledged = answered + given up, none twice, none lost, none silent; logs verify`, async () => {
    const file = join(await tempDir(), 'kill.db')
    const store = sqliteStore(file)
    stores.push(store)
    await store.migrate()
    await killLoop({
      url: `sqlite:${file}`, store, lib, kills: KILLS, rand, children, label: 'sqlite',
      inboxLeft: async () => (await store.sessions()).reduce((n, r) => n + r.pending, 0),
    })
  }, 900_000)
})
