/**
 * `npm run bench [-- ID…]`: runs every benchmark in the registry (or the named ones), prints one
 * table and writes bench/results.json (bench/README.md): `{ "B1": { value, unit, target,
 * detail }, … }`. Entries of ids not run this time are kept from the previous file.
 *
 * Every entry written records `measured` (commit, date, Node version, load average) and every entry
 * kept from before gets a `stale` note when the code it measures (its `sources`) changed since
 * (bench/freshness.ts; test/bench/results-fresh.test.ts checks the notes).
 *
 * Adding a benchmark: one entry in `REGISTRY`, with the source paths it measures. Optional modules (written by others, possibly not
 * there yet) are imported by a computed specifier and skipped with a note when their file is
 * missing. A module's function returns one `BenchResult`, or several keyed by id (`{ B2, B3 }`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { isBenchResult, meetsTarget, type BenchOutput, type BenchResult } from './common.js'
import { startMeasure, staleReason, type Measured } from './freshness.js'

export interface BenchEntry {
  /** Ids this entry produces (what `npm run bench -- ID` selects). */
  ids: readonly string[]
  title: string
  /** The module next to this file (compiled name), and the function it exports. */
  module: string
  export: string
  /** Optional modules are skipped when their file does not exist. */
  optional?: boolean
  /** The files and folders whose code the figure measures (git pathspecs from the repository root). */
  sources: readonly string[]
}

/** The agent's step: what every per-step, per-agent and fuzz figure runs through. */
const STEP = ['events', 'machines', 'reducers', 'agent', 'tools', 'models', 'bench/common.ts']

