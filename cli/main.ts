#!/usr/bin/env node
/**
 * The `turnlog` command. `run(argv, io)` runs one command in-process and resolves to its exit code
 * (tests call it with string writers; nothing here calls `process.exit`). Exit codes: cli/errors.ts.
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Command, CommanderError, Option } from 'commander'
import { demoCommand } from './commands/demo.js'
import { fuzzCommand } from './commands/fuzz.js'
import { forkCommand } from './commands/fork.js'
import { reexecCommand } from './commands/reexec.js'
import { repairCommand } from './commands/repair.js'
import { replayCommand } from './commands/replay.js'
import { verifyCommand } from './commands/verify.js'
import { copyCommand, sessionsCommand } from './pg.js'
import { EXIT_BAD_INPUT, EXIT_OK, reportError } from './errors.js'
import { colorsFor, processIo, type CliIo } from './io.js'

export type { CliIo } from './io.js'
export { EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_VIOLATIONS } from './errors.js'

export const VERSION = '0.1.0'

function program(io: CliIo, done: (code: number) => void): Command {
  const p = new Command('turnlog')
    .description('Replay, verify and demo turnlog agent session logs (JSONL).')
    .version(VERSION, '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
    })
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', `
Exit codes: 0 ok · 1 verify found violations · 2 bad input (unreadable or invalid log, usage) · 3 internal error.
LOG is a JSONL path or postgres://…#session-id.`)

  p.command('replay')
    .description('print the transcript and a summary, or the state as of a seq')
    .argument('<LOG>', 'a JSONL log')
    .option('--at <SEQ>', 'the state as of and including this seq')
    .option('--json', 'print the state as JSON')
    .action(async (log: string, opts: { at?: string; json?: boolean }) => done(await replayCommand(log, opts, io)))

  p.command('verify')
    .description('check every event against its schema and every L invariant')
    .argument('<LOG>', 'a JSONL log')
    .option('--max-steps <N>', "the agent's maxStepsPerTurn (L12)", undefined)
    .option('--max-retries <N>', "the retry policy's maxRetries (L16)", undefined)
    .option('--all', 'list every violation (default: the first 20)')
    .action(async (log: string, opts: { maxSteps?: string; maxRetries?: string; all?: boolean }) =>
      done(await verifyCommand(log, opts, io)))

  p.command('repair')
    .description('repair a torn or unclosed log into OUT (closers appended); torn bytes go to OUT.quarantine')
    .argument('<LOG>', 'a JSONL log')
    .option('-o, --output <OUT>', 'the repaired log (a new file; LOG is never rewritten)')
    .option('--force', 'overwrite OUT and OUT.quarantine if they exist')
    .action(async (log: string, opts: { output?: string; force?: boolean }) => done(await repairCommand(log, opts, io)))

  p.command('fork')
    .description('fork a session at SEQ into OUT: the prefix, forked closers, an empty inbox')
    .argument('<LOG>', 'a JSONL log')
    .option('--at <SEQ>', 'the last inherited seq')
    .option('-o, --output <OUT>', 'the fork (a new file)')
    .option('--id <ID>', 'the fork\'s session id (default: a new UUID)')
    .option('--force', 'overwrite OUT if it exists')
    .action(async (log: string, opts: { at?: string; output?: string; id?: string; force?: boolean }) => done(await forkCommand(log, opts, io)))

  p.command('reexec')
    .description('re-execute LOG against today\'s code with its recorded model and tool outputs; exit 1 on a divergence')
    .argument('<LOG>', 'a JSONL log')
    .option('--tools <MODULE>', 'a module exporting tools (and optionally hooks, system, config, …)')
    .option('--ignore-time', 'do not compare event times')
    .action(async (log: string, opts: { tools?: string; ignoreTime?: boolean }) => done(await reexecCommand(log, opts, io)))

  p.command('sessions')
    .description('list the sessions of a PostgreSQL store: status, events, pending input, last activity, lease owner')
    .argument('<URL>', 'postgres://…')
    .option('--json', 'print the rows as JSON')
    .action(async (url: string, opts: { json?: boolean }) => done(await sessionsCommand(url, opts, io)))

  p.command('copy')
    .description('copy a session between a JSONL file and PostgreSQL (postgres://…#session-id)')
    .argument('<LOG>', 'a JSONL log or postgres://…#session-id')
    .argument('<TARGET>', 'a new JSONL file or postgres://…#session-id (a new session)')
    .option('--force', 'overwrite a JSONL TARGET if it exists')
    .action(async (log: string, target: string, opts: { force?: boolean }) => done(await copyCommand(log, target, opts, io)))

  p.command('demo')
    .description('run a scripted session (tools, steering, a rejected prompt, a retry) and print its replay')
    .option('--store <PATH>', 'also write the log as JSONL to PATH')
    .addOption(new Option('--force', 'overwrite PATH if it exists'))
    .action(async (opts: { store?: string; force?: boolean }) => done(await demoCommand(opts, io)))

  p.command('fuzz')
    .description('fuzz the agent (scheduled model-based runs) with your tools and hooks; check every invariant')
    .option('--runs <N>', 'number of runs (default 200)')
    .option('--seed <S>', 'fast-check seed (default: random; printed)')
    .option('--hooks <MODULE>', 'a JS module exporting hooks (as createAgent({ hooks }))')
    .option('--tools <MODULE>', 'a JS module exporting tools (defineTool results)')
    .action(async (opts: { runs?: string; seed?: string; hooks?: string; tools?: string }) => done(await fuzzCommand(opts, io)))

  return p
}

/** Runs the CLI on `argv` (without the node and script paths) and resolves to the exit code. */
export async function run(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let code = EXIT_OK
  const p = program(io, (c) => (code = c))
  try {
    await p.parseAsync([...argv], { from: 'user' })
    return code
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit 0; a usage error is bad input (commander already printed it)
      // (`turnlog` alone prints the help to stderr with a non-zero code: a usage error too)
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT_OK
      return err.exitCode === 0 ? EXIT_OK : EXIT_BAD_INPUT
    }
    return reportError(err, io, colorsFor(io))
  }
}

function isMain(): boolean {
  const entry = process.argv[1]
  if (!entry) return false
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

if (isMain()) {
  // `turnlog replay big.jsonl | head`: a closed pipe ends the output quietly
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0)
    throw err
  })
  run(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code
    },
    (err: unknown) => {
      process.stderr.write(`internal error ${(err as Error)?.stack ?? String(err)}\n`)
      process.exitCode = 3
    },
  )
}
