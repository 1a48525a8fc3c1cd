/**
 * `turnlog replay LOG [--at SEQ] [--json]`: the transcript and summary, or the state as of SEQ.
 * The log streams through the fold (cli/print-fold.ts): the events are not kept, and with `--at`
 * nothing after SEQ is read.
 */
import { TurnlogError } from '../../events/errors.js'
import { freezeState } from '../../reducers/projection.js'
import { EXIT_OK, parseCount } from '../errors.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { json } from '../escape.js'
import { streamLog } from '../load.js'
import { displayLog } from '../pg.js'
import { childLinker } from '../family.js'
import { PrintFold, printContext, titleLine, writeTranscript } from '../print.js'
import { summaryLines } from '../print-summary.js'
import { stateAtLines } from '../print-state.js'

export interface ReplayCommandOptions {
  at?: string
  json?: boolean
}

export async function replayCommand(logArg: string, opts: ReplayCommandOptions, io: CliIo): Promise<number> {
  const at = opts.at !== undefined ? parseCount(opts.at, '--at') : undefined
  const fold = new PrintFold()
  const log = await streamLog(logArg, io, at !== undefined ? { untilSeq: at } : {}, (batch) => {
    for (let i = 0; i < batch.length; i++) fold.apply(batch[i]!)
  })
  if (at !== undefined && fold.counts.events <= at) {
    const n = fold.counts.events
    throw new TurnlogError('INVALID_ARGUMENT', `seq ${at} is out of range: ${n === 0 ? 'the log is empty' : `the log has seqs 0..${n - 1}`}`, {
      file: log.file, seq: at, field: '--at', info: { length: n },
    })
  }
  if (opts.json) {
    io.stdout(json(freezeState(fold.state), 2) + '\n')
    return EXIT_OK
  }
  const c = colorsFor(io)
  if (at !== undefined) {
    writeHuman(io, stateAtLines(fold, at, c))
    return EXIT_OK
  }
  writeHuman(io, [titleLine(fold, c, { header: log.header, file: displayLog(logArg) }), ''])
  writeTranscript(fold.state, printContext(fold, c, childLinker(logArg, io)), (lines) => writeHuman(io, lines))
  writeHuman(io, summaryLines(fold, c))
  return EXIT_OK
}