export const REGISTRY: readonly BenchEntry[] = [
  { ids: ['B1'], title: 'replay 1M events vs read+split+JSON.parse', module: './b1-replay.js', export: 'benchReplay', sources: ['events', 'reducers', 'replay', 'bench/b1-replay.ts', 'bench/b1-baseline.ts', 'bench/b1-child.ts', 'bench/gen-log.ts', 'bench/common.ts'] },
  // the lead's driver benchmarks: B2 (µs per step) and B3 (growth), from bench/b2-step.ts
  { ids: ['B2', 'B3'], title: 'agent step overhead / growth', module: './b2-step.js', export: 'benchStep', optional: true, sources: [...STEP, 'bench/b2-step.ts'] },
  // the tools engineer's rolling pool benchmark, from bench/pool.ts
  { ids: ['POOL'], title: 'tool pool scheduling', module: './pool.js', export: 'benchPool', optional: true, sources: ['tools', 'bench/pool.ts', 'bench/common.ts'] },
  { ids: ['COMPACTION'], title: 'tokens per request, 2,000 steps with large tool outputs, with/without compaction', module: './compaction.js', export: 'benchCompaction', optional: true, sources: [...STEP, 'compaction', 'bench/compaction.ts'] },
  { ids: ['B4'], title: 'jsonl store append+fsync, 8 sessions, vs raw appendFile+fsync', module: './b4-stores.js', export: 'benchStores', sources: ['events', 'stores/jsonl', 'bench/b4-stores.ts', 'bench/common.ts'] },
  // postgres: a server from TURNLOG_PG_URL, else a throwaway one (scripts/pg.sh)
  { ids: ['B4PG'], title: 'postgres store appends, 8 sessions, vs raw multi-row INSERTs', module: './b4-postgres.js', export: 'benchPostgres', sources: ['events', 'stores/postgres', 'bench/b4-postgres.ts', 'bench/pg-server.ts', 'bench/common.ts'] },
  { ids: ['B8'], title: 'postgres workers: sessions/s with 1, 2, 4, 8 (16, 32, 64) worker processes, 200 ms model', module: './b8-workers.js', export: 'benchWorkers', sources: [...STEP, 'stores', 'workers', 'bench/b8-plan.ts', 'bench/b8-profile.ts', 'bench/b8-queries.ts', 'bench/b8-round.ts', 'bench/b8-worker.ts', 'bench/b8-workers.ts', 'bench/pg-server.ts'] },
  // B5: the same scripted tool loop in Vercel AI SDK, OpenAI Agents JS and LangGraph.js, from bench/b5-peers.ts
  { ids: ['B5'], title: 'peers: per-step overhead', module: './b5-peers.js', export: 'benchPeers', optional: true, sources: [...STEP, 'stores/memory.ts', 'bench/b5-peers.ts', 'bench/b5-raw-chunks.ts', 'bench/b2-step.ts', 'package-lock.json'] },
  { ids: ['B6'], title: 'memory per idle agent (10,000 agents)', module: './b6-memory.js', export: 'benchMemory', sources: [...STEP, 'replay', 'bench/b6-memory.ts', 'bench/b2-step.ts'] },
  { ids: ['B7'], title: 'fuzzAgent scenarios per second', module: './b7-fuzz.js', export: 'benchFuzz', sources: [...STEP, 'testing', 'bench/b7-fuzz.ts'] },
  // the inspector page in headless Chromium: first paint and scrub, 1k and 100k events (skips without chromium)
  // turnlog/http fan-out: one session followed by 1,000 SSE clients (the clients in a child process)
  { ids: ['B9'], title: 'turnlog/http: 1,000 SSE clients of one session, p99 delivery delay and memory per client', module: './b9-fanout.js', export: 'benchFanout', sources: [...STEP, 'http', 'stores', 'bench/b9-fanout.ts', 'bench/b9-clients.ts'] },
  { ids: ['B9X'], title: 'turnlog/http: 10,000 SSE clients of one session, p99 delivery delay and memory per client', module: './b9-fanout.js', export: 'benchFanoutWide', sources: [...STEP, 'http', 'stores', 'bench/b9-fanout.ts', 'bench/b9-clients.ts'] },
  // B11: sqliteStore appends vs raw SQLite inserts; the parked/due/running question over 10,000 sessions vs a JSONL directory
  { ids: ['B11', 'B11Q'], title: 'sqlite store appends vs raw inserts; parked/due/running over 10,000 sessions', module: './b11-sqlite.js', export: 'benchSqlite', sources: ['stores/sqlite', 'stores/jsonl', 'events', 'bench/b11-sqlite.ts', 'bench/b11-logs.ts'] },
  { ids: ['B8SQLITE'], title: 'sqlite workers: sessions/s with 1, 2, 4, 8 worker processes on one file, 200 ms model', module: './b8-sqlite.js', export: 'benchSqliteWorkers', sources: [...STEP, 'stores/sqlite', 'workers', 'bench/b8-sqlite.ts', 'bench/b8-sqlite-worker.ts'] },
  // B10: parked sessions cost nothing per session (workers; app-owned parked agents LISTEN)
  { ids: ['B10'], title: 'postgres: 10,000 parked sessions, workers and app-owned agents, nothing decided', module: './b10-parked.js', export: 'benchParked', sources: [...STEP, 'stores/postgres', 'workers', 'bench/b10-parked.ts', 'bench/pg-server.ts'] },
  // B12: one MCP call through turnlog/mcp (logged, durable) vs the MCP SDK's bare client, stdio and HTTP
  { ids: ['B12'], title: 'MCP: one tool call through turnlog/mcp vs the SDK bare client, stdio and Streamable HTTP', module: './b12-mcp.js', export: 'benchMcp', optional: true, sources: [...STEP, 'mcp', 'stores/jsonl', 'bench/b12-mcp.ts', 'bench/b12-server.ts'] },
  { ids: ['INSPECTOR'], title: 'inspector page: first paint and scrub, 1k / 100k events', module: './b6-inspector.js', export: 'benchInspector', sources: ['inspector', 'replay', 'reducers', 'cli', 'bench/b6-inspector.ts', 'bench/common.ts'] },
]

const RESULTS = fileURLToPath(new URL('../../bench/results.json', import.meta.url))
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The registry entry that produces an id. */
export function entryOf(id: string): BenchEntry | undefined {
  return REGISTRY.find((e) => e.ids.includes(id))
}

