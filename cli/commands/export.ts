/**
 * `turnlog export LOG --format FORMAT [-o OUT]`: the session's timeline in another tool's format.
 * Formats are a table (`FORMATS`): one entry per format, a function from the log to the text.
 */
import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import type { LogHeader } from '../../events/jsonl.js'
import { verify } from '../../replay/verify.js'
import { EXIT_OK } from '../errors.js'
import type { CliIo } from '../io.js'
import { loadLog } from '../load.js'
import { chromeTrace } from '../export/chrome-trace.js'

export interface ExportInput {
  header: LogHeader
  events: readonly LogEvent[]
  file: string
}

export interface ExportFormat {
  description: string
  /** The exported text (written as is). */
  render(log: ExportInput): string | Promise<string>
}

/** Every format `--format` accepts. Add a format with one entry. */
export const FORMATS: Record<string, ExportFormat> = {
  'chrome-trace': {
    description: 'Trace Event Format JSON for Perfetto (ui.perfetto.dev) and chrome://tracing',
    render: (log) => JSON.stringify(chromeTrace(log.events, log.header.id, verify(log.events).violations)),
  },
}

export interface ExportCommandOptions {
  format?: string
  output?: string
}

export async function exportCommand(logArg: string, opts: ExportCommandOptions, io: CliIo): Promise<number> {
  const names = Object.keys(FORMATS)
  const format = opts.format === undefined ? undefined : FORMATS[opts.format]
  if (!format || !Object.prototype.hasOwnProperty.call(FORMATS, opts.format!)) {
    throw new TurnlogError('INVALID_ARGUMENT', `--format must be one of: ${names.join(', ')}`, { field: '--format', info: { given: opts.format ?? null } })
  }
  const log = await loadLog(logArg, io)
  const text = await format.render(log)
  if (opts.output === undefined || opts.output === '-') {
    io.stdout(text.endsWith('\n') ? text : `${text}\n`)
    return EXIT_OK
  }
  const out = resolve(io.cwd ?? process.cwd(), opts.output)
  if (out === log.file) throw new TurnlogError('INVALID_ARGUMENT', 'OUT is the log itself; a log is never rewritten', { file: out, field: '-o' })
  await writeFile(out, text)
  io.stdout(`wrote ${opts.output} (${opts.format}, ${log.events.length} events)\n`)
  return EXIT_OK
}
