/**
 * `turnlog fuzz [--runs N] [--seed S] [--path P] [--hooks MODULE] [--tools MODULE] [--out FILE]
 * [--stuck-after MS] [--approvals] [--inputs] [--json]`: runs `fuzzAgent` (the scheduled model-based fuzzer of
 * turnlog/testing) against your tools and hooks. MODULE is a JS module you name (never code from
 * a log): `--tools` exports `tools` (or a default export): an array of `defineTool` results, or a
 * function returning one (called per run: fresh state); `--hooks` exports `hooks` (or a default
 * export): an object as `createAgent({ hooks })`, or a function returning one.
 *
 * Exit 0 with an `OK` line and the census when every run holds every invariant. Exit 1 with the
 * violated invariant and its message, the seed and path, the shrunk scenario, what was pending (a
 * hang), the failing run's log (printed, or written as JSONL to `--out FILE`) and the one command
 * that replays exactly that failure. `--json` prints one JSON object instead.
 *
 * As a CI gate for your tools (issue 27.7): the census counts each tool's outcomes (`tool weather
 * ok 40 · TOOL_ERROR 3`); `--fail-on tool-error,invalid-output,timeout` exits 1 when one of your
 * tools (the `--tools` module's, not the fuzzer's own `fuzz_*`) reached such a contained failure,
 * naming the tool, the count and the first such call; `--check MODULE` (exports `check(run)`, as
 * `fuzzAgent({ check })`) adds your own property, whose throw fails the run as `CHECK`.
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { AgentOptions } from '../../agent/types.js'
import { writeLog } from '../../replay/write-log.js'
import { formatCensus } from '../../testing/fuzz/census.js'
import { FuzzFailure } from '../../testing/fuzz/failure.js'
import type { FuzzAgentOptions } from '../../testing/fuzz/types.js'
import type { AnyTool } from '../../tools/types.js'
import type { LogEvent } from '../../events/envelope.js'
import { inline, json } from '../escape.js'
import { EXIT_OK, EXIT_VIOLATIONS, UsageError, parseCount } from '../errors.js'
import { colorsFor, writeLines, type CliIo } from '../io.js'
import { checkOutput, outputExists } from '../outputs.js'
import { TurnlogError } from '../../events/errors.js'
import { loadFuzzer, loadProgress } from '../optional.js'

export interface FuzzCommandOptions {
  runs?: string
  seed?: string
  path?: string
  hooks?: string
  tools?: string
  out?: string
  /** Replace an existing --out FILE. */
  force?: boolean
  stuckAfter?: string
  json?: boolean
  /** Comma-separated kinds of contained tool failure that fail the run (exit 1): `tool-error`,
   * `invalid-output`, `timeout` (issue 27.7: a CI gate for your tools). */
  failOn?: string
  /** A module exporting `check(run)` (as `fuzzAgent({ check })`): your own property, run after every run. */
  check?: string
  /** Approvals (`fuzzAgent({ approvals: true })`, docs/spec/lifecycle.md §9). */
  approvals?: boolean
  /** Input rounds (`fuzzAgent({ inputs: true })`, docs/spec/lifecycle.md §11): the census gains `input: …` rows. */
  inputs?: boolean
}

/** `--fail-on` kinds → the `tool/result` error code each one counts. */
export const FAIL_ON: Record<string, string> = {
  'tool-error': 'TOOL_ERROR',
  'invalid-output': 'INVALID_TOOL_OUTPUT',
  timeout: 'TOOL_TIMEOUT',
}

