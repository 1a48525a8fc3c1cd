/**
 * Issue 24 item 8: the PostgreSQL kill loop with decisions, bounded, in CI (`npm run test:faults`,
 * which .ci/run calls after `npm test`; vitest.faults.config.ts). On a server of its own
 * (scripts/pg.sh, so it can restart it without disturbing other tests): 3 worker processes
 * (children/decide-worker.mjs) serve 40 sessions whose model calls `echo` and `rm`, a tool that
 * `needsApproval` (docs/spec/lifecycle.md §9), while this process sends messages (each acknowledged when `send`
 * resolves; a send that failed in a restart is sent again with the same id, idempotent) and
 * decides the open approvals through `store.decide` (decider.ts: another process than every
 * worker; approve 3 in 4, deny 1 in 4, some before the step parks, some after the worker handed
 * the parked session back). A worker is SIGKILLed ≥ 100 times (`TURNLOG_PG_KILLS`), each kill
 * aimed at a phase (mid-stream, mid-tool, mid-claim/resume, between a `needsApproval` answer and
 * its request, a random moment, which covers mid-commit and parked; always a worker that is
 * serving, never a replacement still loading) and replaced by a loaded standby; the server is
 * restarted `TURNLOG_PG_RESTARTS` (10) times among the kills. Then:
 * - the accounting of item 1 (docs/spec/lifecycle.md §8): every acknowledged message moved once, logged once,
 *   answered or named in a `resume/given-up` record: none silent, none twice, none lost;
 * - the accounting of decisions and bodies (decisions.ts; §9, L17, R10): every request decided
 *   exactly once; every decision `store.decide` acknowledged logged exactly once, as made; no
 *   decision invented; a body at most once per call, an approved one that returned ok exactly
 *   once, a denied one never;
 * - every log verifies (L1, L5, L11, L13 against the limit the workers recorded, L17, L18); no
 *   worker died except by this test's kills.
 * The figures are printed (kills, restarts, both accountings, durations).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStore, type PostgresStore } from '../../stores/postgres/index.js'
import { account, accountingLine } from '../stores/postgres/accounting.js'
import { childLib, ROOT } from '../stores/child-lib.js'
import { LineChild, readAll, until } from '../stores/postgres/helpers.js'
import { killAll } from '../support/line-child.js'
import { restartServer, startServer, stopServer } from '../support/own-server.js'
import { Decider, pgScan } from './decider.js'
import { accountDecisions, decisionsLine } from './decisions.js'
import { accountRounds, roundsLine } from './rounds.js'

const WORKER = fileURLToPath(new URL('./children/decide-worker.mjs', import.meta.url))
const KILLS = Number(process.env.TURNLOG_PG_KILLS ?? 100)
const RESTARTS = Number(process.env.TURNLOG_PG_RESTARTS ?? 10)
const SESSIONS = 40
const LEASE = 4000
const SENDS_PER_KILL = 15
const children: LineChild[] = []
const stores: PostgresStore[] = []
let ownDir: string | undefined
let lib = ''
const countDir = mkdtempSync(join(tmpdir(), 'turnlog-kill-loop-'))
const COUNT = join(countDir, 'bodies')

beforeAll(() => {
  lib = childLib()
}, 300_000)
afterAll(async () => {
  killAll(children)
  for (const s of stores) await s.close().catch(() => {})
  stopServer(ownDir)
  rmSync(countDir, { recursive: true, force: true })
})

// mulberry32: the test's own choices are reproducible from TURNLOG_PG_SEED
let seed = Number(process.env.TURNLOG_PG_SEED ?? 20261202) >>> 0
const rand = () => {
  seed = (seed + 0x6d2b79f5) >>> 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const seconds = (ms: number) => (ms / 1000).toFixed(1)

describe('faults in CI: the PostgreSQL kill loop (issue 24 item 8)', () => {
  it(`L1 L13 L17 L21 R10 R11 §8 §9 §11: ${KILLS} worker SIGKILLs and ${RESTARTS} server restarts while sending, deciding and answering rounds: every acknowledged message answered or named as given up, none twice, none lost; every decision logged once as made; no body twice, no denied body; 0 worker crashes; logs verify`, async () => {
    expect(KILLS).toBeGreaterThanOrEqual(1)
    const { url, dir } = startServer()
    ownDir = dir
    const store = postgresStore({ connectionString: url, retryDelayMs: 100, retryAttempts: 8 })
    stores.push(store)
    await store.migrate()
    const t0 = Date.now()

    const killed = new Set<LineChild>()
    let gen = 0
    const worker = (standby: boolean): LineChild => {
      // TURNLOG_LOOP_ROUNDS: the model also calls `ask`, a body asking 1–2 input rounds (§11)
      const env = { ...process.env, TURNLOG_LOOP_ROUNDS: '1', ...(standby ? { TURNLOG_STANDBY: '1' } : {}) }
      const c = new LineChild(spawn, WORKER, [lib, url, String(Math.floor(rand() * 2 ** 31)), `w${gen++}`, String(LEASE), COUNT], ROOT, env)
      children.push(c)
      return c
    }
    const pool = [0, 1, 2].map(() => worker(false))
    // replacements wait loaded (STANDBY) so that a kill is followed by a live worker at once
    const standbys: LineChild[] = []
    const topUp = () => {
      while (standbys.length < 2) standbys.push(worker(true))
    }
    topUp()
    for (const c of pool) expect(await c.waitFor((l) => l === 'READY', 0, 120_000)).toBe('READY')

    const sent = new Map<string, string[]>()
    const decider = new Decider(store, Array.from({ length: SESSIONS }, (_, i) => `k${i}`), rand, pgScan(store))
    const deciding = decider.run()
    let sending = true
    let n = 0
    let sendRetries = 0
    // sends are paced by the kills (at most SENDS_PER_KILL ahead of them): on a loaded machine,
    // where a kill waits seconds for a replacement to boot, the 1,500 messages would otherwise all
    // be answered half-way through and the later kills would hit idle workers
    let killsSoFar = 0
    const sender = (async () => {
      while (sending && n < 1500) {
        if (n >= (killsSoFar + 1) * SENDS_PER_KILL) {
          await sleep(50)
          continue
        }
        const sid = `k${Math.floor(rand() * SESSIONS)}`
        const id = `m${n++}`
        // acknowledged = the send resolved; one that failed (a restart) is sent again with its id
        for (;;) {
          try {
            await store.send(sid, { id, content: [{ type: 'text', text: `question ${id}` }] })
            sent.set(sid, [...(sent.get(sid) ?? []), id])
            break
          } catch {
            sendRetries++
            await sleep(100)
          }
        }
        await sleep(40 + Math.floor(rand() * 80))
      }
    })()

    // `round`: a body continuing an answered round (the window docs/decisions/input-rounds.md names)
    const phases = ['stream', 'tool', 'claim', 'approval', 'round', 'random'] as const
    const aimed: Record<string, number> = { stream: 0, tool: 0, claim: 0, approval: 0, round: 0, random: 0 }
    let ofServing = 0
    let restarts = 0
    const restartEvery = RESTARTS > 0 ? Math.max(1, Math.floor(KILLS / RESTARTS)) : Infinity
    for (let k = 0; k < KILLS; k++) {
      if (restarts < RESTARTS && k % restartEvery === Math.floor(restartEvery / 2)) {
        // the sender keeps sending while the server is down (its sends fail and are sent again)
        expect(await restartServer(dir)).toBe(0)
        restarts++
      }
      // every kill hits a serving worker: a replacement that is still loading is waited for, not
      // killed (a kill of a process that never served would pad the count)
      for (const c of pool) expect(await c.waitFor((l) => l === 'READY', 0, 120_000), `worker not serving before kill ${k + 1}: ${c.stderr.slice(-400)}`).toBe('READY')
      let phase: string = phases[k % phases.length]!
      let slot = Math.floor(rand() * 3)
      if (phase === 'random') await sleep(20 + Math.floor(rand() * 300))
      else {
        // the first of the three workers to reach the phase is the one killed there
        const marks = pool.map((c) => c.lines.length)
        const hit = await Promise.race(pool.map((c, i) => c.waitFor((l) => l.startsWith(phase + ' '), marks[i]!, 800).then((l) => (l === null ? null : i))))
        if (hit === null) phase = 'random'
        else slot = hit
      }
      const c = pool[slot]!
      if (c.lines.includes('READY') && c.alive) ofServing++
      killed.add(c)
      c.proc.kill('SIGKILL')
      await c.exited
      aimed[phase]!++
      killsSoFar++
      // GO waits in the pipe if the standby is still loading: the kills do not wait for boots
      const next = standbys.shift()!
      next.proc.stdin.write('GO\n')
      pool[slot] = next
      topUp()
      // progress, so that a run cut by its timeout says where it was
      if ((k + 1) % 25 === 0) console.log(`kill ${k + 1}/${KILLS} at ${seconds(Date.now() - t0)} s: ${restarts} restarts, ${n} sent, decider ${decider.made.length} tried, ${decider.open} open`)
    }
    for (const c of standbys) {
      killed.add(c)
      c.proc.kill('SIGKILL')
    }
    sending = false
    await sender
    const killsDone = Date.now()
    // no more faults: the three live workers catch up (expired leases are taken over first)
    // and the decider has read every log to its end and decided every request it found
    await until(async () => {
      try {
        const rows = await store.sessions()
        if (rows.length === 0 || !rows.every((r) => r.status === 'idle' && r.pending === 0)) return false
        const last = await store.pool.query('SELECT session_id, max(seq)::int AS m FROM turnlog_events GROUP BY session_id')
        const unlogged = await store.pool.query('SELECT count(*)::int AS n FROM turnlog_decisions WHERE logged_seq IS NULL')
        return (unlogged.rows[0] as { n: number }).n === 0 && decider.open === 0 &&
          (last.rows as Array<{ session_id: string; m: number }>).every((r) => decider.seenUpTo(r.session_id) >= r.m)
      } catch {
        return false
      }
    }, 'every session idle with its input moved and its approvals decided', 240_000,
    async () => `${decider.open} open, decider ${JSON.stringify(decider.figures)}; ` + JSON.stringify(await store.sessions()) + pool.map((c) => c.lines.slice(-20).join('|')).join('\n'))
    const caughtUp = Date.now()
    await deciding.stop()
    const crashed = children.filter((c) => !c.alive && !killed.has(c))
    for (const c of pool) c.proc.kill('SIGTERM')
    await Promise.all(pool.map((c) => c.exited))

    const a = await account(store, sent)
    const logs = new Map<string, Awaited<ReturnType<typeof readAll>>>()
    for (const sid of sent.keys()) logs.set(sid, await readAll(store, sid))
    const runs = readFileSync(COUNT, 'utf8').split('\n').filter(Boolean)
    const d = accountDecisions(logs, decider.made, runs)
    const r = accountRounds(logs, decider.answers, runs)
    const inbox = await store.pool.query('SELECT count(*)::int AS n FROM turnlog_inbox WHERE moved_seq IS NULL')
    const given = await store.pool.query("SELECT count(*)::int AS n FROM turnlog_events WHERE event->>'type' = 'resume/given-up'")
    console.log(`postgres kill loop: ${KILLS} SIGKILLs (${ofServing} of serving workers; aimed ${JSON.stringify(aimed)}), ${restarts} server restarts, ` +
      `${crashed.length} worker crashes, ${sendRetries} send retries; ${accountingLine(a)}; ${(given.rows[0] as { n: number }).n} give-up records; ` +
      `kill phase ${seconds(killsDone - t0)} s, catch-up ${seconds(caughtUp - killsDone)} s`)
    console.log(`postgres kill loop decisions: ${decisionsLine(d)}; decider: ${decider.made.length} tried, ${decider.figures.refused} refused ` +
      `(APPROVAL_DECIDED), ${decider.figures.failed} failed tries retried`)
    console.log(`postgres kill loop input rounds: ${roundsLine(r)}; answers: ${decider.answerFigures.tries} tries, ${decider.answerFigures.refused} refused ` +
      `(INPUT_ANSWERED), ${decider.answerFigures.failed} failed tries retried`)
    expect(crashed.map((c) => c.stderr.slice(-400))).toEqual([])
    expect(a.problems).toEqual([])
    expect(a.acknowledged).toBeGreaterThan(0)
    expect(a.answered + a.givenUp).toBe(a.acknowledged)
    expect(d.problems).toEqual([])
    // decisions were made, both ways, and bodies ran: the loop ran "with decisions"
    expect(d.made).toBeGreaterThan(0)
    expect(d.loggedBy['user approve']).toBeGreaterThan(0)
    expect(d.loggedBy['user deny']).toBeGreaterThan(0)
    expect(d.approvedRan).toBeGreaterThan(0)
    // input rounds were asked and answered both ways through store.answer, and answers reached bodies
    expect(r.problems).toEqual([])
    expect(r.made).toBeGreaterThan(0)
    expect(r.providedBy['user accept']).toBeGreaterThan(0)
    expect(r.providedBy['user decline']).toBeGreaterThan(0)
    expect(r.reachedOnce).toBeGreaterThan(0)
    expect((inbox.rows[0] as { n: number }).n).toBe(0)
    expect(restarts).toBe(RESTARTS)
    expect(ofServing).toBe(KILLS)
  }, 900_000)
})
