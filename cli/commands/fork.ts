/**
 * `turnlog fork LOG --at SEQ -o OUT [--id ID] [--force]`: a new session from LOG's prefix up to
 * and including SEQ, with `forked` closers, an emptied inbox and `session/end-seed`. Only the
 * prefix is read (nothing after SEQ); OUT must not be LOG or LOG's quarantine (cli/outputs.ts).
 */
import { resolve } from 'node:path'
import { fork } from '../../replay/fork.js'
import { writeLog } from '../../replay/write-log.js'
import { inline } from '../escape.js'
import { EXIT_OK, parseCount, UsageError } from '../errors.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { loadLog, resolveLogPath } from '../load.js'
import { displayLog, isStoreUrl } from '../pg.js'
import { assertNotInputs } from '../outputs.js'
import { withForceHint } from './repair.js'

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
  const out = resolve(io.cwd ?? process.cwd(), opts.output)
  // a database session is not a file: OUT cannot be it
  if (!isStoreUrl(logArg)) assertNotInputs([resolveLogPath(logArg, io)], [out])
  const log = await loadLog(logArg, io, { untilSeq: at })
  const f = fork(log, at, opts.id ? { sessionId: opts.id } : {})
  try {
    await writeLog(out, f, { overwrite: opts.force === true })
  } catch (err) {
    throw withForceHint(err)
  }
  const c = colorsFor(io)
  const turns = f.events.filter((e) => e.type === 'turn/start').length
  writeHuman(io, [
    `${c.green('forked')} ${inline(displayLog(logArg))} at seq ${at} → ${inline(opts.output)} (session ${inline(f.header.id)})`,
    `  ${at + 1} inherited event${at === 0 ? '' : 's'}, ${f.closers.length} synthetic (${f.closers.map((e) => e.type).join(', ')}), ${turns} turn${turns === 1 ? '' : 's'}`,
  ])
  return EXIT_OK
}
