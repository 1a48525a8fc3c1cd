/** `turnlog demo [--store PATH]`: run the scripted session, print its replay, optionally write its log. */
import { resolve } from 'node:path'
import { TurnlogError } from '../../events/errors.js'
import { verify } from '../../replay/verify.js'
import { writeLog } from '../../replay/write-log.js'
import { runDemoSession } from '../demo-session.js'
import { EXIT_INTERNAL, EXIT_OK } from '../errors.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { PrintFold } from '../print.js'
import { replayLines } from '../print-summary.js'

export interface DemoCommandOptions {
  store?: string
  /** Overwrite an existing --store file. */
  force?: boolean
}

export async function demoCommand(opts: DemoCommandOptions, io: CliIo): Promise<number> {
  const c = colorsFor(io)
  const { header, events, prompts } = await runDemoSession()
  const lines = [
    c.bold('turnlog demo') + c.dim(' · a scripted agent session: tools (one slow), a steer while tools run,'),
    c.dim(`  a prompt rejected by an agent/pre-step listener, and a RATE_LIMIT failure retried. Prompts:`),
    ...prompts.map((p, i) => c.dim(`  ${i + 1}. ${p}`)),
    '',
    ...replayLines(PrintFold.of(events), c, { header }),
  ]
  const v = verify(events)
  lines.push('')
  if (v.ok) {
    lines.push(`${c.green('verify OK')}: ${events.length} events, every invariant holds`)
  } else {
    lines.push(`${c.red('verify FAILED')}: ${v.violations.length} violation(s)`)
    for (const x of v.violations.slice(0, 20)) lines.push(`  ${x.invariant} at seq ${x.seq}: ${x.message}`)
  }
  if (opts.store !== undefined) {
    const path = resolve(io.cwd ?? process.cwd(), opts.store)
    let r
    try {
      r = await writeLog(path, { header, events }, { overwrite: opts.force === true })
    } catch (err) {
      if (!TurnlogError.is(err, 'FILE_EXISTS')) throw err
      throw new TurnlogError('FILE_EXISTS', `${opts.store} already exists: pass --force to replace it, or choose another --store path`, {
        file: path, field: '--store',
      }, { cause: err })
    }
    lines.push(`wrote ${r.eventCount} events (${r.bytes} bytes) to ${opts.store}` +
      c.dim(` · try: npx turnlog replay ${opts.store} · npx turnlog verify ${opts.store}`))
  } else {
    lines.push(c.dim('write the log with --store PATH, then: npx turnlog replay PATH · npx turnlog verify PATH'))
  }
  writeHuman(io, lines)
  return v.ok ? EXIT_OK : EXIT_INTERNAL
}
