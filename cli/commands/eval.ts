/**
 * `turnlog eval DIR --model MODULE --tools MODULE [--trials N] [--junit FILE] [--report FILE] [--json]`:
 * re-runs every golden session (`*.jsonl` under DIR, or one file) with the change under test and
 * grades it (turnlog/evals `evaluate`). Exit 0 when every golden passes, 1 when one fails, 2 on bad
 * input. A progress bar on a TTY.
 *
 * `--model MODULE` exports `model`: a ModelAdapter, a StepModel, or a function `({ golden, name,
 * trial }) => model` (a fresh one per trial); `--model recorded` serves each golden's own recorded
 * responses (a harness check: every golden should pass). `--tools MODULE` exports `tools` and may
 * export the rest of the change under test and of the evaluation: `hooks`, `plugins`, `system`,
 * `config`, `from`, `toolResults`, `onUnrecorded`, `graders`, `price`, `maxCostUsd`, `passWhen`,
 * `maxParallelToolCalls`, `maxStepsPerTurn`, `retry`, `timeoutMs`.
 * `--report FILE` writes the inspector page of the first failing trial: the golden and its re-run
 * side by side, two full timelines and event lists, the first divergence marked and selected
 * (eval-report.ts). When every golden passes, no page is written (and stderr says so).
 */
import { readdirSync, realpathSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { evaluate } from '../../evals/evaluate.js'
import type { EvalReport, EvaluateOptions } from '../../evals/evaluate-types.js'
import { junitXml } from '../../evals/junit.js'
import { recordedModel } from '../../evals/model.js'
import { EXIT_OK, EXIT_VIOLATIONS, parseCount, UsageError } from '../errors.js'
import { inline } from '../escape.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { checkOutput, writeOutput } from '../outputs.js'
import { loadProgress } from '../optional.js'
import { writeEvalReport, type ReportedTrial } from './eval-report.js'

export interface EvalCommandOptions {
  model?: string
  tools?: string
  trials?: string
  junit?: string
  report?: string
  json?: boolean
  force?: boolean
}

/** What the tools module may set besides `tools`. */
const PASSED = [
  'hooks', 'plugins', 'system', 'config', 'from', 'toolResults', 'onUnrecorded', 'graders', 'price', 'maxCostUsd', 'passWhen',
  'maxParallelToolCalls', 'maxStepsPerTurn', 'retry', 'timeoutMs',
] as const

async function importModule(path: string, io: CliIo, option: string): Promise<Record<string, unknown>> {
  const file = resolve(io.cwd ?? process.cwd(), path)
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>
  } catch (err) {
    throw new UsageError(`${option} ${path}: cannot load it: ${(err as Error)?.message ?? String(err)}`)
  }
}

/**
 * The goldens: every `*.jsonl` under DIR (sorted, recursively, following links to directories
 * once: a directory reached again through a link is a cycle and is not walked twice), or DIR
 * itself when it is a file. An entry that cannot be read (a link that loops or dangles, no
 * permission) is skipped and named in `skipped` (issue 38.28: a symlink loop used to crash eval).
 */
export function findGoldens(dir: string, skipped: string[] = []): string[] {
  let st
  try {
    st = statSync(dir)
  } catch {
    throw new UsageError(`${dir}: no such file or directory`)
  }
  if (st.isFile()) return [dir]
  const out: string[] = []
  const seen = new Set<string>()
  const walk = (d: string): void => {
    let real: string
    let names: string[]
    try {
      real = realpathSync(d)
      if (seen.has(real)) return
      seen.add(real)
      names = readdirSync(d).sort()
    } catch (err) {
      skipped.push(`${d}: ${(err as NodeJS.ErrnoException)?.code ?? String(err)}`)
      return
    }
    for (const name of names) {
      const p = join(d, name)
      let s
      try {
        s = statSync(p)
      } catch (err) {
        if (name.endsWith('.jsonl') || (err as NodeJS.ErrnoException)?.code === 'ELOOP') skipped.push(`${p}: ${(err as NodeJS.ErrnoException)?.code ?? String(err)}`)
        continue
      }
      if (s.isDirectory()) walk(p)
      else if (name.endsWith('.jsonl') && s.isFile()) out.push(p)
    }
  }
  walk(dir)
  return out
}