/** One failed gate: a tool of yours and a failure kind it reached. */
export interface GateFailure {
  kind: string
  tool: string
  code: string
  count: number
  /** Every result of that tool. */
  calls: number
  /** The first such call: its arguments (as logged) and the error message. */
  example?: { arguments: string; message: string }
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
const isCheck = (v: unknown): v is NonNullable<FuzzAgentOptions['check']> => typeof v === 'function'
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
  if (out !== undefined) await checkOutput(out, { inputs: [], force: opts.force === true, field: '--out' })
  const failOn = parseFailOn(opts.failOn)
  const tools = opts.tools ? await loadExport(opts.tools, 'tools', io, isTools) : undefined
  const hooks = opts.hooks ? await loadExport(opts.hooks, 'hooks', io, isHooks) : undefined
  const check = opts.check ? await loadExport(opts.check, 'check', io, isCheck) : undefined
  // the gate counts your tools only (the fuzzer's own `fuzz_*` fail on purpose)
  const yours = new Set(tools === undefined ? [] : toolNames(tools))
  const examples = new Map<string, { arguments: string; message: string }>()
  const c = colorsFor(io)
  // fast-check and cli-progress are optional peers, loaded only here (cli/optional.ts)
  const { fuzzAgent } = await loadFuzzer()
  const progress = io.progress && !opts.json ? await loadProgress() : null
  const bar = progress
    ? new progress.SingleBar({ format: 'fuzz [{bar}] {value}/{total} runs', stream: io.progressStream ?? process.stderr, clearOnComplete: true })
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
    ...(check ? { check } : {}),
    ...(opts.approvals === true ? { approvals: true } : {}),
    ...(opts.inputs === true ? { inputs: true } : {}),
    onRun: (events) => {
      bar?.update(++passed)
      if (failOn.length) collectExamples(events, yours, new Set(failOn.map((k) => FAIL_ON[k]!)), examples)
    },
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
  const gate = gateFailures(report.census.perTool, yours, failOn, examples)
  if (opts.json) {
    io.stdout(json({ ok: gate.length === 0, numRuns: report.numRuns, seed: report.seed, seconds, ...(failOn.length ? { gate } : {}), census: report.census }) + '\n')
    return gate.length ? EXIT_VIOLATIONS : EXIT_OK
  }
  const lines = gate.length
    ? [`${c.red('FAIL')} fuzz: every invariant held over ${numRuns} runs (seed ${seed}, ${seconds.toFixed(1)} s), but your tools failed:`,
        ...gate.flatMap((g) => [
          `  --fail-on ${g.kind}: tool '${g.tool}' ${g.code} on ${g.count} of ${g.calls} calls`,
          ...(g.example ? [`    e.g. ${g.tool}(${inline(clip(g.example.arguments))}) → ${inline(clip(g.example.message))}`] : []),
        ])]
    : [`${c.green('OK')} fuzz: ${numRuns} runs, seed ${seed}, every invariant held (${seconds.toFixed(1)} s)`]
  lines.push(...formatCensus(report.census))
  const silent = (tools && Array.isArray(tools) ? tools : []).filter((t) => !report.census.bodies[t.name])
  for (const t of silent) lines.push(c.yellow(`  warning: the body of tool '${t.name}' never ran (every call was refused before it)`))
  writeLines(io.stdout, lines)
  return gate.length ? EXIT_VIOLATIONS : EXIT_OK
}

function parseFailOn(v: string | undefined): string[] {
  if (v === undefined) return []
  const kinds = v.split(',').map((k) => k.trim()).filter(Boolean)
  for (const k of kinds) {
    if (!Object.prototype.hasOwnProperty.call(FAIL_ON, k)) throw new UsageError(`--fail-on: unknown kind '${k}' (${Object.keys(FAIL_ON).join(', ')})`)
  }
  if (!kinds.length) throw new UsageError(`--fail-on needs a kind (${Object.keys(FAIL_ON).join(', ')})`)
  return [...new Set(kinds)]
}

function toolNames(tools: AnyTool[] | (() => AnyTool[])): string[] {
  // a factory is called once more here, as fuzzAgent does up front for the names and schemas
  const list = typeof tools === 'function' ? tools() : tools
  return Array.isArray(list) ? list.map((t) => String((t as { name?: unknown })?.name)) : []
}

