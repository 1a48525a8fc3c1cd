/**
 * The workers' SIGKILL loop, shared by the stores that run `runWorkers` (PostgreSQL:
 * test/stores/postgres/faults.test.ts; SQLite: test/faults/sqlite-kill-loop.test.ts): 3 worker
 * processes serve 40 sessions while this process sends messages; a worker is killed `kills` times,
 * each kill aimed at a phase (mid-stream, mid-tool, mid-resume/claim, a random moment, which covers
 * mid-commit), always a worker that is serving (a replacement still loading is waited for, never
 * killed), and the worker replaced by a loaded standby. Then every sent message must have been
 * moved into its log exactly once (one splice), logged once as a user message (itself or its §8
 * resume copy) and answered or named in a `resume/given-up` record (accounting.ts: acknowledged =
 * answered + given up; none twice, none lost, none silent), and every log must verify.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import type { LogStore } from '../../stores/types.js'
import { account, accountingLine, type Accounting } from './postgres/accounting.js'
import { LineChild, until } from './postgres/helpers.js'
import { ROOT } from './child-lib.js'

const WORKER = fileURLToPath(new URL('./postgres/children/worker-child.mjs', import.meta.url))
/** Replacements loading ahead of the kills (6 boot side by side: on a loaded machine a boot is
 * seconds of wall time, ~0.7 s of CPU). */
const STANDBYS = 6

/** What the loop needs of the store under test. */
export interface KillLoopStore extends Pick<LogStore, 'open'> {
  send(sessionId: string, message: string): Promise<string>
  sessions(): Promise<Array<{ status: string; pending: number }>>
}

export interface KillLoopOptions {
  /** The worker children's store argument: `postgres://…` or `sqlite:FILE`. */
  url: string
  store: KillLoopStore
  lib: string
  kills: number
  /** The test's own choices (reproducible from its seed). */
  rand: () => number
  /** Every child spawned (the caller kills the leftovers). */
  children: LineChild[]
  /** Unmoved sent messages left in the store (must be 0). */
  inboxLeft: () => Promise<number>
  label: string
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export async function killLoop(o: KillLoopOptions): Promise<Accounting> {
  const { url, store, lib, rand, children } = o
  const LEASE = 4000
  const worker = (id: string, seed: number, standby = false): LineChild => {
    const env = standby ? { ...process.env, TURNLOG_STANDBY: '1' } : undefined
    const c = new LineChild(spawn, WORKER, [lib, url, String(seed), id, String(LEASE), '0'], ROOT, env)
    children.push(c)
    return c
  }
  /** The slots of `pool` whose worker is serving (printed READY, alive); waits for one (2 min). */
  const servingSlots = async (pool: readonly LineChild[], k: number): Promise<number[]> => {
    const end = Date.now() + 120_000
    for (;;) {
      const ready = pool.flatMap((c, i) => (c.alive && c.lines.includes('READY') ? [i] : []))
      if (ready.length > 0) return ready
      if (Date.now() > end) throw new Error(`no worker serving before kill ${k + 1}: ${pool.map((c) => c.stderr.slice(-300)).join(' | ')}`)
      await sleep(10)
    }
  }
  const startedAt = Date.now()
  let gen = 0
  const pool = [0, 1, 2].map((i) => worker(`w${i}-${gen++}`, Math.floor(rand() * 2 ** 31)))
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
  const standbys: LineChild[] = []
  const topUp = () => {
    while (standbys.length < STANDBYS) standbys.push(worker(`w-${gen++}`, Math.floor(rand() * 2 ** 31), true))
  }
  topUp()
  for (const c of pool) await c.waitFor((l) => l === 'READY', 0, 60_000)
  for (let k = 0; k < o.kills; k++) {
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

  const a = await account(store, sent)
  console.log(`${o.label} SIGKILL loop: kill phase ${((killedAt - startedAt) / 1000).toFixed(1)} s, catch-up ${((caughtUpAt - killedAt) / 1000).toFixed(1)} s; ${o.kills} kills (${ofServing} of serving workers; aimed ${JSON.stringify(aimed)}), ${accountingLine(a)}`)
  expect(a.problems).toEqual([])
  expect(await o.inboxLeft()).toBe(0)
  expect(a.acknowledged).toBeGreaterThan(0)
  expect(ofServing).toBe(o.kills)
  return a
}
