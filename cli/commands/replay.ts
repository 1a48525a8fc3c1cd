/** `turnlog replay LOG [--at SEQ] [--json]`: the transcript and summary, or the state as of SEQ. */
import { replay, stateAt } from '../../replay/replay.js'
import { EXIT_OK, parseCount } from '../errors.js'
import { colorsFor, writeLines, type CliIo } from '../io.js'
import { loadLog } from '../load.js'
import { replayLines, stateAtLines } from '../print.js'

export interface ReplayCommandOptions {
  at?: string
  json?: boolean
}

export async function replayCommand(logArg: string, opts: ReplayCommandOptions, io: CliIo): Promise<number> {
  const at = opts.at !== undefined ? parseCount(opts.at, '--at') : undefined
  const log = await loadLog(logArg, io)
  const state = at === undefined ? replay(log.events) : stateAt(log.events, at)
  if (opts.json) {
    io.stdout(JSON.stringify(state, null, 2) + '\n')
    return EXIT_OK
  }
  const c = colorsFor(io)
  if (at !== undefined) {
    writeLines(io.stdout, stateAtLines(log.events, at, state, c))
    return EXIT_OK
  }
  writeLines(io.stdout, replayLines(log.events, state, c, { header: log.header, file: logArg }))
  return EXIT_OK
}