/** The first failing call of each (tool, code) the gate watches: its logged arguments and message. */
function collectExamples(events: readonly LogEvent[], yours: ReadonlySet<string>, codes: ReadonlySet<string>, into: Map<string, { arguments: string; message: string }>): void {
  const calls = new Map<string, { name: string; arguments: string }>()
  for (const e of events) {
    const d = e.data as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
    if (e.type === 'tool/call') calls.set(String(d.callId), { name: String(d.name), arguments: String(d.arguments) })
    else if (e.type === 'tool/result' && d.error && codes.has(String(d.error.code))) {
      const call = calls.get(String(d.callId))
      const key = `${call?.name}\u0000${d.error.code}`
      if (call && yours.has(call.name) && !into.has(key)) into.set(key, { arguments: call.arguments, message: String(d.error.message ?? '') })
    }
  }
}

function gateFailures(perTool: Record<string, Record<string, number>>, yours: ReadonlySet<string>, failOn: readonly string[], examples: Map<string, { arguments: string; message: string }>): GateFailure[] {
  const out: GateFailure[] = []
  for (const kind of failOn) {
    const code = FAIL_ON[kind]!
    for (const tool of [...yours].sort()) {
      const counts = perTool[tool] ?? {}
      const count = counts[code] ?? 0
      if (!count) continue
      const example = examples.get(`${tool}\u0000${code}`)
      out.push({ kind, tool, code, count, calls: Object.values(counts).reduce((a, b) => a + b, 0), ...(example ? { example } : {}) })
    }
  }
  return out
}

const clip = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n)}…` : s)

/** How many events of a failing log the terminal shows without --out. */
const LOG_HEAD = 20

/** The failing log written to a new file in a new temporary directory; undefined when that fails. */
async function keepWholeLog(events: FuzzFailure['events']): Promise<string | undefined> {
  try {
    const file = join(await mkdtemp(join(tmpdir(), 'turnlog-fuzz-')), 'failing.jsonl')
    await writeLog(file, { header: { type: 'session', format: 1, id: 'fuzz', createdAt: 0 }, events })
    return file
  } catch {
    return undefined
  }
}

async function failure(f: FuzzFailure, opts: FuzzCommandOptions, out: string | undefined, io: CliIo): Promise<number> {
  const c = colorsFor(io)
  const replay = ['turnlog', 'fuzz', '--seed', String(f.seed), '--path', f.path,
    ...(opts.tools ? ['--tools', opts.tools] : []), ...(opts.hooks ? ['--hooks', opts.hooks] : []),
    ...(opts.check ? ['--check', opts.check] : []),
    ...(opts.approvals === true ? ['--approvals'] : []), ...(opts.inputs === true ? ['--inputs'] : []),
    ...(opts.stuckAfter !== undefined ? ['--stuck-after', opts.stuckAfter] : [])].map(shellWord).join(' ')
  if (out !== undefined && f.events.length > 0) {
    const header = { type: 'session' as const, format: 1 as const, id: 'fuzz', createdAt: 0 }
    try {
      await writeLog(out, { header, events: f.events }, { overwrite: opts.force === true })
    } catch (err) {
      throw TurnlogError.is(err, 'FILE_EXISTS') ? outputExists(out, '--out') : err
    }
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
  } else if (f.events.length <= LOG_HEAD) {
    lines.push(`  log (${f.events.length} events; --out FILE writes it as JSONL):`, ...f.events.map((e) => `    ${JSON.stringify(e)}`))
  } else {
    // a failing log can hold thousands of events: the terminal gets its head, a new file the
    // whole log (issue 38.17), so the rest is one `turnlog replay` away
    const kept = await keepWholeLog(f.events)
    lines.push(`  log (${f.events.length} events, the first ${LOG_HEAD} below; ${kept !== undefined ? `all of them in ${kept}` : 'the rest could not be written to a temporary file'}; --out FILE chooses where):`,
      ...f.events.slice(0, LOG_HEAD).map((e) => `    ${JSON.stringify(e)}`),
      `    … ${f.events.length - LOG_HEAD} more${kept !== undefined ? ` (turnlog replay ${shellWord(kept)})` : ''}`)
  }
  lines.push(`  replay exactly this failure: ${replay}`, ...formatCensus(f.census).map((l) => c.dim(l)))
  writeLines(io.stdout, lines)
  return EXIT_VIOLATIONS
}
