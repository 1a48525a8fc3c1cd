/**
 * `turnlog fork LOG --at SEQ --redact MODULE -o golden.jsonl`: a fork for keeping as a golden
 * session, with the message text and tool data passed through MODULE's `redact(text, { kind, seq })`
 * (turnlog/evals `redactLog`). Like `fork`, OUT is a new file (`--force` replaces one that is not
 * an input) and LOG is never changed.
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { redactLog, type Redactor } from '../../evals/redact.js'
import { fork } from '../../replay/fork.js'
import { writeLog } from '../../replay/write-log.js'
import { EXIT_OK, parseCount, UsageError } from '../errors.js'
import { inline } from '../escape.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { loadLog, resolveLogPath } from '../load.js'
import { assertNotInputs } from '../outputs.js'
import { isStoreUrl } from '../pg.js'
import { withForceHint } from './repair.js'

export interface ForkRedactOptions {
  at?: string
  output?: string
  id?: string
  force?: boolean
  redact: string
}

export async function forkRedactCommand(logArg: string, opts: ForkRedactOptions, io: CliIo): Promise<number> {
  if (opts.at === undefined) throw new UsageError('fork needs --at SEQ')
  if (!opts.output) throw new UsageError('fork needs -o OUT')
  const at = parseCount(opts.at, '--at')
  const out = resolve(io.cwd ?? process.cwd(), opts.output)
  if (!isStoreUrl(logArg)) assertNotInputs([resolveLogPath(logArg, io)], [out])
  let mod: Record<string, unknown>
  try {
    mod = (await import(pathToFileURL(resolve(io.cwd ?? process.cwd(), opts.redact)).href)) as Record<string, unknown>
  } catch (err) {
    throw new UsageError(`--redact ${opts.redact}: cannot load it: ${(err as Error)?.message ?? String(err)}`)
  }
  const redact = mod.redact ?? mod.default
  if (typeof redact !== 'function') throw new UsageError(`--redact ${opts.redact} must export redact(text, { kind, seq }) => text`)
  const log = await loadLog(logArg, io, { untilSeq: at })
  const f = fork(log, at, opts.id ? { sessionId: opts.id } : {})
  const redacted = redactLog(f, redact as Redactor)
  try {
    await writeLog(out, redacted, { overwrite: opts.force === true })
  } catch (err) {
    throw withForceHint(err)
  }
  const c = colorsFor(io)
  writeHuman(io, [`${c.green('forked')} ${inline(logArg)} at seq ${at} → ${inline(opts.output)} (session ${inline(f.header.id)}), redacted by ${inline(opts.redact)}`])
  return EXIT_OK
}
