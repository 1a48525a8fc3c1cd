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
import { account, accountingLine } from './accounting.js'
import { LineChild, readAll, until, verifyOk } from './helpers.js'

const WORKER = fileURLToPath(new URL('./children/worker-child.mjs', import.meta.url))
const KILLS = Number(process.env.TURNLOG_PG_KILLS ?? 50)
/** Replacements loading ahead of the kills: only serving workers are killed, so the kill rate is
 * at most the boot rate of the standbys (6 boot side by side: on a loaded machine a boot is
 * seconds of wall time, ~0.7 s of CPU). */
const STANDBYS = 6
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
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The slots of `pool` whose worker is serving (printed READY, alive); waits for one (2 min). */
async function servingSlots(pool: readonly LineChild[], k: number): Promise<number[]> {
  const end = Date.now() + 120_000
  for (;;) {
    const ready = pool.flatMap((c, i) => (c.alive && c.lines.includes('READY') ? [i] : []))
    if (ready.length > 0) return ready
    if (Date.now() > end) throw new Error(`no worker serving before kill ${k + 1}: ${pool.map((c) => c.stderr.slice(-300)).join(' | ')}`)
    await sleep(10)
  }
}

describe('postgres workers under faults', () => {
  it(`SIGKILL of workers at random moments (${KILLS} kills, 3 workers, 40 sessions): every sent message moved once, logged once, answered (§8 resume); logs verify`, async () => {
    const url = await freshDb('kill')
    const store = postgresStore({ connectionString: url })
    stores.push(store)
    await store.migrate()
    const LEASE = 4000
    const startedAt = Date.now()
    let gen = 0
    const pool = [0, 1, 2].map((i) => worker(url, `w${i}-${gen++}`, Math.floor(rand() * 2 ** 31), LEASE))
    const sent = new Map<string, string[]>()
    let sending = true
    let n = 0
    const sender = (async () => {
      while (sending && n < 400) {
        const sid = `k${Math.floor(rand() * 40)}`
        const id = await store.send(sid, `question ${n++}`)
        sent.set(sid, [...(sent.get(sid) ?? []), id])
        await sleep(40 + Math.floor(rand() * 80))
      }
    })()
    const phases = ['stream', 'tool', 'claim', 'random'] as const
    const aimed: Record<string, number> = { stream: 0, tool: 0, claim: 0, random: 0 }
    let ofServing = 0
    // replacements wait loaded (STANDBY) so that a kill is followed by a live worker at once
    const standbys: LineChild[] = []
    const topUp = () => {
      while (standbys.length < STANDBYS) standbys.push(worker(url, `w-${gen++}`, Math.floor(rand() * 2 ** 31), LEASE, 0, true))
    }
    topUp()
    for (const c of pool) await c.waitFor((l) => l === 'READY', 0, 60_000)
    for (let k = 0; k < KILLS; k++) {
      // every kill hits a serving worker: one of the workers that printed READY (a replacement
      // still loading is never killed; when none serves, the kill waits for one)
      const serving = await servingSlots(pool, k)
      let phase: string = phases[k % phases.length]!
      let slot = serving[Math.floor(rand() * serving.length)]!
      if (phase === 'random') await sleep(20 + Math.floor(rand() * 300))
      else {
        // the first of the serving workers to reach the phase is the one killed there
        const marks = pool.map((c) => c.lines.length)
        const hit = await Promise.race(serving.map((i) => pool[i]!.waitFor((l) => l.startsWith(phase + ' '), marks[i]!, 800).then((l) => (l === null ? null : i))))
        if (hit === null) phase = 'random'
        else slot = hit
      }
      const c = pool[slot]!
      if (c.lines.includes('READY') && c.alive) ofServing++
      c.proc.kill('SIGKILL')
      await c.exited
      aimed[phase]!++
      // GO waits in the pipe if the standby is still loading; it is not killed before its READY
      const next = standbys.shift()!
      next.proc.stdin.write('GO\n')
      pool[slot] = next
      topUp()
    }
    for (const c of standbys) c.proc.kill('SIGKILL')
    sending = false
    await sender
    const killedAt = Date.now()
    // no more kills: the three live workers catch up (expired leases are taken over)
    await until(async () => {
      const rows = await store.sessions()
      return rows.length > 0 && rows.every((r) => r.status === 'idle' && r.pending === 0)
    }, 'every session idle with its input moved', 150_000, async () => JSON.stringify(await store.sessions()) + pool.map((c) => c.lines.slice(-20).join('|')).join('\n'))
    const caughtUpAt = Date.now()
    for (const c of pool) c.proc.kill('SIGTERM')
    await Promise.all(pool.map((c) => c.exited))

    // moved once, logged once (itself or its §8 resume copy), answered or named as given up
    const a = await account(store, sent)
    const inbox = await store.pool.query('SELECT count(*)::int AS n FROM turnlog_inbox WHERE moved_seq IS NULL')
    console.log(`postgres SIGKILL loop: kill phase ${((killedAt - startedAt) / 1000).toFixed(1)} s, catch-up ${((caughtUpAt - killedAt) / 1000).toFixed(1)} s; ${KILLS} kills (${ofServing} of serving workers; aimed ${JSON.stringify(aimed)}), ${accountingLine(a)}`)
    expect(a.problems).toEqual([])
    expect((inbox.rows[0] as { n: number }).n).toBe(0)
    expect(a.acknowledged).toBeGreaterThan(0)
    expect(ofServing).toBe(KILLS)
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
