/**
 * `turnlog fuzz [--runs N] [--seed S] [--path P] [--hooks MODULE] [--tools MODULE] [--out FILE]
 * [--stuck-after MS] [--json]`: runs `fuzzAgent` (the scheduled model-based fuzzer of
 * turnlog/testing) against your tools and hooks. MODULE is a JS module you name (never code from
 * a log): `--tools` exports `tools` (or a default export): an array of `defineTool` results, or a
 * function returning one (called per run: fresh state); `--hooks` exports `hooks` (or a default
 * export): an object as `createAgent({ hooks })`, or a function returning one.
 *
 * Exit 0 with an `OK` line and the census when every run holds every invariant. Exit 1 with the
 * violated invariant and its message, the seed and path, the shrunk scenario, what was pending (a
 * hang), the failing run's log (printed, or written as JSONL to `--out FILE`) and the one command
 * that replays exactly that failure. `--json` prints one JSON object instead.
 */
import { SingleBar } from 'cli-progress'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { AgentOptions } from '../../agent/types.js'
import { writeLog } from '../../replay/write-log.js'
import { formatCensus } from '../../testing/fuzz/census.js'
import { FuzzFailure } from '../../testing/fuzz/failure.js'
import { fuzzAgent } from '../../testing/fuzz/fuzz-agent.js'
import type { FuzzAgentOptions } from '../../testing/fuzz/types.js'
import type { AnyTool } from '../../tools/types.js'
import { EXIT_OK, EXIT_VIOLATIONS, UsageError, parseCount } from '../errors.js'
import { colorsFor, writeLines, type CliIo } from '../io.js'
import { json } from '../escape.js'

export interface FuzzCommandOptions {
  runs?: string
  seed?: string
  path?: string
  hooks?: string
  tools?: string
  out?: string
  stuckAfter?: string
  json?: boolean
}

async function loadExport<T>(path: string, name: string, io: CliIo, check: (v: unknown) => v is T): Promise<T> {
  const url = pathToFileURL(resolve(io.cwd ?? process.cwd(), path)).href
  let mod: Record<string, unknown>
  try {
    mod = (await import(url)) as Record<string, unknown>
  } catch (err) {
    throw new UsageError(`cannot load ${path}: ${(err as Error).message}`)
  }
  const v = mod[name] ?? mod.default
  if (!check(v)) throw new UsageError(`${path} must export ${name} (or a default export) of the right shape`)
  return v
}

const isToolList = (v: unknown): v is AnyTool[] =>
  Array.isArray(v) && v.every((t) => typeof t === 'object' && t !== null && typeof (t as AnyTool).name === 'string' && typeof (t as AnyTool).execute === 'function')
const isTools = (v: unknown): v is AnyTool[] | (() => AnyTool[]) => typeof v === 'function' || isToolList(v)
const isHooks = (v: unknown): v is NonNullable<AgentOptions['hooks']> | (() => AgentOptions['hooks']) =>
  typeof v === 'function' || (typeof v === 'object' && v !== null && !Array.isArray(v))

