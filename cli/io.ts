/**
 * The CLI's view of the outside world, injectable so tests run commands in-process: two writers,
 * whether colours and a progress bar are wanted, and the environment. `processIo()` is the real one.
 */
import pc from 'picocolors'
import { scrubLine } from './escape.js'

export interface CliIo {
  /** Writes to standard output (text as given: the caller adds newlines). */
  stdout(text: string): void
  /** Writes to standard error. */
  stderr(text: string): void
  /** Colour the human output. Default false (tests, pipes). */
  color?: boolean
  /** Show a progress bar on stderr while reading a large log. Default false. */
  progress?: boolean
  /** Where the progress bar draws (a TTY). Default `process.stderr`. */
  progressStream?: NodeJS.WritableStream
  /** The working directory relative paths are resolved against. Default `process.cwd()`. */
  cwd?: string
}

/** Colours on a TTY unless `NO_COLOR` is set (non-empty); `FORCE_COLOR` (non-empty, not "0") forces them. */
export function wantsColor(isTTY: boolean | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true
  return isTTY === true && env.TERM !== 'dumb'
}

/** The real process: stdout/stderr, colours and progress when they are terminals. */
export function processIo(): CliIo {
  return {
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    color: wantsColor(process.stdout.isTTY),
    progress: process.stderr.isTTY === true,
    progressStream: process.stderr,
    cwd: process.cwd(),
  }
}

export type Colors = ReturnType<typeof pc.createColors>

export function colorsFor(io: CliIo): Colors {
  return pc.createColors(io.color === true)
}

/** Writes lines (each gets a `\n`). */
export function writeLines(write: (t: string) => void, lines: readonly string[]): void {
  if (lines.length) write(lines.join('\n') + '\n')
}

/**
 * Writes human output lines (each gets a `\n`) with every control character escaped except the
 * colour codes the CLI adds itself (cli/escape.ts). Every command's human output goes through here.
 */
export function writeHuman(io: CliIo, lines: readonly string[], to: 'stdout' | 'stderr' = 'stdout'): void {
  if (!lines.length) return
  const keep = io.color === true
  let s = ''
  for (let i = 0; i < lines.length; i++) s += scrubLine(lines[i]!, keep) + '\n'
  io[to](s)
}
