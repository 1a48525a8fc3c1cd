/**
 * Reading the LOG argument. A JSONL path is read with `readLog` (crc, UTF-8, JSON, schema, seq:
 * every defect is a coded error naming file, line, seq and field), with a progress bar on a TTY
 * for large logs. A `postgres://…#session-id` LOG is read from the store (cli/pg.ts); any other
 * `x#y` that is not a file is refused with a coded error that says so.
 *
 * `verify` needs more than `readLog`: a log whose records are intact but whose events fail their
 * schema or break L1 (seq) must be *reported* as violations (exit 1), not refused as unreadable
 * (exit 2). So `loadForVerify` falls back to a record-level read (crc and JSON checked, nothing
 * validated) when `readLog` refuses an event for what it says rather than for its bytes; `verify`
 * then reports SCHEMA and L1 like every other invariant.
 */
import { existsSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import cliProgress from 'cli-progress'
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import { crcHex, decodeHeader, type LogHeader } from '../events/jsonl.js'
import { readLog, type ReadLogResult } from '../replay/read-log.js'
import type { CliIo } from './io.js'
import { isPgUrl, loadPgLog } from './pg.js'

/** Logs at least this large get a progress bar (on a TTY). */
export const PROGRESS_FROM_BYTES = 16 * 1024 * 1024

/** The path of a LOG argument, or a coded error for forms not supported yet. */
export function resolveLogPath(arg: string, io: CliIo): string {
  if (arg.trim() === '') throw new TurnlogError('INVALID_ARGUMENT', 'LOG is empty: pass a JSONL path', { field: 'LOG' })
  const path = resolve(io.cwd ?? process.cwd(), arg)
  const hash = arg.indexOf('#')
  // a file whose name really contains '#' is still read as a file
  if (hash >= 0 && !existsSync(path)) {
    throw new TurnlogError(
      'INVALID_ARGUMENT',
      `'${arg}' looks like a store-url#session-id, but no such file exists; only postgres://…#session-id is a store URL (other stores are not supported yet)`,
      { field: 'LOG', info: { form: 'store-url#session-id', store: arg.slice(0, hash), sessionId: arg.slice(hash + 1), supported: false } },
    )
  }
  return path
}

/** `readLog` with a progress bar for large files when `io.progress`. */
export async function loadLog(arg: string, io: CliIo): Promise<ReadLogResult & { file: string }> {
  if (isPgUrl(arg)) return loadPgLog(arg)
  const path = resolveLogPath(arg, io)
  const bar = await progressBar(path, io)
  try {
    const log = await readLog(path, bar ? { onProgress: (done, total) => bar.update(done, { total }) } : {})
    return { ...log, file: path }
  } finally {
    bar?.stop()
  }
}

async function progressBar(path: string, io: CliIo): Promise<cliProgress.SingleBar | null> {
  if (!io.progress) return null
  let size: number
  try {
    size = (await stat(path)).size
  } catch {
    return null // readLog reports the real error
  }
  if (size < PROGRESS_FROM_BYTES) return null
  const bar = new cliProgress.SingleBar({
    format: 'reading {bar} {percentage}% | {value_mb}/{total_mb} MB | ETA {eta_formatted}',
    stream: io.progressStream ?? process.stderr,
    clearOnComplete: true,
    hideCursor: true,
    formatValue: (v, _o, type) => (type === 'value' || type === 'total' ? (v / 1048576).toFixed(0) : String(v)),
  }, cliProgress.Presets.shades_classic)
  bar.start(size, 0, { value_mb: '0', total_mb: (size / 1048576).toFixed(0) })
  const update = bar.update.bind(bar)
  // keep the MB payload in step with the value
  bar.update = ((value: number, payload?: object) => update(value, { ...payload, value_mb: (value / 1048576).toFixed(0) })) as typeof bar.update
  return bar
}

/** Codes where `readLog` refused an event for its content, not its bytes: `verify` reports those. */
const CONTENT_CODES = new Set(['INVALID_EVENT', 'UNKNOWN_EVENT_TYPE', 'BAD_SEQ', 'NOT_LOSSLESS'])

export interface VerifyInput {
  file: string
  header: LogHeader
  /** Events as read: validated when `lenient` is false, raw JSON objects otherwise. */
  events: readonly unknown[]
  /** True when the record-level fallback was used (some event failed validation or seq). */
  lenient: boolean
}

/** The events to verify: `readLog` when it accepts the log, else the record-level read. */
export async function loadForVerify(arg: string, io: CliIo): Promise<VerifyInput> {
  // a database row has no bytes to fall back to: the store validates every event it reads
  if (isPgUrl(arg)) {
    const log = await loadPgLog(arg)
    return { file: log.file, header: log.header, events: log.events, lenient: false }
  }
  try {
    const log = await loadLog(arg, io)
    return { file: log.file, header: log.header, events: log.events, lenient: false }
  } catch (err) {
    const contentDefect = TurnlogError.is(err) &&
      (CONTENT_CODES.has(err.code) || (err.code === 'INVALID_UTF8' && err.field !== undefined))
    if (!contentDefect) throw err
  }
  const file = resolveLogPath(arg, io)
  return { file, ...(await readRecords(file)), lenient: true }
}

/**
 * Every record of a JSONL log, crc-checked and parsed but not validated. Throws the byte-level
 * defects `readLog` throws (`MISSING_HEADER`, `CHECKSUM_MISMATCH`, `MALFORMED_LINE`,
 * `INVALID_UTF8`, `TORN_TAIL`, `EMPTY_LOG`, `IO_ERROR`), naming the line.
 */
export async function readRecords(file: string): Promise<{ header: LogHeader; events: unknown[] }> {
  let buf: Buffer
  try {
    buf = await readFile(file)
  } catch (err) {
    throw new TurnlogError('IO_ERROR', `cannot read the log: ${(err as Error).message}`, { file }, { cause: err })
  }
  if (buf.length === 0) throw new TurnlogError('EMPTY_LOG', 'the file is empty (no session header)', { file, line: 1 })
  let nl = buf.indexOf(0x0a)
  if (nl < 0) nl = buf.length
  const header = decodeHeader(buf.subarray(0, nl), { file })
  const events: unknown[] = []
  let line = 1
  let p = nl + 1
  const decoder = new TextDecoder('utf-8', { fatal: true })
  while (p < buf.length) {
    line++
    let e = buf.indexOf(0x0a, p)
    const torn = e < 0
    if (torn) e = buf.length
    const where = { file, line, offset: p, seq: events.length }
    if (torn) {
      throw new TurnlogError('TORN_TAIL', 'the last line has no trailing newline', { ...where, repairable: true })
    }
    let text: string
    try {
      text = decoder.decode(buf.subarray(p, e))
    } catch {
      throw new TurnlogError('INVALID_UTF8', 'the line is not valid UTF-8', where)
    }
    p = e + 1
    const m = /,"crc":"([^"]*)"\}$/.exec(text)
    if (m) {
      const body = text.slice(0, m.index) + '}'
      const got = crcHex(body)
      if (m[1] !== got) {
        throw new TurnlogError('CHECKSUM_MISMATCH', `crc mismatch: the record says ${m[1]}, its bytes give ${got}`, { ...where, field: 'crc' })
      }
    } else if (header.checksums === 'crc32') {
      throw new TurnlogError('CHECKSUM_MISMATCH', 'the header says "checksums":"crc32" but the record has no crc member', { ...where, field: 'crc' })
    }
    let raw: unknown
    try {
      raw = JSON.parse(text)
    } catch (err) {
      throw new TurnlogError('MALFORMED_LINE', 'the line is not valid JSON', { ...where, info: { parseError: (err as Error).message } })
    }
    if (m && typeof raw === 'object' && raw !== null) delete (raw as { crc?: unknown }).crc
    events.push(raw)
  }
  return { header, events }
}

export type { LogEvent }
