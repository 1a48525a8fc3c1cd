/**
 * `turnlog export LOG --format FORMAT [-o OUT] [--force]`: the session in another tool's format:
 * `chrome-trace` (the timeline, for Perfetto and chrome://tracing) or `otlp-json` (OpenTelemetry
 * spans). Each format is one entry of `FORMATS` (its converter lives in its own file); without
 * `-o` the document goes to stdout. OUT is never the log itself and is never overwritten without
 * `--force`.
 */
import { realpathSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { TurnlogError, type LogEvent } from '../../events/index.js'
import { verify } from '../../replay/verify.js'
import { EXIT_OK, UsageError } from '../errors.js'
import { chromeTrace } from '../export/chrome-trace.js'
import { colorsFor, type CliIo } from '../io.js'
import { json } from '../escape.js'
import { loadLog } from '../load.js'
import { otlpJsonExport } from './export-otlp.js'

export interface ExportCommandOptions {
  format?: string
  output?: string
  force?: boolean
}

type Converter = (sessionId: string, events: readonly LogEvent[], version: string) => { text: string; summary: string }

/** The export formats: name → converter. Add a format with one entry. */
export const FORMATS: Record<string, Converter> = {
  'chrome-trace': (sessionId, events) => ({
    text: json(chromeTrace(events, sessionId, verify(events).violations)) + '\n',
    summary: `Trace Event Format, ${events.length} events (open in ui.perfetto.dev or chrome://tracing)`,
  }),
  'otlp-json': otlpJsonExport,
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return p
  }
}

export async function exportCommand(logArg: string, opts: ExportCommandOptions, io: CliIo, version: string): Promise<number> {
  const names = Object.keys(FORMATS).join(', ')
  if (opts.format === undefined) throw new UsageError(`export needs --format (${names})`)
  if (!Object.prototype.hasOwnProperty.call(FORMATS, opts.format)) throw new UsageError(`unknown --format ${opts.format} (known: ${names})`)
  const convert = FORMATS[opts.format]!
  const log = await loadLog(logArg, io)
  const { text, summary } = convert(log.header.id, log.events, version)
  if (!opts.output || opts.output === '-') {
    io.stdout(text)
    return EXIT_OK
  }
  const out = resolve(io.cwd ?? process.cwd(), opts.output)
  if (log.file && realOrSelf(out) === realOrSelf(log.file)) {
    throw new TurnlogError('INVALID_ARGUMENT', 'OUT is the log itself; a log is never rewritten', { file: out, field: '-o' })
  }
  try {
    await writeFile(out, text, { flag: opts.force === true ? 'w' : 'wx' })
  } catch (e) {
    if ((e as { code?: unknown }).code === 'EEXIST') {
      throw new TurnlogError('FILE_EXISTS', 'refusing to overwrite an existing file (pass --force)', { file: out })
    }
    throw e
  }
  io.stdout(`${colorsFor(io).green('exported')} ${logArg} → ${opts.output}: ${summary}\n`)
  return EXIT_OK
}