/** A word for a POSIX shell: as is when safe, else single-quoted. */
const shellWord = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`)

export async function fuzzCommand(opts: FuzzCommandOptions, io: CliIo): Promise<number> {
  const numRuns = opts.runs !== undefined ? parseCount(opts.runs, '--runs', 1) : 200
  const seed = opts.seed !== undefined ? parseCount(opts.seed, '--seed') : Math.floor(Math.random() * 2 ** 31)
  const stuckAfterMs = opts.stuckAfter !== undefined ? parseCount(opts.stuckAfter, '--stuck-after', 1) : undefined
  if (opts.path !== undefined && opts.seed === undefined) throw new UsageError('--path replays a failure only with the --seed it was found with')
  if (opts.path !== undefined && !/^\d+(:\d+)*(\|[A-Za-z0-9+/:]*)?$/.test(opts.path)) throw new UsageError(`--path ${opts.path}: not a path printed by turnlog fuzz`)
  const out = opts.out !== undefined ? resolve(io.cwd ?? process.cwd(), opts.out) : undefined
  if (out !== undefined && existsSync(out)) throw new UsageError(`--out ${opts.out} already exists: choose another file (a log is never overwritten)`)
  const tools = opts.tools ? await loadExport(opts.tools, 'tools', io, isTools) : undefined
  const hooks = opts.hooks ? await loadExport(opts.hooks, 'hooks', io, isHooks) : undefined
  const c = colorsFor(io)
  const bar = io.progress && !opts.json
    ? new SingleBar({ format: 'fuzz [{bar}] {value}/{total} runs', stream: io.progressStream ?? process.stderr, clearOnComplete: true })
    : null
  bar?.start(numRuns, 0)
  let passed = 0
  const t0 = Date.now()
  const fuzzOpts: FuzzAgentOptions = {
    numRuns, seed,
    ...(opts.path !== undefined ? { path: opts.path } : {}),
    ...(stuckAfterMs !== undefined ? { stuckAfterMs } : {}),
    ...(tools ? { tools } : {}),
    ...(hooks ? { hooks } : {}),
    onRun: () => bar?.update(++passed),
  }
  let report
  try {
    report = await fuzzAgent(fuzzOpts)
  } catch (err) {
    bar?.stop()
    if (!(err instanceof FuzzFailure)) throw err
    return failure(err, opts, out, io)
  }
  bar?.stop()
  const seconds = (Date.now() - t0) / 1000
  if (opts.json) {
    io.stdout(json({ ok: true, numRuns: report.numRuns, seed: report.seed, seconds, census: report.census }) + '\n')
    return EXIT_OK
  }
  const lines = [`${c.green('OK')} fuzz: ${numRuns} runs, seed ${seed}, every invariant held (${seconds.toFixed(1)} s)`, ...formatCensus(report.census)]
  const silent = (tools && Array.isArray(tools) ? tools : []).filter((t) => !report.census.bodies[t.name])
  for (const t of silent) lines.push(c.yellow(`  warning: the body of tool '${t.name}' never ran (every call was refused before it)`))
  writeLines(io.stdout, lines)
  return EXIT_OK
}

async function failure(f: FuzzFailure, opts: FuzzCommandOptions, out: string | undefined, io: CliIo): Promise<number> {
  const c = colorsFor(io)
  const replay = ['turnlog', 'fuzz', '--seed', String(f.seed), '--path', f.path,
    ...(opts.tools ? ['--tools', opts.tools] : []), ...(opts.hooks ? ['--hooks', opts.hooks] : []),
    ...(opts.stuckAfter !== undefined ? ['--stuck-after', opts.stuckAfter] : [])].map(shellWord).join(' ')
  if (out !== undefined && f.events.length > 0) {
    const header = { type: 'session' as const, format: 1 as const, id: 'fuzz', createdAt: 0 }
    await writeLog(out, { header, events: f.events })
  }
  if (opts.json) {
    io.stdout(json({
      ok: false, invariant: f.invariant, message: f.detail, seed: f.seed, path: f.path, replay,
      counterexample: f.counterexample, pending: f.pending, numRuns: f.numRuns, numShrinks: f.numShrinks,
      ...(out !== undefined ? { out } : {}), events: f.events, census: f.census,
    }) + '\n')
    return EXIT_VIOLATIONS
  }
  const lines = [
    `${c.red('FAIL')} fuzz (seed ${f.seed}): ${c.bold(f.invariant)} violated: ${f.detail}`,
    `  failed after ${f.numRuns} run(s), shrunk ${f.numShrinks} time(s); path ${shellWord(f.path)}`,
    ...(f.pending.length ? [`  pending: ${f.pending.join('; ')}`] : []),
    `  counterexample: ${f.counterexample}`,
  ]
  if (out !== undefined) {
    lines.push(f.events.length > 0 ? `  log: ${f.events.length} events written to ${opts.out}` : '  log: the run logged nothing (no file written)')
  } else {
    lines.push(`  log (${f.events.length} events; --out FILE writes it as JSONL):`, ...f.events.map((e) => `    ${JSON.stringify(e)}`))
  }
  lines.push(`  replay exactly this failure: ${replay}`, ...formatCensus(f.census).map((l) => c.dim(l)))
  writeLines(io.stdout, lines)
  return EXIT_VIOLATIONS
}
