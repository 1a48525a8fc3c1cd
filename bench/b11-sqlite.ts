/**
 * B11 sqlite (bench/README.md): two measurements of `sqliteStore`.
 *
 * - **Appends**: B4's load (8 sessions, `TURNLOG_B4_EVENTS` agent-shaped events each, batches of
 *   `TURNLOG_B4_BATCH`, one batch awaited at a time per session, `trusted` as the agent appends)
 *   into `sqliteStore` (WAL, `synchronous = FULL`), against raw SQLite inserts of the same rows
 *   (session, seq, type, the same JSON text) in the same transactions (`BEGIN IMMEDIATE` … `COMMIT`
 *   per round of the 8 sessions' batches: the store groups the appends of one tick) on the same
 *   driver with the same pragmas, pre-encoded. value = store events/s ÷ raw
 *   events/s, median of 5 interleaved runs, each after a full GC and one untimed run of its side.
 *   Target ≥ 0.8.
 * - **The question** "which sessions are parked / due / running" over `TURNLOG_B11_SESSIONS`
 *   (10,000) sessions: the three indexed filters of `store.sessions(filter)` (median of 50), against
 *   the same answer from a JSONL directory of the same logs (every log read and folded, the lock
 *   files looked at; median of 3). Target ≤ 5 ms.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LogEvent } from '../events/envelope.js'
import { encodeEvent, encodeHeader } from '../events/jsonl.js'
import { deepFreeze } from '../events/lossless.js'
import { approvalsReducer } from '../reducers/approvals.js'
import { nextDue, schedulesReducer } from '../reducers/schedules.js'
import { readLog } from '../replay/read-log.js'
import { jsonlStore } from '../stores/jsonl/index.js'
import { openDb } from '../stores/sqlite/driver.js'
import { sqliteStore } from '../stores/sqlite/index.js'
import { collectGarbage, envInt, median, round, type BenchResult } from './common.js'
import { generateEvents } from './gen-log.js'
import { parkedLog, dueLog } from './b11-logs.js'

export const B11_APPEND_TARGET = '>= 0.8'
export const B11_QUESTION_TARGET = '<= 5'
const RUNS = 5

function batchesOf(events: readonly LogEvent[], size: number): LogEvent[][] {
  const out: LogEvent[][] = []
  for (let i = 0; i < events.length; i += size) out.push(events.slice(i, i + size))
  return out
}

async function runStore(file: string, sessions: number, batches: LogEvent[][]): Promise<number> {
  const store = sqliteStore(file)
  await store.migrate()
  const t0 = performance.now()
  await Promise.all(Array.from({ length: sessions }, async (_, s) => {
    const id = `b11-${s}`
    await store.create(id, { createdAt: 1764450000000 })
    const w = await store.open(id, 'write')
    for (const b of batches) await w.append(b, { expectedSeq: b[0]!.seq, trusted: true })
    await w.close()
  }))
  const ms = performance.now() - t0
  await store.close()
  return ms
}

/**
 * The same rows in the same transactions, pre-encoded, on the same driver and pragmas. The store
 * commits the appends its sessions ask for in one tick together (stores/sqlite/group-tx.ts), and
 * here each session's next batch is asked for in the same tick as the others': one transaction per
 * round of the sessions' batches, as the store's.
 */
async function runRaw(file: string, sessions: number, batches: Array<Array<[number, string, string]>>): Promise<number> {
  const db = openDb(file)
  db.exec('PRAGMA busy_timeout = 5000')
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = FULL')
  db.exec('CREATE TABLE ev (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, event TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID')
  const ins = db.prepare('INSERT INTO ev (session_id, seq, type, event) VALUES (?, ?, ?, ?)')
  const t0 = performance.now()
  for (const b of batches) {
    db.exec('BEGIN IMMEDIATE')
    for (let s = 0; s < sessions; s++) {
      const id = `b11-${s}`
      for (const [seq, type, text] of b) ins.run(id, seq, type, text)
    }
    db.exec('COMMIT')
    await Promise.resolve()
  }
  const ms = performance.now() - t0
  db.close()
  return ms
}

