/**
 * `turnlog verify LOG [--max-steps N] [--max-retries N] [--all]`: every event against its schema
 * and every L invariant. Exit 0 with one OK line; exit 1 listing the violations
 * (`L5 at seq 42: message (line 44)`); exit 2 when the file cannot be read as a log at all.
 * The log streams through the checker (`Verifier`): its folded state is kept, not the events.
 */
import { Verifier } from '../../replay/verify.js'
import { inline } from '../escape.js'
import { displayLog } from '../pg.js'
import { EXIT_OK, EXIT_VIOLATIONS, parseCount } from '../errors.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { streamLog } from '../load.js'

export interface VerifyCommandOptions {
  maxSteps?: string
  maxRetries?: string
  all?: boolean
}

/** Violations listed without `--all`. */
export const MAX_LISTED = 20

export async function verifyCommand(logArg: string, opts: VerifyCommandOptions, io: CliIo): Promise<number> {
  const checker = {
    ...(opts.maxSteps !== undefined ? { maxStepsPerTurn: parseCount(opts.maxSteps, '--max-steps', 1) } : {}),
    ...(opts.maxRetries !== undefined ? { maxRetries: parseCount(opts.maxRetries, '--max-retries') } : {}),
  }
  const v = new Verifier({ ...checker, ...(opts.all ? {} : { maxViolations: MAX_LISTED }) })
  let turns = 0
  // the record-level read: bytes checked as replay checks them, events judged by the Verifier
  await streamLog(logArg, io, { validate: false }, (batch) => {
    for (let i = 0; i < batch.length; i++) {
      const raw = batch[i]
      if ((raw as { type?: unknown } | null)?.type === 'turn/start') turns++
      v.push(raw)
    }
  })
  const c = colorsFor(io)
  const events = v.eventCount
  const counts = `${events} event${events === 1 ? '' : 's'}, ${turns} turn${turns === 1 ? '' : 's'}`
  const name = inline(displayLog(logArg))
  if (v.ok) {
    writeHuman(io, [`${c.green('OK')} ${name}: ${counts}, every invariant holds`])
    return EXIT_OK
  }
  const total = v.violationCount
  const shown = v.result().violations
  const lines = [`${c.red('FAIL')} ${name}: ${total} violation${total === 1 ? '' : 's'} (${counts})`]
  // the line of the event at position p is p + 2 (line 1 is the header; no blank lines in a log)
  for (const x of shown) lines.push(`  ${c.red(inline(x.invariant))} at seq ${x.seq}: ${inline(x.message)} ${c.dim(`(line ${x.seq + 2})`)}`)
  if (shown.length < total) lines.push(c.dim(`  … ${total - shown.length} more (--all lists every one)`))
  writeHuman(io, lines)
  return EXIT_VIOLATIONS
}