export async function evalCommand(dirArg: string, opts: EvalCommandOptions, io: CliIo): Promise<number> {
  if (opts.model === undefined) throw new UsageError('eval needs --model MODULE (or --model recorded)')
  const trials = opts.trials !== undefined ? parseCount(opts.trials, '--trials', 1) : 1
  const dir = resolve(io.cwd ?? process.cwd(), dirArg)
  const skipped: string[] = []
  const files = findGoldens(dir, skipped)
  for (const s of skipped) writeHuman(io, [`skipped ${s}`], 'stderr')
  if (files.length === 0) throw new UsageError(`${dirArg}: no golden sessions (*.jsonl) in it`)
  // the output rule of every writer (issue 27.1), checked before the trials run: never a golden,
  // never an existing file without --force
  const cwd = io.cwd ?? process.cwd()
  const rule = (field: string) => ({ inputs: files, force: opts.force === true, field })
  if (opts.junit !== undefined) await checkOutput(resolve(cwd, opts.junit), rule('--junit'))
  if (opts.report !== undefined) await checkOutput(resolve(cwd, opts.report), rule('--report'))
  const options: Record<string, unknown> = { trials }
  if (opts.model === 'recorded') {
    options.model = ({ golden }: { golden: { events: Parameters<typeof recordedModel>[0] } }) => recordedModel(golden.events)
  } else {
    const mod = await importModule(opts.model, io, '--model')
    const m = mod.model ?? mod.default
    if (typeof m !== 'function' && (typeof m !== 'object' || m === null)) throw new UsageError(`--model ${opts.model} must export model (an adapter, or a function returning one)`)
    const isAdapter = typeof m === 'object' && m !== null && (typeof (m as { stream?: unknown }).stream === 'function' || typeof (m as { streamStep?: unknown }).streamStep === 'function')
    if (typeof m === 'object' && !isAdapter) throw new UsageError(`--model ${opts.model}: model has neither stream() nor streamStep()`)
    options.model = m
  }
  if (opts.tools !== undefined) {
    const mod = await importModule(opts.tools, io, '--tools')
    const tools = mod.tools ?? (mod.default as Record<string, unknown> | undefined)?.tools
    const list = typeof tools === 'function' ? (tools as () => unknown)() : tools
    if (!Array.isArray(list)) throw new UsageError(`--tools ${opts.tools} must export tools (an array of tools, or a function returning one)`)
    options.tools = list
    for (const k of PASSED) if (mod[k] !== undefined) options[k] = mod[k]
  }
  const names = new Map(files.map((f) => [f, relative(dir, f) || relative(io.cwd ?? process.cwd(), f)]))
  const c = colorsFor(io)
  const progress = io.progress && !opts.json ? await loadProgress() : null // an optional peer (cli/optional.ts)
  const bar = progress
    ? new progress.SingleBar({ format: 'eval [{bar}] {value}/{total} trials · {golden}', stream: io.progressStream ?? process.stderr, clearOnComplete: true })
    : null
  bar?.start(files.length * trials, 0, { golden: '' })
  let done = 0
  // the first failing trial that has a re-run (a trial can fail before it runs: a model factory that throws)
  let firstFailure: ReportedTrial | null = null
  const goldens = Object.fromEntries(files.map((f) => [names.get(f)!, f]))
  let report: EvalReport
  try {
    report = await evaluate(goldens, {
      ...(options as unknown as EvaluateOptions),
      onTrial: (t) => {
        bar?.update(++done, { golden: t.name })
        if (!t.result.pass && firstFailure === null && t.run) firstFailure = { name: t.name, file: goldens[t.name]!, trial: t.trial, run: t.run }
      },
    })
  } finally {
    bar?.stop()
  }
  if (opts.junit !== undefined) {
    await writeOutput(resolve(cwd, opts.junit), junitXml(report), rule('--junit'))
    io.stderr(`wrote ${opts.junit}\n`)
  }
  if (opts.report !== undefined) {
    const f = firstFailure as ReportedTrial | null
    if (f === null) io.stderr(`no failing trial with a re-run: ${opts.report} not written\n`)
    else await writeEvalReport(opts.report, f, io, rule('--report'))
  }
  if (opts.json) io.stdout(JSON.stringify(report) + '\n')
  else writeHuman(io, humanLines(report, c))
  return report.ok ? EXIT_OK : EXIT_VIOLATIONS
}

/** How many differing fields of the first divergence the terminal shows. */
const MAX_DIFF_LINES = 8

function humanLines(report: EvalReport, c: ReturnType<typeof colorsFor>): string[] {
  const lines: string[] = []
  for (const g of report.goldens) {
    const tag = g.pass ? c.green('PASS') : g.flaky ? c.yellow('FLAKY') : c.red('FAIL')
    const rate = g.n > 1 ? ` · pass@${g.n} ${fmt(g.passAtK[g.n])} · pass^${g.n} ${fmt(g.passHatK[g.n])}` : ''
    const cost = g.costUsd !== undefined ? ` · $${g.costUsd.toFixed(4)}` : ''
    lines.push(`${tag} ${inline(g.name)}: ${g.passed}/${g.n} trials passed${rate}${cost}`)
    const t = g.trials.find((x) => !x.pass)
    if (!g.pass && t) {
      if (t.error) lines.push(`  trial ${t.trial + 1}: ${inline(t.error)}`)
      for (const r of t.graders.filter((x) => !x.pass)) lines.push(`  trial ${t.trial + 1}: ${inline(r.name)}${r.reason ? `: ${inline(r.reason)}` : ''}`)
      if (t.divergence) {
        // the header and the fields that differ (issue 38.15: the header alone named no field)
        const [head, ...fields] = t.divergence.diff.split('\n')
        lines.push(c.dim(`  first divergence: ${inline(head!)}`))
        for (const f of fields.slice(0, MAX_DIFF_LINES)) lines.push(`    ${inline(f.trim())}`)
        if (fields.length > MAX_DIFF_LINES) lines.push(c.dim(`    … ${fields.length - MAX_DIFF_LINES} more (--report FILE shows the whole re-run)`))
      }
    }
  }
  const s = report.summary
  const stopped = s.stopped === 'maxCostUsd' ? c.yellow(' · stopped at maxCostUsd') : ''
  lines.push(`${s.failed === 0 && s.goldens > 0 ? c.green('OK') : c.red('FAILED')} ${s.passed}/${s.goldens} goldens passed, ${s.trials} trials${s.flaky ? `, ${s.flaky} flaky` : ''}${s.costUsd !== undefined ? `, $${s.costUsd.toFixed(4)}` : ''}${stopped}`)
  return lines
}

function fmt(v: number | undefined): string {
  return v === undefined ? '-' : (Math.round(v * 1000) / 1000).toString()
}
