/**
 * `turnlog repair LOG -o OUT [--force]`: repairs a torn or unclosed log into OUT (never touching
 * LOG) and writes the torn bytes to OUT.quarantine. Prints what was kept, quarantined and closed.
 * Exit 0; 2 when LOG is corrupt before its tail (not repairable), OUT exists (without --force), or
 * OUT or OUT.quarantine would be LOG or LOG's quarantine (cli/outputs.ts). The log streams
 * (`repairFile`): memory follows the checker's folded state, not the log. A subagent call that was
 * running gets its child's outcome when the child's log (beside LOG, or in the same database) shows
 * that this call's child ended; else `TOOL_OUTCOME_UNKNOWN` (docs/spec/lifecycle.md §10).
 */
import { resolve } from 'node:path'
import { TurnlogError } from '../../events/errors.js'
import { repairEvents, repairFile, writeRepaired } from '../../replay/repair.js'
import { inline } from '../escape.js'
import { EXIT_OK, UsageError } from '../errors.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { progressBar, resolveLogPath } from '../load.js'
import { assertNotInputs } from '../outputs.js'
import { displayLog, isStoreUrl, loadPgLogForRepair } from '../pg.js'

export interface RepairCommandOptions {
  output?: string
  force?: boolean
}

export async function repairCommand(logArg: string, opts: RepairCommandOptions, io: CliIo): Promise<number> {
  if (!opts.output) throw new UsageError('repair needs -o OUT: the repaired log is written to a new file, never over LOG')
  const pgLog = isStoreUrl(logArg)
  const path = pgLog ? logArg : resolveLogPath(logArg, io)
  const out = resolve(io.cwd ?? process.cwd(), opts.output)
  if (!pgLog) assertNotInputs([path], [out, `${out}.quarantine`])
  let result
  if (pgLog) {
    // a postgres session has no torn bytes: its repair is the closers of whatever it left open,
    // a running subagent call's with its finished child's outcome (the same database)
    const { log, children } = await loadPgLogForRepair(logArg)
    const repaired = repairEvents(log, { children })
    try {
      const written = await writeRepaired(out, repaired, { overwrite: opts.force === true })
      result = { ...repaired, ...written, keptEventCount: repaired.keptEventCount, closers: repaired.closers, quarantined: repaired.quarantined }
    } catch (err) {
      throw withForceHint(err)
    }
  } else {
    const bar = await progressBar(path, io)
    try {
      result = await repairFile(path, out, {
        overwrite: opts.force === true,
        ...(bar ? { onProgress: (done: number, total: number) => bar.update(done, { total }) } : {}),
      })
    } catch (err) {
      throw withForceHint(err)
    } finally {
      bar?.stop()
    }
  }
  const c = colorsFor(io)
  const outName = inline(opts.output)
  const lines = [`${c.green('repaired')} ${inline(displayLog(logArg))} → ${outName}: kept ${result.keptEventCount} event${result.keptEventCount === 1 ? '' : 's'}`]
  if (result.quarantined) {
    lines.push(`  torn tail: ${result.quarantined.bytes.length} byte${result.quarantined.bytes.length === 1 ? '' : 's'} at byte offset ${result.quarantined.offset} → ${outName}.quarantine`)
  } else lines.push('  no torn tail')
  if (result.closers.length) {
    lines.push(`  ${result.closers.length} synthetic closer${result.closers.length === 1 ? '' : 's'}:`)
    for (const e of result.closers) lines.push(`    seq ${e.seq} ${e.type}${describe(e)}`)
  } else lines.push('  nothing was open')
  lines.push(c.dim(`  ${result.eventCount} events written`))
  writeHuman(io, lines)
  return EXIT_OK
}

/** `FILE_EXISTS` from the library names `{ overwrite: true }`; on the command line the flag is `--force`. */
export function withForceHint(err: unknown): unknown {
  if (!TurnlogError.is(err, 'FILE_EXISTS')) return err
  return new TurnlogError('FILE_EXISTS', 'the output file exists: pass --force to replace it', {
    ...(err.file !== undefined ? { file: err.file } : {}), field: '-o',
  }, { cause: err })
}

function describe(e: { type: string; data: unknown }): string {
  const d = e.data as Record<string, any>
  if (e.type === 'turn/end') return ` ${d.reason.kind}`
  if (e.type === 'step/end') return ` ${d.outcome.kind}${d.outcome.failure ? ` ${inline(d.outcome.failure.code)}` : ''}`
  if (e.type === 'tool/result') return ` ${inline(d.callId)}${d.error ? ` ${inline(d.error.code)}` : ''}`
  if (e.type === 'tool/call') return ` ${inline(d.callId)}`
  if (e.type === 'assistant/message' && d.interrupted) return ' interrupted'
  return ''
}
