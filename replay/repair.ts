/**
 * `repair`: a crashed session's log back to a valid one (issue "Repair", P5).
 *
 * - Reads with `tolerateTornTail`: every complete, checked record is kept (a garbled last record
 *   that still parses is caught by its crc); an unterminated last line that holds a complete
 *   record (only its `\n` lost) is kept too. The torn bytes are returned for quarantine.
 * - Corruption before the tail (a bad line, crc, seq or schema in the middle) is thrown by
 *   `readLog` as its coded error (`repairable: false`); a complete prefix that breaks an L
 *   invariant is refused with `INVARIANT` (a torn tail never causes that: the checker is
 *   prefix-closed). Nothing is written in either case.
 * - Whatever the kept records leave open gets the synthetic closers of `closers.ts`
 *   (reason `interrupted`), timed at the last event.
 *
 * `repair` itself writes nothing: `writeRepaired` (what `turnlog repair LOG -o OUT` runs) writes the
 * repaired log to a new file and the torn bytes beside it, never touching the original.
 */
import { rm, writeFile } from 'node:fs/promises'
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import type { CheckerOptions } from '../events/invariants/types.js'
import type { LogHeader } from '../events/jsonl.js'
import type { EventRegistry } from '../events/registry.js'
import { computeClosers } from './closers.js'
import { readLog } from './read-log.js'
import { verify } from './verify.js'
import { writeLog, type WriteLogResult } from './write-log.js'

export interface RepairOptions extends CheckerOptions {
  /** Validates events (plugin types). Default the core registry. */
  registry?: EventRegistry
  /** Names the input in errors when it is bytes. */
  file?: string
}

export interface RepairResult {
  /** The repaired log: every complete record, then the closers. */
  log: { header: LogHeader; events: LogEvent[] }
  /** The torn tail (byte offset where it starts, its bytes), or null when the input ended cleanly. */
  quarantined: { offset: number; bytes: Uint8Array } | null
  /** The synthetic closers appended (also the tail of `log.events`); empty when nothing was open. */
  closers: LogEvent[]
  /** Events kept from the input (`log.events.length - closers.length`). */
  keptEventCount: number
}

/** Repairs a JSONL log given as a path or bytes. Never writes. */
export async function repair(source: string | Uint8Array, opts: RepairOptions = {}): Promise<RepairResult> {
  const read = await readLog(source, {
    tolerateTornTail: true,
    ...(opts.registry ? { registry: opts.registry } : {}),
    ...(opts.file !== undefined ? { file: opts.file } : {}),
  })
  const torn = read.torn
  let header = read.header
  const events = read.events
  let quarantined: RepairResult['quarantined'] = null
  if (torn) {
    if (torn.header) header = torn.header
    if (torn.record) events.push(torn.record) // complete but for its `\n`: kept, nothing to quarantine
    else quarantined = { offset: torn.offset, bytes: torn.bytes }
  }
  return repairEvents({ header, events }, { ...opts, quarantined, file: read.file ?? opts.file })
}

/**
 * Closes an in-memory log (already read: complete records only). Refuses a log that breaks an
 * L invariant with `INVARIANT` (`repairable: false`).
 */
export function repairEvents(
  log: { header: LogHeader; events: readonly LogEvent[] },
  opts: RepairOptions & { quarantined?: RepairResult['quarantined'] } = {},
): RepairResult {
  const checker = checkerOpts(opts)
  const events = [...log.events]
  const v = verify(events, checker)
  if (!v.ok) {
    const first = v.violations[0]!
    throw new TurnlogError('INVARIANT', `the log is corrupt before its tail, not repairable: ${first.message}`, {
      seq: first.seq, invariant: first.invariant, repairable: false, sessionId: log.header.id,
      ...(opts.file !== undefined ? { file: opts.file } : {}),
      info: { violations: v.violations.slice(0, 5) },
    })
  }
  const closers = computeClosers(events, { reason: 'interrupted' })
  const repaired = [...events, ...closers]
  const after = verify(repaired, checker)
  if (!after.ok) {
    // A bug in the closers: never hand out a log that does not verify.
    const first = after.violations[0]!
    throw new Error(`repair produced an invalid log: ${first.invariant} at seq ${first.seq}: ${first.message}`)
  }
  return { log: { header: log.header, events: repaired }, quarantined: opts.quarantined ?? null, closers, keptEventCount: events.length }
}

function checkerOpts(o: CheckerOptions): CheckerOptions {
  return {
    ...(o.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: o.maxStepsPerTurn } : {}),
    ...(o.maxRetries !== undefined ? { maxRetries: o.maxRetries } : {}),
    ...(o.maxResumeRuns !== undefined ? { maxResumeRuns: o.maxResumeRuns } : {}),
  }
}

export interface WriteRepairedResult extends WriteLogResult {
  /** The quarantine file (`OUT.quarantine`), or null when there were no torn bytes. */
  quarantineFile: string | null
}

/**
 * Writes a repair result: the log to `out` (`writeLog`: temp file, fsync, link; `FILE_EXISTS` unless
 * `overwrite`), then the torn bytes to `out + '.quarantine'` (refused if it exists, unless
 * `overwrite`). The original log is never touched.
 */
export async function writeRepaired(
  out: string,
  result: RepairResult,
  opts: { overwrite?: boolean; checksums?: boolean; registry?: EventRegistry } = {},
): Promise<WriteRepairedResult> {
  // The quarantine first (refused if it exists), so a refused OUT leaves nothing half-written.
  let quarantineFile: string | null = null
  if (result.quarantined) {
    quarantineFile = `${out}.quarantine`
    try {
      await writeFile(quarantineFile, result.quarantined.bytes, { flag: opts.overwrite ? 'w' : 'wx' })
    } catch (err) {
      const code = (err as { code?: unknown })?.code
      if (code === 'EEXIST') {
        throw new TurnlogError('FILE_EXISTS', 'the quarantine file already exists', { file: quarantineFile })
      }
      throw new TurnlogError('IO_ERROR', `cannot write the quarantine file: ${(err as Error).message}`, {
        file: quarantineFile, ...(typeof code === 'string' ? { info: { errno: code } } : {}),
      }, { cause: err })
    }
  }
  let written: WriteLogResult
  try {
    written = await writeLog(out, result.log, opts)
  } catch (err) {
    if (quarantineFile !== null) await rm(quarantineFile, { force: true }).catch(() => {})
    throw err
  }
  return { ...written, quarantineFile }
}
