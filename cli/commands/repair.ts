/**
 * `turnlog repair LOG -o OUT [--force]`: repairs a torn or unclosed log into OUT (never touching
 * LOG) and writes the torn bytes to OUT.quarantine. Prints what was kept, quarantined and closed.
 * Exit 0; 2 when LOG is corrupt before its tail (not repairable) or OUT exists.
 */
import { resolve } from 'node:path'
import { repair, repairEvents, writeRepaired } from '../../replay/repair.js'
import { EXIT_OK, UsageError } from '../errors.js'
import { colorsFor, writeLines, type CliIo } from '../io.js'
import { resolveLogPath } from '../load.js'
import { isPgUrl, loadPgLog } from '../pg.js'

export interface RepairCommandOptions {
  output?: string
  force?: boolean
}

export async function repairCommand(logArg: string, opts: RepairCommandOptions, io: CliIo): Promise<number> {
  if (!opts.output) throw new UsageError('repair needs -o OUT: the repaired log is written to a new file, never over LOG')
  const pgLog = isPgUrl(logArg)
  const path = pgLog ? logArg : resolveLogPath(logArg, io)
  const out = resolve(io.cwd ?? process.cwd(), opts.output)
  if (out === path) throw new UsageError('OUT must differ from LOG: repair never rewrites a log in place')
  // a postgres session has no torn bytes: its repair is the closers of whatever it left open
  const result = pgLog ? repairEvents(await loadPgLog(logArg)) : await repair(path)
  const written = await writeRepaired(out, result, { overwrite: opts.force === true })
  const c = colorsFor(io)
  const lines = [`${c.green('repaired')} ${logArg} → ${opts.output}: kept ${result.keptEventCount} event${result.keptEventCount === 1 ? '' : 's'}`]
  if (result.quarantined) {
    lines.push(`  torn tail: ${result.quarantined.bytes.length} byte${result.quarantined.bytes.length === 1 ? '' : 's'} at byte offset ${result.quarantined.offset} → ${opts.output}.quarantine`)
  } else lines.push('  no torn tail')
  if (result.closers.length) {
    lines.push(`  ${result.closers.length} synthetic closer${result.closers.length === 1 ? '' : 's'}:`)
    for (const e of result.closers) lines.push(`    seq ${e.seq} ${e.type}${describe(e)}`)
  } else lines.push('  nothing was open')
  lines.push(c.dim(`  ${written.eventCount} events written`))
  writeLines(io.stdout, lines)
  return EXIT_OK
}

function describe(e: { type: string; data: unknown }): string {
  const d = e.data as Record<string, any>
  if (e.type === 'turn/end') return ` ${d.reason.kind}`
  if (e.type === 'step/end') return ` ${d.outcome.kind}${d.outcome.failure ? ` ${d.outcome.failure.code}` : ''}`
  if (e.type === 'tool/result') return ` ${d.callId}${d.error ? ` ${d.error.code}` : ''}`
  if (e.type === 'tool/call') return ` ${d.callId}`
  if (e.type === 'assistant/message' && d.interrupted) return ' interrupted'
  return ''
}
