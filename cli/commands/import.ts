/**
 * `turnlog import FORMAT FILE -o OUT [--id ID] [--force]`: a conversation recorded elsewhere
 * (turnlog/import: ai-sdk-ui, openai-chat, …) as a new turnlog log that passes `verify`. The
 * header's `imported` field says where it came from and what the source could not say. Sub-agents
 * the source holds (Claude Code sidechains) are child logs written beside OUT as
 * `<child-id>.jsonl`, where `replay`, `report`, `export --children` and `verify --children` find
 * them (cli/family.ts).
 */
import { readFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { TurnlogError } from '../../events/errors.js'
import { importLog, type ImportedLog } from '../../import/index.js'
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
  // every child first, so a parent on disk never names a child that is not (L19)
  const family: Array<[string, ImportedLog]> = []
  const collect = (l: ImportedLog): void => {
    for (const c of l.children ?? []) {
      collect(c)
      family.push([join(dirname(out), `${c.header.id}.jsonl`), c])
    }
  }
  collect(log)
  assertNotInputs([file], family.map(([f]) => f))
  try {
    for (const [f, l] of family) await writeLog(f, { header: l.header, events: l.events }, { overwrite: opts.force === true })
    await writeLog(out, { header: log.header, events: log.events }, { overwrite: opts.force === true })
  } catch (err) {
    throw withForceHint(err)
  }
  const c = colorsFor(io)
  const turns = log.events.filter((e) => e.type === 'turn/start').length
  writeHuman(io, [
    `${c.green('imported')} ${inline(fileArg)} (${format}) → ${inline(opts.output)} (session ${inline(log.header.id)})`,
    `  ${log.events.length} events, ${turns} turn${turns === 1 ? '' : 's'}; times from order, no usage, whole-block chunks (header "imported")`,
    ...(family.length ? [`  ${family.length} sub-agent${family.length === 1 ? '' : 's'} as child logs beside it: ${family.map(([f]) => inline(basename(f))).join(', ')}`] : []),
    ...(log.leftOut ? [c.yellow(`  left out: ${log.leftOut.sidechainLines} sidechain line${log.leftOut.sidechainLines === 1 ? '' : 's'} that no Task call in the file ran`)] : []),
  ])
  return EXIT_OK
}
