/**
 * The real-process approval test on PostgreSQL (issue 21 "Tests that must exist"; docs/spec/lifecycle.md §9,
 * R9, R10, L17): 3 worker processes serve 40 sessions whose every tool call needs approval; this
 * process decides open approvals at random moments (another process than every worker) while
 * workers are SIGKILLed at random times and replaced (>= 50 kills). At the end: every approval is
 * decided exactly once in its log, every `tool/call` body ran at most once (R10, counted in a side
 * file the tool appends to), every approved call that has an `ok` result ran exactly once, every
 * sent message is answered, every log verifies, and nothing holds a lease.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TurnlogError, type EventOf, type LogEvent } from '../../events/index.js'
import { approvalsReducer } from '../../reducers/approvals.js'
import { postgresStore, type PostgresStore } from '../../stores/postgres/index.js'
import { childLib, ROOT } from '../stores/child-lib.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { account, accountingLine } from '../stores/postgres/accounting.js'
import { answered, readAll, until, verifyOk } from '../stores/postgres/helpers.js'

const WORKER = fileURLToPath(new URL('./children/pg-approval-worker.mjs', import.meta.url))
const SESSIONS = 40
const KILLS = 50
let lib = ''
const dirs: string[] = []
const stores: PostgresStore[] = []
beforeAll(() => {
  lib = childLib()
}, 300_000)
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('approvals on PostgreSQL under SIGKILL (R9, R10, L17)', () => {
  it(`R10: 3 workers, ${SESSIONS} sessions, >= ${KILLS} SIGKILLs, decisions from another process: each approval decided once, each body at most once, every message answered`, async () => {
    const url = await freshDb('chaos')
    const store = postgresStore({ connectionString: url })
    stores.push(store)
    await store.migrate()
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-apchaos-'))
    dirs.push(dir)
    const count = join(dir, 'count')
    let seed = 1
    let n = 0
    const spawnWorker = () => spawn(process.execPath, [WORKER, lib, url, String(seed++), `w${n++}`, '1500', count], { cwd: ROOT, stdio: 'ignore' })
    const workers = [spawnWorker(), spawnWorker(), spawnWorker()]
    const ids = Array.from({ length: SESSIONS }, (_, i) => `c${i}`)
    const sent = new Map<string, string>()
    for (const id of ids) sent.set(id, await store.send(id, `delete ${id}`))

    const figures = { kills: 0, decisions: 0, refused: 0, approvals: 0 }
    let deciding = true
    const decider = (async () => {
      let r = 7
      const rnd = () => ((r = (r * 1103515245 + 12345) >>> 0) / 2 ** 32)
      while (deciding) {
        const id = ids[Math.floor(rnd() * ids.length)]!
        const s = approvalsReducer.initial()
        for (const e of await readAll(store, id)) approvalsReducer.apply(s, e)
        for (const a of s.open) {
          try {
            await store.decide(id, a, rnd() < 0.75 ? { kind: 'approve' } : { kind: 'deny', reason: 'chaos' })
            figures.decisions++
          } catch (err) {
            if (!TurnlogError.is(err, 'APPROVAL_DECIDED')) throw err
            figures.refused++
          }
        }
        await sleep(Math.floor(rnd() * 40))
      }
    })()
    let k = 3
    const rndK = () => ((k = (k * 1664525 + 1013904223) >>> 0) / 2 ** 32)
    while (figures.kills < KILLS) {
      await sleep(100 + Math.floor(rndK() * 300))
      const i = Math.floor(rndK() * workers.length)
      workers[i]!.kill('SIGKILL')
      figures.kills++
      workers[i] = spawnWorker()
    }
    const done = async () => {
      for (const id of ids) {
        const ev = await readAll(store, id)
        if (answered(ev).unanswered.length > 0 || !ev.some((e) => e.type === 'turn/end')) return false
        const s = approvalsReducer.initial()
        for (const e of ev) approvalsReducer.apply(s, e)
        if (s.open.length > 0) return false
      }
      const r = await store.pool.query('SELECT count(*)::int AS n FROM turnlog_sessions WHERE lease_owner IS NOT NULL OR pending > 0')
      return (r.rows[0] as { n: number }).n === 0
    }
    try {
      await until(done, 'every session answered and handed back', 240_000)
    } finally {
      deciding = false
      await decider
      for (const w of workers) w.kill('SIGTERM')
    }
    const runs = new Map<string, number>()
    for (const line of (await readFile(count, 'utf8').catch(() => '')).split('\n').filter(Boolean)) runs.set(line, (runs.get(line) ?? 0) + 1)
    let expectedRuns = 0
    let loggedDecisions = 0
    for (const id of ids) {
      const ev = await readAll(store, id)
      expect(verifyOk(ev), id).toEqual([])
      const decided = ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided')
      const requested = ev.filter((e) => e.type === 'tool/approval-requested')
      figures.approvals += requested.length
      loggedDecisions += decided.length
      expect(new Set(decided.map((e) => e.data.approvalId)).size, id).toBe(decided.length) // once each
      expect(decided.length, id).toBe(requested.length)
      for (const e of ev.filter((x): x is EventOf<'tool/call'> => x.type === 'tool/call')) {
        const ran = runs.get(`${id} ${e.data.turn} ${e.data.callId}`) ?? 0 // per tool/call: its turn and id
        expect(ran, `${id} turn ${e.data.turn} ${e.data.callId}`).toBeLessThanOrEqual(1) // R10
        const result = ev.find((x) => x.type === 'tool/result' && (x.data as { callId: string }).callId === e.data.callId && (x.data as { turn: number }).turn === e.data.turn) as EventOf<'tool/result'> | undefined
        if (result !== undefined && !(result.data as { error?: unknown }).error) {
          expect(ran, `${id} turn ${e.data.turn} ${e.data.callId} ok result`).toBe(1)
          expectedRuns++
        }
      }
    }
    // every acknowledged message answered once or named as given up (docs/spec/lifecycle.md §8: a turn killed
    // before it entered its prompt is re-run with a resume copy of it, and after maxResumeRuns the
    // message is given up by name), none lost, none answered twice (the faults tests' accounting)
    const acc = await account(store, new Map([...sent].map(([sid, mid]) => [sid, [mid]])))
    expect(acc.problems).toEqual([])
    expect(acc.answered + acc.givenUp).toBe(SESSIONS)
    console.log(`approval chaos accounting: ${accountingLine(acc)}`)
    const counted = [...runs.values()].reduce((a, b) => a + b, 0)
    console.log(`approval chaos: kills ${figures.kills}, approvals ${figures.approvals}, decisions logged ${loggedDecisions} (store.decide accepted ${figures.decisions}, refused ${figures.refused}), body runs with an ok result ${expectedRuns}, counted runs ${counted}`)
    expect(figures.kills).toBeGreaterThanOrEqual(KILLS)
  }, 600_000)
})
