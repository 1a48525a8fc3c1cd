/**
 * B4 stores (bench/README.md): append throughput with durability (an fsync per batch),
 * 8 sessions in parallel, against a baseline measured in the same run: raw `FileHandle.appendFile`
 * + `sync()` of the same bytes in the same batches. Target: jsonl ≥ 0.5× raw.
 *
 * - Events: agent-shaped turns (bench/gen-log.ts), `TURNLOG_B4_EVENTS` per session (default
 *   4,096), appended in batches of `TURNLOG_B4_BATCH` (default 16: about one agent step's events),
 *   one batch awaited at a time per session, 8 sessions (`TURNLOG_B4_SESSIONS`) at once.
 * - jsonl: `jsonlStore(dir)`: create, open for write (lock file, fence), then per batch the store
 *   path as the agent's persistence calls it (`trusted`: its Session validated and froze the events):
 *   seq checks, encode + crc32, fencing check (a stat of the lock file), one write, one fsync.
 *   `detail.checkedRatio` is the same with `trusted: false` (every event re-validated and checked
 *   lossless), for callers that append events of their own.
 * - raw: the exact bytes the store wrote (header + records, pre-encoded, so the baseline does no
 *   encoding at all) appended with `appendFile` + `sync` per batch, to a file opened once.
 * - value = jsonl events/s ÷ raw events/s; median of 5 interleaved runs (raw, jsonl, checked, raw, …).
 * - `TURNLOG_BENCH_DIR` picks the directory (default the OS temp dir): fsync cost depends on it.
 */
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LogEvent } from '../events/envelope.js'
import { encodeEvent, encodeHeader } from '../events/jsonl.js'
import { deepFreeze } from '../events/lossless.js'
import { jsonlStore } from '../stores/jsonl/index.js'
import { collectGarbage, envInt, median, round, type BenchResult } from './common.js'
import { generateEvents } from './gen-log.js'

// bench/README.md: JSONL >= 0.8x raw appendFile+fsync (PostgreSQL's B4PG keeps >= 0.5x)
export const B4_TARGET = '>= 0.8'
const RUNS = 5

function batchesOf(events: readonly LogEvent[], size: number): LogEvent[][] {
  const out: LogEvent[][] = []
  for (let i = 0; i < events.length; i += size) out.push(events.slice(i, i + size))
  return out
}

async function runJsonl(dir: string, sessions: number, batches: LogEvent[][], trusted: boolean): Promise<number> {
  const store = jsonlStore(dir)
  const t0 = performance.now()
  await Promise.all(Array.from({ length: sessions }, async (_, s) => {
    const id = `b4-${s}`
    await store.create(id, { createdAt: 1764450000000 })
    const w = await store.open(id, 'write')
    for (const b of batches) await w.append(b, { expectedSeq: b[0]!.seq, trusted })
    await w.close()
  }))
  return performance.now() - t0
}

async function runRaw(dir: string, sessions: number, header: Buffer, chunks: Buffer[]): Promise<number> {
  const t0 = performance.now()
  await Promise.all(Array.from({ length: sessions }, async (_, s) => {
    const fh = await open(join(dir, `raw-${s}.jsonl`), 'a')
    try {
      await fh.appendFile(header)
      await fh.sync()
      for (const c of chunks) {
        await fh.appendFile(c)
        await fh.sync()
      }
    } finally {
      await fh.close()
    }
  }))
  return performance.now() - t0
}

export async function benchStores(log: (line: string) => void = () => {}): Promise<BenchResult> {
  const perSession = envInt('TURNLOG_B4_EVENTS', 4096)
  const batchSize = envInt('TURNLOG_B4_BATCH', 16)
  const sessions = envInt('TURNLOG_B4_SESSIONS', 8)
  const events = generateEvents({ events: perSession }).slice(0, perSession)
  const batches = batchesOf(events, batchSize)
  const header = Buffer.from(encodeHeader({ type: 'session', format: 1, id: 'b4-0', createdAt: 1764450000000, checksums: 'crc32' }) + '\n')
  const chunks = batches.map((b) => Buffer.from(b.map((e) => encodeEvent(e, { checksums: true }) + '\n').join('')))
  const bytesPerSession = header.length + chunks.reduce((n, c) => n + c.length, 0)
  const base = process.env.TURNLOG_BENCH_DIR || tmpdir()
  // the agent's events are frozen by its Session (and passed as trusted): the same here
  for (const e of events) deepFreeze(e)
  const rawMs: number[] = []
  const jsonlMs: number[] = []
  const checkedMs: number[] = []
  for (let r = 0; r < RUNS; r++) {
    for (const which of ['raw', 'jsonl', 'checked'] as const) {
      const dir = await mkdtemp(join(base, `turnlog-b4-${which}-`))
      try {
        collectGarbage()
        const ms = which === 'raw'
          ? await runRaw(dir, sessions, header, chunks)
          : await runJsonl(dir, sessions, batches, which === 'jsonl')
        ;(which === 'raw' ? rawMs : which === 'jsonl' ? jsonlMs : checkedMs).push(ms)
        log(`  B4 run ${r + 1} ${which}: ${ms.toFixed(0)} ms`)
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    }
  }
  const total = sessions * events.length
  const raw = median(rawMs)
  const jsonl = median(jsonlMs)
  const rawRate = total / (raw / 1000)
  const jsonlRate = total / (jsonl / 1000)
  const checked = median(checkedMs)
  return {
    value: round(jsonlRate / rawRate, 2),
    unit: 'x raw throughput',
    target: B4_TARGET,
    detail: {
      sessions,
      eventsPerSession: events.length,
      batchSize,
      batchesPerSession: batches.length,
      fsyncsPerSession: batches.length,
      bytesPerSession,
      runs: RUNS,
      rawMs: round(raw, 1),
      jsonlMs: round(jsonl, 1),
      rawEventsPerSec: Math.round(rawRate),
      jsonlEventsPerSec: Math.round(jsonlRate),
      rawBatchesPerSec: Math.round((sessions * batches.length) / (raw / 1000)),
      jsonlBatchesPerSec: Math.round((sessions * batches.length) / (jsonl / 1000)),
      rawRunsMs: rawMs.map((x) => round(x, 1)),
      jsonlRunsMs: jsonlMs.map((x) => round(x, 1)),
      checkedMs: round(checked, 1),
      checkedRatio: round(raw / checked, 2),
      checkedRunsMs: checkedMs.map((x) => round(x, 1)),
      sqlite: 'not yet (a later issue)',
      postgres: 'not yet (a later issue)',
      dir: base,
      baseline: 'FileHandle.appendFile + sync per batch of the same pre-encoded bytes, 8 files in parallel',
      jsonl: 'jsonlStore append per batch as the agent calls it (trusted: the Session validated the events; seq check, encode + crc32, fencing check, write, fsync), 8 sessions in parallel',
      checked: 'the same with trusted: false (every event re-validated and checked lossless): checkedRatio',
      node: process.version,
    },
  }
}