/** Every entry with its `stale` note set when the code it measures changed since it ran, else none. */
export function withStaleNotes(results: Record<string, unknown>, root = ROOT): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [id, r] of Object.entries(results)) {
    const { stale: _old, ...entry } = r as { stale?: string; measured?: Measured }
    const reason = staleReason(root, entry.measured, entryOf(id)?.sources ?? ['.'])
    out[id] = reason ? { ...entry, stale: reason } : entry
  }
  return out
}

type Log = (line: string) => void

async function runEntry(entry: BenchEntry, log: Log): Promise<Record<string, BenchResult> | 'missing'> {
  const url = new URL(entry.module, import.meta.url)
  if (!existsSync(fileURLToPath(url))) {
    if (entry.optional) return 'missing'
    throw new Error(`${entry.module} is missing (run npm run build)`)
  }
  const mod = (await import(url.href)) as Record<string, unknown>
  const fn = mod[entry.export]
  if (typeof fn !== 'function') throw new Error(`${entry.module} does not export a function ${entry.export}`)
  const out = (await (fn as (log: Log) => Promise<BenchOutput>)(log)) as unknown
  if (isBenchResult(out)) return { [entry.ids[0]!]: out }
  if (typeof out === 'object' && out !== null) {
    const res: Record<string, BenchResult> = {}
    for (const [id, r] of Object.entries(out)) if (isBenchResult(r)) res[id] = r
    if (Object.keys(res).length) return res
  }
  throw new Error(`${entry.module} ${entry.export}() returned no result ({ value, unit, target, detail })`)
}

function fmt(x: number): string {
  return Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2)
}

export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  const wanted = new Set(argv.map((a) => a.toUpperCase()))
  const known = new Set(REGISTRY.flatMap((e) => e.ids))
  for (const w of wanted) {
    if (!known.has(w)) {
      process.stderr.write(`unknown benchmark '${w}'; known: ${[...known].join(', ')}\n`)
      return 2
    }
  }
  const entries = REGISTRY.filter((e) => wanted.size === 0 || e.ids.some((id) => wanted.has(id)))
  const log: Log = (l) => void process.stderr.write(l + '\n')
  const results: Record<string, BenchResult & { measured: Measured }> = {}
  const rows: string[][] = []
  let failed = false
  for (const e of entries) {
    const t0 = performance.now()
    log(`running ${e.ids.join('/')}: ${e.title}`)
    try {
      const measure = startMeasure(ROOT, e.sources)
      const r = await runEntry(e, log)
      const measured = measure.finish()
      const secs = ((performance.now() - t0) / 1000).toFixed(1)
      if (r === 'missing') {
        rows.push([e.ids.join('/'), e.title, '—', '', '', 'not present', secs])
        continue
      }
      for (const [id, res] of Object.entries(r)) {
        if (wanted.size && !wanted.has(id) && !e.ids.some((x) => wanted.has(x))) continue
        results[id] = { ...res, measured }
        const ok = meetsTarget(res.value, res.target)
        rows.push([id, e.title, fmt(res.value), res.unit, res.target, ok === null ? '?' : ok ? 'pass' : 'MISS', secs])
      }
    } catch (err) {
      failed = true
      rows.push([e.ids.join('/'), e.title, 'error', '', '', String((err as Error)?.message ?? err).slice(0, 60), ''])
      log(String((err as Error)?.stack ?? err))
    }
  }
  const head = ['id', 'benchmark', 'value', 'unit', 'target', 'result', 's']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (r: string[]) => r.map((c, i) => (i === 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd()
  process.stdout.write([line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n') + '\n')

  let previous: Record<string, unknown> = {}
  if (existsSync(RESULTS)) {
    try {
      previous = JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>
    } catch {
      previous = {}
    }
  }
  if (Object.keys(results).length) {
    writeFileSync(RESULTS, JSON.stringify(withStaleNotes({ ...previous, ...results }), null, 2) + '\n')
    process.stdout.write(`wrote bench/results.json (${Object.keys(results).join(', ')})\n`)
  }
  return failed ? 1 : 0
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then((code) => (process.exitCode = code), (err: unknown) => {
    process.stderr.write(String((err as Error)?.stack ?? err) + '\n')
    process.exitCode = 1
  })
}
