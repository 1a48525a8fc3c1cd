/**
 * `turnlog import FORMAT FILE -o OUT [--id ID] [--force]`: a conversation recorded elsewhere
 * (turnlog/import: ai-sdk-ui, openai-chat, …) as a new turnlog log that passes `verify`. The
 * header's `imported` field says where it came from and what the source could not say.
 */
import { readFileSync } from 'node:fs'
import { basename, resolve } from 'node:path'
import { TurnlogError } from '../../events/errors.js'
import { importLog } from '../../import/index.js'
import { writeLog } from '../../replay/write-log.js'
import { inline } from '../escape.js'
import { EXIT_OK, UsageError } from '../errors.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { assertNotInputs } from '../outputs.js'
import { withForceHint } from './repair.js'

export interface ImportCommandOptions {
  output?: string
  id?: string
  force?: boolean
}

export async function importCommand(format: string, fileArg: string, opts: ImportCommandOptions, io: CliIo): Promise<number> {
  if (!opts.output) throw new UsageError('import needs -o OUT')
  const cwd = io.cwd ?? process.cwd()
  const file = resolve(cwd, fileArg)
  const out = resolve(cwd, opts.output)
  assertNotInputs([file], [out])
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new TurnlogError('IO_ERROR', `cannot read ${fileArg}: ${(err as Error).message}`, { file: fileArg }, { cause: err })
  }
  const log = importLog(format, text, { file: fileArg, ...(opts.id ? { sessionId: opts.id } : { sessionId: `imported-${basename(fileArg).replace(/\.[^.]*$/, '') || format}` }) })
  try {
    await writeLog(out, log, { overwrite: opts.force === true })
  } catch (err) {
    throw withForceHint(err)
  }
  const c = colorsFor(io)
  const turns = log.events.filter((e) => e.type === 'turn/start').length
  writeHuman(io, [
    `${c.green('imported')} ${inline(fileArg)} (${format}) → ${inline(opts.output)} (session ${inline(log.header.id)})`,
    `  ${log.events.length} events, ${turns} turn${turns === 1 ? '' : 's'}; times from order, no usage, whole-block chunks (header "imported")`,
  ])
  return EXIT_OK
}
