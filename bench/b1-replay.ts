/**
 * B1 replay (quality.md "Performance"): read a 1M-event JSONL log, check, decode, validate, and
 * fold surface + transcript + inbox + lifecycle, against a baseline measured in the same run:
 * read + split lines + `JSON.parse` only. Target: turnlog ≤ 2.0× the baseline time.
 *
 * - The log is generated once per run (bench/gen-log.ts: agent-shaped turns, crc32 checksums, the
 *   codec of events/jsonl.ts) into a temp dir, and removed afterwards.
 * - Baseline: the file read in 4 MiB chunks (the same I/O as `readLog`), lines split on `\n`,
 *   every line `JSON.parse`d and kept in an array (replay keeps its events too; dropping them
 *   would time the GC differently, not the parsing).
 * - turnlog: `readLog(path)` (crc on the raw bytes, UTF-8, JSON, zod validation, seq) then
 *   `replay(events)` — every reducer (surface, history, transcript, inbox, lifecycle, usage; a
 *   superset of the four the target names) folded in one pass and frozen.
 * - Median of 3 for each, interleaved (baseline, turnlog, baseline, …), a full GC before each run;
 *   `value` is median(turnlog) / median(baseline); `detail.pairedRatios` divides each turnlog run by
 *   the baseline run just before it (a busy machine shows up as spread between them).
 *   `TURNLOG_BENCH_EVENTS` shrinks the log (default 1,000,000).
 */
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readLog } from '../replay/read-log.js'
import { replay } from '../replay/replay.js'
import { collectGarbage, envInt, median, round, type BenchResult } from './common.js'
import { generateLogFile } from './gen-log.js'

export const B1_TARGET = '<= 2.0'
const RUNS = 3

/** The baseline: read + split lines + JSON.parse, keeping the parsed objects. Returns the line count. */
export async function baselineRead(file: string, chunkBytes = 4 * 1024 * 1024): Promise<unknown[]> {
  const fh = await open(file, 'r')
  const out: unknown[] = []
  try {
    let carry = ''
    const buf = Buffer.allocUnsafe(chunkBytes)
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, chunkBytes, null)
      if (bytesRead === 0) break
      const text = carry + buf.toString('utf8', 0, bytesRead)
      const lines = text.split('\n')
      carry = lines.pop()!
      for (const l of lines) if (l.length) out.push(JSON.parse(l))
    }
    if (carry.length) out.push(JSON.parse(carry))
  } finally {
    await fh.close()
  }
  return out
}

/**
 * One timed baseline run: its time and line count, not the parsed objects. (Held in the loop's
 * scope, the 1M objects stayed alive through the turnlog run that follows, whose GC then marked
 * and kept them too: measured +0.7 s on the turnlog side, 1.49x -> 1.94x paired.)
 */
async function timedBaseline(file: string): Promise<{ ms: number; lines: number }> {
  const t = performance.now()
  const parsed = await baselineRead(file)
  return { ms: performance.now() - t, lines: parsed.length }
}

export async function turnlogReplay(file: string): Promise<{ events: number; readMs: number; foldMs: number; surface: number }> {
  const t0 = performance.now()
  const log = await readLog(file)
  const t1 = performance.now()
  const state = replay(log.events)
  const t2 = performance.now()
  return { events: log.events.length, readMs: t1 - t0, foldMs: t2 - t1, surface: state.surface.seqs.length }
}

export async function benchReplay(log: (line: string) => void = () => {}): Promise<BenchResult> {
  const events = envInt('TURNLOG_BENCH_EVENTS', 1_000_000)
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-b1-'))
  try {
    const file = join(dir, 'b1.jsonl')
    const g0 = performance.now()
    const gen = await generateLogFile(file, { events })
    log(`B1: generated ${gen.events} events (${gen.turns} turns, ${(gen.bytes / 1e6).toFixed(1)} MB) in ${((performance.now() - g0) / 1000).toFixed(1)} s`)

    // one untimed warm-up of each path (JIT, page cache)
    await baselineRead(file)
    collectGarbage()
    await turnlogReplay(file)

    const base: number[] = []
    const tl: number[] = []
    const reads: number[] = []
    const folds: number[] = []
    for (let i = 0; i < RUNS; i++) {
      collectGarbage()
      const b = await timedBaseline(file)
      base.push(b.ms)
      if (b.lines !== gen.events + 1) throw new Error(`baseline read ${b.lines} lines, expected ${gen.events + 1}`)
      collectGarbage()
      const t = performance.now()
      const r = await turnlogReplay(file)
      tl.push(performance.now() - t)
      reads.push(r.readMs)
      folds.push(r.foldMs)
      if (r.events !== gen.events) throw new Error(`readLog read ${r.events} events, expected ${gen.events}`)
      log(`B1: run ${i + 1}/${RUNS}: baseline ${base[i]!.toFixed(0)} ms, turnlog ${tl[i]!.toFixed(0)} ms (read ${r.readMs.toFixed(0)} + fold ${r.foldMs.toFixed(0)})`)
    }
    const baselineMs = median(base)
    const turnlogMs = median(tl)
    return {
      value: round(turnlogMs / baselineMs),
      unit: 'x baseline',
      target: B1_TARGET,
      detail: {
        events: gen.events,
        turns: gen.turns,
        bytes: gen.bytes,
        runs: RUNS,
        baselineMs: round(baselineMs, 1),
        turnlogMs: round(turnlogMs, 1),
        readLogMs: round(median(reads), 1),
        foldMs: round(median(folds), 1),
        baselineLinesPerSec: Math.round((gen.events + 1) / (baselineMs / 1000)),
        turnlogEventsPerSec: Math.round(gen.events / (turnlogMs / 1000)),
        // each turnlog run divided by the baseline run just before it: steadier on a busy machine
        pairedRatios: tl.map((x, i) => round(x / base[i]!)),
        medianPairedRatio: round(median(tl.map((x, i) => x / base[i]!))),
        baselineRunsMs: base.map((x) => round(x, 1)),
        turnlogRunsMs: tl.map((x) => round(x, 1)),
        baseline: 'read (4 MiB chunks) + split lines + JSON.parse, objects kept',
        turnlog: 'readLog (crc32, UTF-8, JSON, zod validation, seq) + replay (all reducers, frozen)',
        node: process.version,
      },
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
