/**
 * `turnlog fork LOG --at SEQ -o OUT [--id ID] [--force]`: a new session from LOG's prefix up to
 * and including SEQ, with `forked` closers, an emptied inbox and `session/end-seed`.
 */
import { resolve } from 'node:path'
import { fork } from '../../replay/fork.js'
import { writeLog } from '../../replay/write-log.js'
import { EXIT_OK, parseCount, UsageError } from '../errors.js'
import { colorsFor, writeLines, type CliIo } from '../io.js'
import { loadLog } from '../load.js'

export interface ForkCommandOptions {
  at?: string
  output?: string
  id?: string
  force?: boolean
}

export async function forkCommand(logArg: string, opts: ForkCommandOptions, io: CliIo): Promise<number> {
  if (opts.at === undefined) throw new UsageError('fork needs --at SEQ')
  if (!opts.output) throw new UsageError('fork needs -o OUT')
  const at = parseCount(opts.at, '--at')
  const log = await loadLog(logArg, io)
  const f = fork(log, at, opts.id ? { sessionId: opts.id } : {})
  const out = resolve(io.cwd ?? process.cwd(), opts.output)
  await writeLog(out, f, { overwrite: opts.force === true })
  const c = colorsFor(io)
  const turns = f.events.filter((e) => e.type === 'turn/start').length
  writeLines(io.stdout, [
    `${c.green('forked')} ${logArg} at seq ${at} → ${opts.output} (session ${f.header.id})`,
    `  ${at + 1} inherited event${at === 0 ? '' : 's'}, ${f.closers.length} synthetic (${f.closers.map((e) => e.type).join(', ')}), ${turns} turn${turns === 1 ? '' : 's'}`,
  ])
  return EXIT_OK
}
