/**
 * `turnlog export LOG --format FORMAT [-o OUT] [--force]`: the spans of a session in a trace
 * format. Each format is one entry of `FORMATS` (its converter lives in its own file); without
 * `-o` the document goes to stdout.
 */
import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { TurnlogError, type LogEvent } from '../../events/index.js'
import { EXIT_OK, UsageError } from '../errors.js'
import { colorsFor, type CliIo } from '../io.js'
import { loadLog } from '../load.js'
import { otlpJsonExport } from './export-otlp.js'

export interface ExportCommandOptions {
  format?: string
  output?: string
  force?: boolean
}

type Converter = (sessionId: string, events: readonly LogEvent[], version: string) => { text: string; summary: string }

/** The export formats: name → converter. */
export const FORMATS: Record<string, Converter> = {
  'otlp-json': otlpJsonExport,
}

export async function exportCommand(logArg: string, opts: ExportCommandOptions, io: CliIo, version: string): Promise<number> {
  const names = Object.keys(FORMATS).join(', ')
  if (opts.format === undefined) throw new UsageError(`export needs --format (${names})`)
  const convert = FORMATS[opts.format]
  if (convert === undefined) throw new UsageError(`unknown --format ${opts.format} (known: ${names})`)
  const log = await loadLog(logArg, io)
  const { text, summary } = convert(log.header.id, log.events, version)
  if (!opts.output) {
    io.stdout(text)
    return EXIT_OK
  }
  const out = resolve(io.cwd ?? process.cwd(), opts.output)
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
