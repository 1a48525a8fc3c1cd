/**
 * `turnlog reexec LOG --tools MODULE`: re-executes LOG against today's code with its recorded
 * model and tool outputs, and reports the first divergence with a readable diff.
 *
 * MODULE (a path, imported) exports `tools` (array of tools; the bodies are not run) and may export
 * `hooks` (an object or a function returning one), `system`, `config`, `maxParallelToolCalls`,
 * `maxStepsPerTurn`, `retry` — the agent options of the recorded session. Exit 0 when the log is
 * reproduced, 1 on a divergence, 2 on bad input.
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { TurnlogError } from '../../events/errors.js'
import { reexecute, type ReexecuteOptions } from '../../replay/reexecute.js'
import { EXIT_OK, EXIT_VIOLATIONS } from '../errors.js'
import { inline, text } from '../escape.js'
import { displayLog } from '../pg.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { loadLog } from '../load.js'
import { checkOutput } from '../outputs.js'
import { reexecReportRule, writeReexecReport } from './report.js'

export interface ReexecCommandOptions {
  tools?: string
  ignoreTime?: boolean
  /** Also write the inspector page with the first divergence side by side. */
  report?: string
  /** Replace an existing --report OUT. */
  force?: boolean
}

const PASSED = ['hooks', 'system', 'config', 'maxParallelToolCalls', 'maxStepsPerTurn', 'retry'] as const

export async function reexecCommand(logArg: string, opts: ReexecCommandOptions, io: CliIo): Promise<number> {
  if (opts.report !== undefined) await checkOutput(resolve(io.cwd ?? process.cwd(), opts.report), reexecReportRule(logArg, io, opts.force === true))
  const log = await loadLog(logArg, io)
  const options: ReexecuteOptions = { compareTime: opts.ignoreTime !== true }
  if (opts.tools !== undefined) {
    const file = resolve(io.cwd ?? process.cwd(), opts.tools)
    let mod: Record<string, unknown>
    try {
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>
    } catch (err) {
      throw new TurnlogError('INVALID_ARGUMENT', `cannot import the tools module: ${(err as Error)?.message ?? String(err)}`, { file, field: '--tools' }, { cause: err })
    }
    const tools = mod.tools ?? (mod.default as Record<string, unknown> | undefined)?.tools
    if (!Array.isArray(tools)) {
      throw new TurnlogError('INVALID_ARGUMENT', 'the tools module must export `tools` (an array of tools)', { file, field: '--tools' })
    }
    options.tools = tools
    for (const k of PASSED) if (mod[k] !== undefined) (options as Record<string, unknown>)[k] = mod[k]
  }
  const r = await reexecute(log, options)
  if (opts.report !== undefined) await writeReexecReport(opts.report, logArg, log, r.ok ? null : r.divergence, io, r.ok ? r.eventCount : undefined, opts.force === true)
  const c = colorsFor(io)
  if (r.ok) {
    writeHuman(io, [`${c.green('OK')} ${inline(displayLog(logArg))}: re-executed ${r.eventCount} events, identical to the recording`])
    return EXIT_OK
  }
  const d = r.divergence
  writeHuman(io, [
    `${c.red('DIVERGED')} ${inline(displayLog(logArg))} at seq ${d.seq} (${d.kind})`,
    ...text(d.diff).split('\n').map((l, i) => (i === 0 ? `  ${l}` : l)),
    c.dim(`  expected: ${d.expected ? inline(JSON.stringify(d.expected)) : '(nothing)'}`),
    c.dim(`  actual:   ${d.actual ? inline(JSON.stringify(d.actual)) : '(nothing)'}`),
  ])
  return EXIT_VIOLATIONS
}
