/**
 * Exit codes and how an error reaches the user.
 *
 * - 0: success (`verify`: the log is valid).
 * - 1: `verify` found violations (and nothing else uses 1).
 * - 2: bad input: a `TurnlogError` (unreadable, corrupt or invalid log, an existing output file…)
 *      or a usage error (unknown option, missing argument, a bad number).
 * - 3: an internal error (a bug in turnlog): the stack is printed.
 */
import { TurnlogError } from '../events/errors.js'
import { scrubLine } from './escape.js'
import type { CliIo, Colors } from './io.js'
import { maskCredentials } from './mask.js'

export const EXIT_OK = 0
export const EXIT_VIOLATIONS = 1
export const EXIT_BAD_INPUT = 2
export const EXIT_INTERNAL = 3

/** A usage error found by the CLI itself (commander reports its own). Exit 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/**
 * Prints an error to stderr and returns the exit code it maps to. `command` (the subcommand that
 * failed, when known) makes the next step concrete: `turnlog replay --help`.
 */
export function reportError(err: unknown, io: CliIo, c: Colors, command?: string): number {
  if (TurnlogError.is(err)) {
    // the message already names file:line, seq and field (events/errors.ts formatMessage)
    const lines = [`${c.red(c.bold('error'))} ${err.message}`]
    const facts: string[] = [`code ${err.code}`]
    if (err.offset !== undefined) facts.push(`byte offset ${err.offset}`)
    if (err.expectedSeq !== undefined && err.actualSeq !== undefined) facts.push(`expected seq ${err.expectedSeq}, got ${err.actualSeq}`)
    if (err.repairable === true) facts.push('repairable (torn tail)')
    lines.push(c.dim(`  ${facts.join(' · ')}`))
    // the next step for a beginner: a torn tail is what `repair` is for (it never touches LOG)
    if (err.repairable === true && err.file !== undefined) lines.push(c.dim(`  next: turnlog repair ${quoteArg(err.file)} -o FIXED.jsonl (LOG is left as it is)`))
    // the message may quote log content (an id, a type, a path): control characters escaped
    io.stderr(lines.map((l) => scrubLine(maskCredentials(l), io.color === true)).join('\n') + '\n')
    return EXIT_BAD_INPUT
  }
  if (err instanceof UsageError) {
    // coded like every other bad input (INVALID_ARGUMENT), with where to read the usage
    const help = command !== undefined && /^[a-z]+$/.test(command) ? `turnlog ${command} --help` : 'turnlog --help'
    const lines = [`${c.red(c.bold('error'))} INVALID_ARGUMENT: ${err.message}`, c.dim(`  code INVALID_ARGUMENT · usage: ${help}`)]
    io.stderr(lines.map((l) => scrubLine(maskCredentials(l), io.color === true)).join('\n') + '\n')
    return EXIT_BAD_INPUT
  }
  const e = err as Error
  io.stderr(scrubLine(maskCredentials(`${c.red(c.bold('internal error'))} ${e?.stack ?? String(err)}`), io.color === true) + '\n')
  return EXIT_INTERNAL
}

/** A path as a shell argument a user can paste (quoted when it holds anything but plain path characters). */
function quoteArg(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`
}

/** Parses a non-negative integer option (`--at 12`); throws `UsageError` naming the option. */
export function parseCount(value: string, option: string, min = 0): number {
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`${option} must be a non-negative integer, got '${value}'`)
  const n = Number(value.trim())
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${option} must be an integer ≥ ${min}, got '${value}'`)
  return n
}
