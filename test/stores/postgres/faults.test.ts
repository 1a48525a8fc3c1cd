/**
 * Faults against real worker processes and a real server (issue 11 "Faults"; docs/spec/reliability.md
 * "Faults": a worker process dies mid-turn).
 *
 * - SIGKILL loop: 3 worker processes serve 40 sessions while this process sends messages; a
 *   worker is killed ≥ 50 times (`TURNLOG_PG_KILLS`), each kill aimed at a phase (mid-stream,
 *   mid-tool, mid-resume/claim, a random moment, which covers mid-commit), always a worker that
 *   is serving (a replacement still loading is waited for, never killed: a kill of a process
 *   that never served would pad the count, as it did before round 14 under load, when nearly
 *   every kill was "random"), and the worker replaced by a loaded standby. Then: every sent message was moved into its log exactly once (one splice), logged
 *   once as a user message (itself or its §8 resume copy) and answered or named in a
 *   `resume/given-up` record, the inbox is empty, every log verifies (L1 no gap or duplicate seq,
 *   L5, L11, L13 against the limit the workers recorded on their resume turns, …).
 * - SIGSTOP past the lease, then SIGCONT: the stopped worker's writes never land after the takeover.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStore, type PostgresStore } from '../../../stores/postgres/index.js'
import { childLib, ROOT } from '../child-lib.js'
import { dropAll, freshDb } from './db.js'
import { killLoop } from '../kill-loop.js'
import { LineChild, readAll, until, verifyOk } from './helpers.js'

const WORKER = fileURLToPath(new URL('./children/worker-child.mjs', import.meta.url))
const KILLS = Number(process.env.TURNLOG_PG_KILLS ?? 50)
const children: LineChild[] = []
const stores: PostgresStore[] = []
let lib = ''

beforeAll(() => {
  lib = childLib()
}, 180_000)
afterAll(async () => {
  for (const c of children) if (c.alive) c.proc.kill('SIGKILL')
  for (const s of stores) await s.close()
  await dropAll()
})

function worker(url: string, id: string, seed: number, leaseMs: number, slowMs = 0, standby = false): LineChild {
  const env = standby ? { ...process.env, TURNLOG_STANDBY: '1' } : undefined
  const c = new LineChild(spawn, WORKER, [lib, url, String(seed), id, String(leaseMs), String(slowMs)], ROOT, env)
  children.push(c)
  return c
}

// mulberry32: the test's own choices are reproducible from TURNLOG_PG_SEED
let seed = Number(process.env.TURNLOG_PG_SEED ?? 20261130) >>> 0
const rand = () => {
  seed = (seed + 0x6d2b79f5) >>> 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

describe('postgres workers under faults', () => {
  it(`SIGKILL of workers at random moments (${KILLS} kills, 3 workers, 40 sessions): every sent message moved once, logged once, answered (§8 resume); logs verify`, async () => {
    const url = await freshDb('kill')
    const store = postgresStore({ connectionString: url })
    stores.push(store)
    await store.migrate()
    await killLoop({
      url, store, lib, kills: KILLS, rand, children, label: 'postgres',
      inboxLeft: async () => ((await store.pool.query('SELECT count(*)::int AS n FROM turnlog_inbox WHERE moved_seq IS NULL')).rows[0] as { n: number }).n,
    })
  }, 420_000)

  it('SIGSTOP past the lease, then SIGCONT: nothing the stopped worker writes lands after the takeover (LEASE_LOST)', async () => {
    const url = await freshDb('stop')
    const store = postgresStore({ connectionString: url })
    stores.push(store)
    await store.migrate()
    const a = worker(url, 'wa', 1, 500, 1500)
    await a.waitFor((l) => l === 'READY', 0, 30_000)
    await store.send('p', 'slow question')
    expect(await a.waitFor((l) => l === 'tool p', 0, 30_000)).toBe('tool p')
    a.proc.kill('SIGSTOP')
    const b = worker(url, 'wb', 2, 500, 10)
    // b takes the session over after a's lease ran out, re-runs nothing a had not logged, and hands it back
    await until(async () => {
      const r = (await store.sessions())[0]
      return r !== undefined && r.status === 'idle' && b.lines.includes('claim p')
    }, 'takeover by b', 60_000)
    const before = await readAll(store, 'p')
    a.proc.kill('SIGCONT')
    // a wakes up: its tool finishes, its append is refused, its agent halts
    const err = await a.waitFor((l) => l.startsWith('error p '), 0, 30_000)
    expect(err).toMatch(/LEASE_LOST|PERSISTENCE_FAILED/)
    a.proc.kill('SIGTERM')
    b.proc.kill('SIGTERM')
    await Promise.all([a.exited, b.exited])
    const after = await readAll(store, 'p')
    expect(after).toEqual(before)
    expect(verifyOk(after)).toEqual([])
  }, 180_000)
})
