/**
 * `turnlog export LOG --format FORMAT [-o OUT] [--force]`: the session in another tool's format:
 * `chrome-trace` (the timeline, for Perfetto and chrome://tracing) or `otlp-json` (OpenTelemetry
 * spans). Each format is one entry of `FORMATS` (its converter lives in its own file); without
 * `-o` the document goes to stdout. OUT is never the log itself and is never overwritten without
 * `--force`. `--agent-name NAME` names the agent: `gen_ai.agent.name` and `invoke_agent NAME` on
 * the spans, the process name in the trace. `--children` adds the child sessions read from beside
 * LOG: nested under their calls' spans (otlp-json), or as processes of their own on the parent's
 * time base with an arrow from each spawning call (chrome-trace, cli/export/chrome-family.ts).
 */
import { resolve } from 'node:path'
import type { LogEvent } from '../../events/index.js'
import { verify } from '../../replay/verify.js'
import { EXIT_OK, UsageError } from '../errors.js'
import { chromeTraceFamily } from '../export/chrome-family.js'
import { chromeTrace } from '../export/chrome-trace.js'
import { inline, json } from '../escape.js'
import { colorsFor, type CliIo } from '../io.js'
import { loadLog, resolveLogPath } from '../load.js'
import { checkOutput, writeOutput } from '../outputs.js'
import { displayLog, isStoreUrl } from '../pg.js'
import type { SemconvMode } from '../../otel/attributes.js'
import { otlpJsonExport } from './export-otlp.js'
import { loadChildren, type ChildLogs } from '../family.js'

export interface ExportCommandOptions {
  format?: string
  output?: string
  force?: boolean
  agentName?: string
  /** Also export the child sessions (read from beside LOG, recursively) under their spawning calls. */
  children?: boolean
  /** otlp-json: the GenAI attribute names (`latest`, `dup`, `v1.36`); wins over `OTEL_SEMCONV_STABILITY_OPT_IN`. */
  semconv?: string
}

/** What every converter may use besides the events: the package version, the agent's name. */
export interface ConvertOptions {
  version: string
  agentName?: string
  /** `--children`: the child sessions' logs (otlp-json nests their spans under the spawning calls). */
  children?: ChildLogs[]
  /** `--semconv` (otlp-json) */
  semconv?: SemconvMode
}

type Converter = (sessionId: string, events: readonly LogEvent[], opts: ConvertOptions) => { text: string; summary: string }

/** The export formats: name → converter. Add a format with one entry. */
export const FORMATS: Record<string, Converter> = {
  'chrome-trace': (sessionId, events, opts) => ({
    text: json(opts.children !== undefined
      ? chromeTraceFamily({ sessionId, events, children: opts.children }, opts.agentName)
      : chromeTrace(events, sessionId, verify(events).violations, opts.agentName)) + '\n',
    summary: `Trace Event Format, ${events.length} events${opts.children !== undefined ? `, ${familySize(opts.children)} child session(s) as processes of their own` : ''} (open in ui.perfetto.dev or chrome://tracing)`,
  }),
  'otlp-json': (sessionId, events, opts) => otlpJsonExport(sessionId, events, opts.version, opts.agentName, opts.children, opts.semconv),
}

function familySize(cs: readonly ChildLogs[]): number {
  return cs.reduce((n, c) => n + 1 + familySize(c.tree.children), 0)
}

export async function exportCommand(logArg: string, opts: ExportCommandOptions, io: CliIo, version: string): Promise<number> {
  const names = Object.keys(FORMATS).join(', ')
  if (opts.format === undefined) throw new UsageError(`export needs --format (${names})`)
  if (!Object.prototype.hasOwnProperty.call(FORMATS, opts.format)) throw new UsageError(`unknown --format ${opts.format} (known: ${names})`)
  const convert = FORMATS[opts.format]!
  const agentName = opts.agentName?.trim()
  if (agentName === '') throw new UsageError('--agent-name must not be empty')
  const semconv = opts.semconv as SemconvMode | undefined
  if (semconv !== undefined && opts.format !== 'otlp-json') throw new UsageError('--semconv names OpenTelemetry attributes: it goes with --format otlp-json')
  const toStdout = !opts.output || opts.output === '-'
  const out = toStdout ? undefined : resolve(io.cwd ?? process.cwd(), opts.output!)
  const rule = { inputs: isStoreUrl(logArg) ? [] : [resolveLogPath(logArg, io)], force: opts.force === true, field: '-o' }
  if (out !== undefined) await checkOutput(out, rule)
  const log = await loadLog(logArg, io)
  const c = colorsFor(io)
  const children = opts.children === true
    ? await loadChildren(logArg, log.events, io, (child, callId) => io.stderr(`${c.yellow('warning')}: child session ${inline(child)} (call ${inline(callId)}) has no log beside ${inline(displayLog(logArg))}: its spans are left out\n`))
    : undefined
  const { text, summary } = convert(log.header.id, log.events, { version, ...(agentName !== undefined ? { agentName } : {}), ...(children !== undefined ? { children } : {}), ...(semconv !== undefined ? { semconv } : {}) })
  if (out === undefined) {
    io.stdout(text)
    return EXIT_OK
  }
  await writeOutput(out, text, rule)
  io.stdout(`${c.green('exported')} ${inline(displayLog(logArg))} → ${opts.output}: ${summary}\n`)
  return EXIT_OK
}
