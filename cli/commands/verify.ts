/**
 * `turnlog verify LOG [--max-steps N] [--max-retries N] [--all]`: every event against its schema
 * and every L invariant. Exit 0 with one OK line; exit 1 listing the violations
 * (`L5 at seq 42: message`); exit 2 when the file cannot be read as a log at all.
 */
import { verify } from '../../replay/verify.js'
import { EXIT_OK, EXIT_VIOLATIONS, parseCount } from '../errors.js'
import { colorsFor, writeLines, type CliIo } from '../io.js'
import { loadForVerify } from '../load.js'

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
  const input = await loadForVerify(logArg, io)
  const result = verify(input.events, checker)
  const c = colorsFor(io)
  const turns = input.events.filter((e) => (e as { type?: unknown } | null)?.type === 'turn/start').length
  const counts = `${input.events.length} event${input.events.length === 1 ? '' : 's'}, ${turns} turn${turns === 1 ? '' : 's'}`
  if (result.ok) {
    io.stdout(`${c.green('OK')} ${logArg}: ${counts}, every invariant holds\n`)
    return EXIT_OK
  }
  const v = result.violations
  const shown = opts.all ? v : v.slice(0, MAX_LISTED)
  const lines = [`${c.red('FAIL')} ${logArg}: ${v.length} violation${v.length === 1 ? '' : 's'} (${counts})`]
  for (const x of shown) lines.push(`  ${c.red(x.invariant)} at seq ${x.seq}: ${x.message}`)
  if (shown.length < v.length) lines.push(c.dim(`  … ${v.length - shown.length} more (--all lists every one)`))
  writeLines(io.stdout, lines)
  return EXIT_VIOLATIONS
}
