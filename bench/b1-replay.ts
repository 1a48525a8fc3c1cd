/**
 * B1 replay (bench/README.md): read a 1M-event JSONL log, check, decode, validate, and
 * fold surface + transcript + inbox + lifecycle, against a baseline measured in the same run:
 * read + split lines + `JSON.parse` only. Target: turnlog ≤ 1.2× the baseline time.
 *
 * - The log is generated once per run (bench/gen-log.ts: agent-shaped turns, crc32 checksums, the
 *   codec of events/jsonl.ts) into a temp dir, and removed afterwards.
 * - Baseline: the file read in 4 MiB chunks (the same I/O as `readLog`), lines split on `\n`,
 *   every line `JSON.parse`d and kept in an array (replay keeps its events too; dropping them
 *   would time the GC differently, not the parsing).
 * - turnlog: the log streamed through `scanLog` (crc on the raw bytes, UTF-8, nesting, JSON, zod
 *   validation, seq) into every reducer (surface, history, transcript, inbox, lifecycle, usage; a
 *   superset of the four the target names), as `turnlog replay` does; the events are not kept;
 *   the state is frozen at the end.
 * - Peak RSS: each of baseline, replay, `--at 10` and verify alone in a child process
 *   (bench/b1-child.ts, `process.resourceUsage().maxRSS`), reported beside the times.
 * - Median of 3 for each, interleaved (baseline, turnlog, baseline, …), a full GC before each run;
 *   `value` is median(turnlog) / median(baseline); `detail.pairedRatios` divides each turnlog run by
 *   the baseline run just before it (a busy machine shows up as spread between them).
 *   `TURNLOG_BENCH_EVENTS` shrinks the log (default 1,000,000).
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { LogEvent } from '../events/envelope.js'
import { applyEvent, freezeState, initialReplayState } from '../reducers/projection.js'
import { scanLog } from '../replay/read-log.js'
import { baselineRead } from './b1-baseline.js'
import { collectGarbage, envInt, median, round, type BenchResult } from './common.js'
import { generateLogFile } from './gen-log.js'

export { baselineRead } from './b1-baseline.js'

/** bench/README.md B1: ≤ 1.2× the baseline time. */
export const B1_TARGET = '<= 1.2'
const RUNS = 3

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

/**
 * turnlog's replay as `turnlog replay` runs it: the log streams through `scanLog` (crc, UTF-8,
 * nesting, JSON, zod validation, seq) into the reducers, one chunk at a time; the events are not
 * kept, the state is frozen at the end. `untilSeq` stops after that seq (`replay --at`).
 */
export async function streamedReplay(file: string, untilSeq?: number): Promise<{ events: number; surface: number }> {
  const state = initialReplayState()
  let events = 0
  await scanLog(file, untilSeq !== undefined ? { untilSeq } : {}, (batch: LogEvent[]) => {
    for (let i = 0; i < batch.length; i++) applyEvent(state, batch[i]!)
    events += batch.length
  })
  freezeState(state)
  return { events, surface: state.surface.seqs.length }
}

export async function turnlogReplay(file: string): Promise<{ events: number; readMs: number; foldMs: number; surface: number }> {
  const t0 = performance.now()
  const r = await streamedReplay(file)
  // read and fold are interleaved now (streamed): the whole time is reported as the read
  return { events: r.events, readMs: performance.now() - t0, foldMs: 0, surface: r.surface }
}

export interface PeakRss {
  mode: string
  ms: number
  maxRssKb: number
  events: number
}

/** Runs one B1 mode in a fresh process (bench/b1-child.ts) for its own peak RSS. */
export async function peakRss(mode: 'baseline' | 'replay' | 'at10' | 'verify', file: string): Promise<PeakRss> {
  const child = fileURLToPath(new URL('./b1-child.js', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, [child, mode, file], { maxBuffer: 1 << 20 })
  return JSON.parse(stdout.trim().split('\n').pop()!) as PeakRss
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
    // peak RSS, each mode alone in a child process (bench/README.md B1/B6: bounded by the folded state)
    const rss: Record<string, PeakRss> = {}
    for (const mode of ['baseline', 'replay', 'at10', 'verify'] as const) {
      rss[mode] = await peakRss(mode, file)
      log(`B1: peak RSS ${mode}: ${(rss[mode]!.maxRssKb / 1024).toFixed(0)} MB (${rss[mode]!.ms} ms, ${rss[mode]!.events} events)`)
    }
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
        peakRssMb: {
          baseline: round(rss.baseline!.maxRssKb / 1024, 1),
          replay: round(rss.replay!.maxRssKb / 1024, 1),
          replayAt10: round(rss.at10!.maxRssKb / 1024, 1),
          verify: round(rss.verify!.maxRssKb / 1024, 1),
        },
        peakRssNote: 'maxRSS of a fresh process per mode (bench/b1-child.ts); replay and verify stream (events not kept), the baseline keeps its parsed objects',
        baselineLinesPerSec: Math.round((gen.events + 1) / (baselineMs / 1000)),
        turnlogEventsPerSec: Math.round(gen.events / (turnlogMs / 1000)),
        // each turnlog run divided by the baseline run just before it: steadier on a busy machine
        pairedRatios: tl.map((x, i) => round(x / base[i]!)),
        medianPairedRatio: round(median(tl.map((x, i) => x / base[i]!))),
        baselineRunsMs: base.map((x) => round(x, 1)),
        turnlogRunsMs: tl.map((x) => round(x, 1)),
        baseline: 'read (4 MiB chunks) + split lines + JSON.parse, objects kept',
        turnlog: 'streamed: scanLog (crc32, UTF-8, nesting, JSON, zod validation, seq) into every reducer, events not kept, state frozen',
        node: process.version,
      },
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
