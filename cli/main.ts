#!/usr/bin/env node
/**
 * The `turnlog` command. `run(argv, io)` runs one command in-process and resolves to its exit code
 * (tests call it with string writers; nothing here calls `process.exit`). Exit codes: cli/errors.ts.
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Command, CommanderError, Option } from 'commander'
import { approvalsCommand, decideCommand, type DecideCommandOptions } from './commands/approvals.js'
import { demoCommand } from './commands/demo.js'
import { exportCommand, FORMATS } from './commands/export.js'
import { fuzzCommand, type FuzzCommandOptions } from './commands/fuzz.js'
import { forkCommand } from './commands/fork.js'
import { evalCommand, type EvalCommandOptions } from './commands/eval.js'
import { forkRedactCommand } from './commands/fork-redact.js'
import { reexecCommand } from './commands/reexec.js'
import { repairCommand } from './commands/repair.js'
import { replayCommand } from './commands/replay.js'
import { reportCommand } from './commands/report.js'
import { schedulesCommand, type SchedulesCommandOptions } from './commands/schedules.js'
import { schemaCommand } from './commands/schema.js'
import { importCommand, type ImportCommandOptions } from './commands/import.js'
import { inspectCommand } from './commands/inspect.js'
import { serveCommand } from './commands/serve.js'
import { verifyCommand } from './commands/verify.js'
import { copyCommand, sessionsCommand } from './pg.js'
import { EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK, reportError } from './errors.js'
import { scrubLine } from './escape.js'
import { colorsFor, processIo, type CliIo } from './io.js'
import { SEMCONV_SWITCH } from '../otel/attributes.js'

export type { CliIo } from './io.js'
export { EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_VIOLATIONS } from './errors.js'

export const VERSION = '0.1.0'

function program(io: CliIo, done: (code: number) => void): Command {
  const p = new Command('turnlog')
    .description('Replay, verify and inspect turnlog session logs (JSONL or PostgreSQL); run the demo, fuzz and eval your agent, serve sessions over HTTP.')
    .version(VERSION, '-V, --version')
    .exitOverride()
    .configureOutput({
      // commander echoes arguments (an unknown option, a bad value): escaped like any human output
      writeOut: (s) => io.stdout(scrubLine(s, io.color === true)),
      writeErr: (s) => io.stderr(scrubLine(s, io.color === true)),
    })
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', `
Exit codes: 0 ok · 1 verify found violations · 2 bad input (unreadable or invalid log, usage) · 3 internal error.
LOG is a JSONL path, postgres://…#session-id or sqlite:FILE#session-id.
Start here: turnlog demo --store demo.jsonl, then turnlog replay demo.jsonl and turnlog inspect demo.jsonl.`)

  p.command('replay')
    .description('print the transcript and a summary, or the state as of a seq')
    .argument('<LOG>', 'a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    .option('--at <SEQ>', 'the state as of and including this seq')
    .option('--json', 'print the state as JSON')
    .action(async (log: string, opts: { at?: string; json?: boolean }) => done(await replayCommand(log, opts, io)))

  p.command('verify')
    .description('check every event against its schema and every L invariant')
    .argument('<LOG>', 'a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    .option('--max-steps <N>', "the agent's maxStepsPerTurn (L12)", undefined)
    .option('--max-retries <N>', "the retry policy's maxRetries (L16)", undefined)
    .option('--price <MODULE>', "the session's price: a module exporting price(model, usage) or a prices table (L20 re-prices cost budgets; prints the cost)")
    .option('--children', "check the family too: the logs of LOG's child sessions (beside it, or in the same database), L19 across logs")
    .option('--all', 'list every violation (default: the first 20)')
    .action(async (log: string, opts: { maxSteps?: string; maxRetries?: string; price?: string; children?: boolean; all?: boolean }) =>
      done(await verifyCommand(log, opts, io)))

  p.command('repair')
    .description('repair a torn or unclosed log into OUT (closers appended); torn bytes go to OUT.quarantine')
    .argument('<LOG>', 'a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    .option('-o, --output <OUT>', 'the repaired log (a new file; LOG is never rewritten)')
    .option('--force', 'overwrite OUT and OUT.quarantine if they exist')
    .action(async (log: string, opts: { output?: string; force?: boolean }) => done(await repairCommand(log, opts, io)))

  p.command('fork')
    .description('fork a session at SEQ into OUT: the prefix, forked closers, an empty inbox')
    .argument('<LOG>', 'a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    .option('--at <SEQ>', 'the last inherited seq')
    .option('-o, --output <OUT>', 'the fork (a new file)')
    .option('--id <ID>', 'the fork\'s session id (default: a new UUID)')
    .option('--force', 'overwrite OUT if it exists')
    .option('--redact <MODULE>', 'a module exporting redact(text, { kind, seq }): message text and tool data pass through it (a golden without secrets)')
    .action(async (log: string, opts: { at?: string; output?: string; id?: string; force?: boolean; redact?: string }) =>
      done(opts.redact !== undefined ? await forkRedactCommand(log, { ...opts, redact: opts.redact }, io) : await forkCommand(log, opts, io)))

  p.command('export')
    .description('the session in a trace format: chrome-trace (Perfetto, chrome://tracing) or otlp-json (OpenTelemetry GenAI spans)')
    .argument('<LOG>', 'a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    .addOption(new Option('--format <FORMAT>', 'the output format').choices(Object.keys(FORMATS)))
    .option('-o, --output <OUT>', 'write to OUT (a new file) instead of stdout')
    .option('--force', 'overwrite OUT if it exists')
    .option('--agent-name <NAME>', 'the agent\'s name: gen_ai.agent.name and `invoke_agent NAME` on the spans, the trace\'s process name')
    .option('--children', 'also the child sessions (their logs beside LOG, or in the same database): otlp-json under the spawning calls, chrome-trace as processes of their own')
    .addOption(new Option('--semconv <MODE>', 'otlp-json: the GenAI attribute names (see below)').choices(['latest', 'dup', 'v1.36']))
    .addHelpText('after', `\n${SEMCONV_SWITCH}\n`)
    .action(async (log: string, opts: { format?: string; output?: string; force?: boolean; agentName?: string; children?: boolean; semconv?: string }) => done(await exportCommand(log, opts, io, VERSION)))

  p.command('reexec')
    .description('re-execute LOG against today\'s code with its recorded model and tool outputs; exit 1 on a divergence')
    .argument('<LOG>', 'a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    .option('--tools <MODULE>', 'a module exporting tools (and optionally hooks, system, config, …)')
    .option('--ignore-time', 'do not compare event times')
    .option('--report <OUT>', 'also write the inspector page (HTML) with the first divergence side by side')
    .option('--force', 'overwrite the --report OUT if it exists')
    .action(async (log: string, opts: { tools?: string; ignoreTime?: boolean; report?: string; force?: boolean }) => done(await reexecCommand(log, opts, io)))

  p.command('report')
    .description('write one self-contained HTML file: timeline, state at any seq, transcript, tokens, verify marks')
    .argument('<LOG>', 'a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    .option('-o, --output <OUT>', 'the HTML file to write')
    .option('--at <SEQ>', 'the seq selected when the page opens (default: the last)')
    .option('--max-steps <N>', "the agent's maxStepsPerTurn (L12), for verify")
    .option('--max-retries <N>', "the retry policy's maxRetries (L16), for verify")
    .option('--gzip', 'embed the log gzipped: a ~7x smaller file that opens more slowly')
    .option('--force', 'overwrite OUT if it exists')
    .option('--children', 'also write each child session\'s report beside OUT (<child-id>.html) and link parent and children')
    .action(async (log: string, opts: { output?: string; at?: string; maxSteps?: string; maxRetries?: string; gzip?: boolean; force?: boolean; children?: boolean }) =>
      done(await reportCommand(log, opts, io)))

  p.command('inspect')
    .description('serve the report page on 127.0.0.1 and follow LOG as it is written (live tail over SSE)')
    .argument('<LOG>', 'a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    .option('--port <N>', 'the port (default 7357; 0: any free port)')
    .option('--max-steps <N>', "the agent's maxStepsPerTurn (L12), for verify")
    .option('--max-retries <N>', "the retry policy's maxRetries (L16), for verify")
    .action(async (log: string, opts: { port?: string; maxSteps?: string; maxRetries?: string }) => done(await inspectCommand(log, opts, io)))

  p.command('serve')
    .description('serve the sessions of STORE over HTTP on 127.0.0.1 (turnlog/http: Durable Streams reads, the AI SDK chat protocol)')
    .argument('<STORE>', 'a JSONL directory, postgres://… or sqlite:FILE')
    .option('--port <N>', 'the port (default 7358; 0: any free port)')
    .option('--agent <MODULE>', 'JSONL: a module whose default export is (sessionId) => agent options (without it: read-only)')
    .option('--base-path <PATH>', 'a path prefix for every route, e.g. /api (the README\'s Chat.tsx posts to /api/chat)')
    .action(async (store: string, opts: { port?: string; agent?: string; basePath?: string }) => done(await serveCommand(store, opts, io)))

  p.command('sessions')
    .description('list the sessions of a PostgreSQL or SQLite store: status, events, pending input, last activity, lease owner')
    .argument('<URL>', 'postgres://… or sqlite:FILE')
    .option('--json', 'print the rows as JSON')
    .option('--parked', 'only sessions parked on open approvals (lifecycle §9)')
    .option('--due', 'only sessions whose wakeup or approval expiry is due (sqlite:)')
    .option('--running', 'only sessions a live lease holder is running')
    .action(async (url: string, opts: { json?: boolean; parked?: boolean; due?: boolean; running?: boolean }) => done(await sessionsCommand(url, opts, io)))

  p.command('copy')
    .description('copy a session between JSONL, SQLite (sqlite:FILE#session-id) and PostgreSQL (postgres://…#session-id), lossless')
    .argument('<LOG>', 'a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    .argument('<TARGET>', 'a new JSONL file, postgres://…#session-id or sqlite:FILE#session-id (a new session)')
    .option('--force', 'overwrite a JSONL TARGET if it exists')
    .action(async (log: string, target: string, opts: { force?: boolean }) => done(await copyCommand(log, target, opts, io)))

  // approvals (docs/spec/lifecycle.md §9): cli/commands/approvals.ts
  p.command('approvals')
    .description('list the open approval requests of a session')
    .argument('<LOG>', 'a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    .option('--json', 'print them as JSON')
    .action(async (log: string, opts: { json?: boolean }) => done(await approvalsCommand(log, opts, io)))
  p.command('decide')
    .description('decide an open approval (durable when it exits 0); a resumed session goes on from it')
    .argument('<LOG>', "a store's JSONL log DIR/<session-id>.jsonl")
    .argument('<ID>', 'the approval id (turnlog approvals LOG)')
    .option('--approve', 'approve the call')
    .option('--deny', 'deny the call')
    .option('--reason <TEXT>', 'why (with --deny): the model reads it')
    .option('--arguments <JSON>', "edited arguments (with --approve), validated against the tool's schema")
    .option('--by <NAME>', 'who decides (logged)')
    .action(async (log: string, id: string, opts: DecideCommandOptions) => done(await decideCommand(log, id, opts, io)))

  // wakeups (docs/spec/lifecycle.md §10): cli/commands/schedules.ts
  p.command('schedules')
    .description('list the wakeups of a session (pending with their due time, fired, canceled); --cancel ID cancels a pending one while no agent owns the session')
    .argument('<LOG>', "a store's JSONL log DIR/<session-id>.jsonl or postgres://…#session-id")
    .option('--json', 'print them as JSON')
    .option('--cancel <ID>', 'cancel a pending wakeup (refused while the session\'s owner runs: use agent.unschedule there)')
    .action(async (log: string, opts: SchedulesCommandOptions) => done(await schedulesCommand(log, opts, io)))

  // the log format as JSON Schema (docs/spec/README.md): cli/commands/schema.ts
  p.command('schema')
    .description('print the log format as JSON Schema (draft 2020-12): event.schema.json; -o DIR writes every file (header, envelope, event, one per event type)')
    .option('-o, --output <DIR>', 'write every schema file into DIR (as docs/spec/schema/)')
    .action(async (opts: { output?: string }) => done(await schemaCommand(opts, io)))

  // conversations recorded elsewhere as logs (the header's imported member): cli/commands/import.ts
  p.command('import')
    .description('import a conversation (FORMAT: ai-sdk-ui, openai-chat, openai-responses, claude-code) from FILE as a new log OUT that passes verify')
    .argument('<FORMAT>', 'ai-sdk-ui (AI SDK UIMessage[]), openai-chat (Chat Completions messages), openai-responses (Responses input items) or claude-code (a Claude Code session JSONL)')
    .argument('<FILE>', 'the JSON (or, for claude-code, JSONL) file to import')
    .option('-o, --output <OUT>', 'the new log (a JSONL file)')
    .option('--id <ID>', 'the session id (default: imported-<file name>)')
    .option('--force', 'overwrite OUT if it exists')
    .action(async (format: string, file: string, opts: ImportCommandOptions) => done(await importCommand(format, file, opts, io)))

  p.command('demo')
    .description('run a scripted session (tools, steering, a rejected prompt, a retry) and print its replay')
    .option('--store <PATH>', 'also write the log as JSONL to PATH')
    .addOption(new Option('--force', 'overwrite PATH if it exists'))
    .action(async (opts: { store?: string; force?: boolean }) => done(await demoCommand(opts, io)))

  p.command('fuzz')
    .description('fuzz the agent (scheduled model-based runs) with your tools and hooks; check every invariant')
    .option('--runs <N>', 'number of runs (default 200)')
    .option('--seed <S>', 'fast-check seed (default: random; printed)')
    .option('--path <P>', 'with --seed: replay exactly the failing run a report printed')
    .option('--hooks <MODULE>', 'a JS module exporting hooks (as createAgent({ hooks }), or a function returning them)')
    .option('--tools <MODULE>', 'a JS module exporting tools (defineTool results, or a function returning them)')
    .option('--out <FILE>', 'on failure, write the failing run\'s log to FILE (JSONL)')
    .option('--force', 'overwrite the --out FILE if it exists')
    .option('--stuck-after <MS>', 'a run with no progress for MS milliseconds fails STUCK (default 5000)')
    .option('--fail-on <KINDS>', 'also fail (exit 1) when one of your tools reached any of these contained failures: tool-error, invalid-output, timeout (comma-separated)')
    .option('--check <MODULE>', 'a JS module exporting check(run): your own property, run after every run (throw to fail)')
    .option('--approvals', 'add tool approvals: decisions, expiries, steers, cancels, restarts while parked (lifecycle §9)')
    .option('--inputs', 'add input rounds: bodies asking 0-3 rounds, a client tool, answers, declines, expiries, steers, cancels, crashes between rounds (lifecycle §11)')
    .option('--json', 'print one JSON object (report with census, or the failure)')
    .action(async (opts: FuzzCommandOptions) => done(await fuzzCommand(opts, io)))

  p.command('eval')
    .description('re-run golden sessions (*.jsonl in DIR) with the model and tools under test and grade them; exit 1 when a golden fails')
    .argument('<DIR>', 'a directory of golden sessions, or one golden')
    .option('--model <MODULE>', 'a module exporting model (an adapter or a function returning one), or "recorded"')
    .option('--tools <MODULE>', 'a module exporting tools (and optionally hooks, system, graders, toolResults, price, …)')
    .option('--trials <N>', 're-runs per golden (default 1): pass@k and pass^k')
    .option('--junit <FILE>', 'also write the report as JUnit XML')
    .option('--report <FILE>', 'also write the inspector page of the first failing golden, its first divergence side by side')
    .option('--json', 'print the report as JSON')
    .option('--force', 'overwrite the --junit / --report FILE if it exists')
    .action(async (dir: string, opts: EvalCommandOptions) => done(await evalCommand(dir, opts, io)))

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
    return reportError(err, io, colorsFor(io), argv[0])
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
  // A command whose work never settles must not exit 0 when the event loop drains (a hung fuzz
  // did): the exit code is internal error until the command returns its own.
  let settled = false
  // `turnlog replay big.jsonl | head`: a closed pipe ends the output quietly
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(settled ? process.exitCode ?? 0 : 0)
    throw err
  })
  process.exitCode = EXIT_INTERNAL
  process.on('beforeExit', () => {
    if (!settled) process.stderr.write('internal error: the command stopped without finishing (work it waited on never settled)\n')
  })
  run(process.argv.slice(2)).then(
    (code) => {
      settled = true
      process.exitCode = code
    },
    (err: unknown) => {
      settled = true
      process.stderr.write(`internal error ${(err as Error)?.stack ?? String(err)}\n`)
      process.exitCode = 3
    },
  )
}