async function appends(base: string, log: (l: string) => void): Promise<BenchResult> {
  const perSession = envInt('TURNLOG_B4_EVENTS', 4096)
  const batchSize = envInt('TURNLOG_B4_BATCH', 16)
  const sessions = envInt('TURNLOG_B4_SESSIONS', 8)
  const events = generateEvents({ events: perSession }).slice(0, perSession)
  for (const e of events) deepFreeze(e)
  const batches = batchesOf(events, batchSize)
  const encoded = batches.map((b) => b.map((e) => [e.seq, e.type, JSON.stringify(e)] as [number, string, string]))
  const rawMs: number[] = []
  const storeMs: number[] = []
  for (let r = 0; r < RUNS; r++) {
    for (const which of ['raw', 'store'] as const) {
      const dir = await mkdtemp(join(base, `turnlog-b11-${which}-`))
      try {
        // a full GC, then one untimed run of the side about to be timed on a file of its own: right
        // after a forced GC JavaScript runs slowly for a while (docs/decisions/bench-settle-after-gc.md),
        // which the store (encoding, statements from JS) pays and the raw loop hardly does
        collectGarbage()
        const settle = join(dir, 'settle.db')
        await (which === 'raw' ? runRaw(settle, sessions, encoded) : runStore(settle, sessions, batches))
        const file = join(dir, 'b11.db')
        const ms = which === 'raw' ? await runRaw(file, sessions, encoded) : await runStore(file, sessions, batches)
        ;(which === 'raw' ? rawMs : storeMs).push(ms)
        log(`  B11 run ${r + 1} ${which}: ${ms.toFixed(0)} ms`)
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    }
  }
  const total = sessions * events.length
  const raw = median(rawMs)
  const store = median(storeMs)
  return {
    value: round(raw / store, 2),
    unit: 'x raw throughput',
    target: B11_APPEND_TARGET,
    detail: {
      sessions, eventsPerSession: events.length, batchSize, transactions: batches.length, runs: RUNS,
      rawMs: round(raw, 1), storeMs: round(store, 1),
      rawEventsPerSec: Math.round(total / (raw / 1000)), storeEventsPerSec: Math.round(total / (store / 1000)),
      rawRunsMs: rawMs.map((x) => round(x, 1)), storeRunsMs: storeMs.map((x) => round(x, 1)),
      pragmas: 'journal_mode = WAL, synchronous = FULL (both)', driver: sqliteStore(':memory:').driver, dir: base,
      baseline: 'INSERT of the same rows (session, seq, type, JSON text) in one BEGIN IMMEDIATE … COMMIT per round of the sessions\' batches (as the store groups them), pre-encoded',
      node: process.version,
    },
  }
}

/** n sessions: 1 in 10 parked, 1 in 10 due, 1 in 50 running, the rest finished logs. */
async function question(base: string, log: (l: string) => void): Promise<BenchResult> {
  const n = envInt('TURNLOG_B11_SESSIONS', 10_000)
  const plain = generateEvents({ events: 40 }).slice(0, 40)
  const parked = await parkedLog()
  const due = await dueLog()
  const dir = await mkdtemp(join(base, 'turnlog-b11-q-'))
  try {
    const kindOf = (i: number) => (i % 10 === 0 ? parked : i % 10 === 1 ? due : plain)
    // SQLite: built without per-commit syncs (the question does not depend on them)
    const store = sqliteStore(join(dir, 'q.db'), { synchronous: 'normal', leaseMs: 3_600_000 })
    const t0 = performance.now()
    const held = []
    for (let i = 0; i < n; i++) {
      const id = `q-${String(i).padStart(5, '0')}`
      await store.create(id, { createdAt: 1764450000000 })
      const w = await store.open(id, 'write')
      await w.append(kindOf(i), { expectedSeq: 0, trusted: true })
      if (i % 50 === 7) held.push(w)
      else await w.close()
    }
    log(`  B11 question: ${n} sessions in SQLite in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    // JSONL: the same logs, one file each, and a lock file beside each running one
    const jdir = join(dir, 'jsonl')
    const { mkdir } = await import('node:fs/promises')
    await mkdir(jdir)
    for (let i = 0; i < n; i++) {
      const id = `q-${String(i).padStart(5, '0')}`
      const ev = kindOf(i)
      await writeFile(join(jdir, `${id}.jsonl`), encodeHeader({ type: 'session', format: 1, id, createdAt: 1764450000000, checksums: 'crc32' }) + '\n' +
        ev.map((e) => encodeEvent(e, { checksums: true }) + '\n').join(''))
      if (i % 50 === 7) await writeFile(join(jdir, `${id}.lock`), JSON.stringify({ pid: process.pid, host: 'bench', token: 1, acquiredAt: Date.now() }))
    }
    const ask = async () => {
      const [p, d, r] = [await store.sessions('parked'), await store.sessions('due'), await store.sessions('running')]
      return { parked: p.length, due: d.length, running: r.length }
    }
    const sqlMs: number[] = []
    let answer = await ask()
    for (let k = 0; k < 50; k++) {
      const t = performance.now()
      answer = await ask()
      sqlMs.push(performance.now() - t)
    }
    const jstore = jsonlStore(jdir)
    const { existsSync } = await import('node:fs')
    const askJsonl = async () => {
      let p = 0
      let d = 0
      let r = 0
      const now = Date.now()
      for (const id of await jstore.list()) {
        const l = await readLog(join(jdir, `${id}.jsonl`))
        const a = approvalsReducer.initial()
        const s = schedulesReducer.initial()
        for (const e of l.events) {
          approvalsReducer.apply(a, e as LogEvent)
          schedulesReducer.apply(s, e as LogEvent)
        }
        if (a.open.length > 0 && (a.parked !== null || a.waiting !== null)) p++
        const due = nextDue(s)
        if (due !== null && due <= now) d++
        if (existsSync(join(jdir, `${id}.lock`))) r++
      }
      return { parked: p, due: d, running: r }
    }
    const jsonlMs: number[] = []
    let janswer = await askJsonl()
    for (let k = 0; k < 3; k++) {
      const t = performance.now()
      janswer = await askJsonl()
      jsonlMs.push(performance.now() - t)
      log(`  B11 question over JSONL: ${jsonlMs[k]!.toFixed(0)} ms`)
    }
    for (const w of held) await w.close()
    await store.close()
    const sql = median(sqlMs)
    return {
      value: round(sql, 2),
      unit: 'ms',
      target: B11_QUESTION_TARGET,
      detail: {
        sessions: n, answer, jsonlAnswer: janswer, sqliteMs: round(sql, 2), sqliteRunsMs: sqlMs.slice(0, 10).map((x) => round(x, 2)),
        jsonlMs: round(median(jsonlMs), 0), jsonlRunsMs: jsonlMs.map((x) => round(x, 0)), speedup: round(median(jsonlMs) / sql, 0),
        how: 'store.sessions(parked|due|running): three indexed statements; JSONL: every log read and folded (approvals, schedules), lock files looked at',
      },
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

export async function benchSqlite(log: (line: string) => void = () => {}): Promise<Record<string, BenchResult>> {
  const base = process.env.TURNLOG_BENCH_DIR || tmpdir()
  return { B11: await appends(base, log), B11Q: await question(base, log) }
}
