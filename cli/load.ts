/**
 * Reading the LOG argument. A JSONL path is read by the one reader (`scanLog`/`readLog`: crc,
 * UTF-8, nesting, JSON, schema, seq — every defect a coded error naming file, line, seq and
 * field), streamed, with a progress bar on a TTY for large logs. A `postgres://…#session-id` LOG
 * is read from the store (cli/pg.ts; the store validates every event it reads); any other `x#y`
 * that is not a file is refused with a coded error that says so.
 *
 * `verify` reads with the same reader in its record-level mode (`validate: false`: the bytes are
 * checked exactly as for `replay`, the events are not validated), so a log whose records are
 * intact but whose events fail their schema or break L1 is *reported* (exit 1), and a log whose
 * bytes are bad is refused at the same line `replay` names (exit 2).
 */
import { existsSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import type cliProgress from 'cli-progress'
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import type { LogHeader } from '../events/jsonl.js'
import { readLog, scanLog, type ReadLogResult, type ReadLogSummary, type ScanLogOptions } from '../replay/read-log.js'
import type { CliIo } from './io.js'
import { loadProgress } from './optional.js'
import { isStoreUrl, loadPgLog } from './pg.js'

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
      `'${arg}' looks like a store-url#session-id, but no such file exists; the store URLs are postgres://…#session-id and sqlite:FILE#session-id`,
      { field: 'LOG', info: { form: 'store-url#session-id', store: arg.slice(0, hash), sessionId: arg.slice(hash + 1), supported: false } },
    )
  }
  return path
}

/** `readLog` with a progress bar for large files when `io.progress`. `untilSeq` stops the read after that seq. */
export async function loadLog(arg: string, io: CliIo, opts: { untilSeq?: number } = {}): Promise<ReadLogResult & { file: string }> {
  if (isStoreUrl(arg)) {
    const log = await loadPgLog(arg)
    return opts.untilSeq === undefined ? log : { ...log, events: log.events.slice(0, opts.untilSeq + 1) }
  }
  const path = resolveLogPath(arg, io)
  const bar = await progressBar(path, io)
  try {
    const log = await readLog(path, {
      ...(bar ? { onProgress: (done: number, total: number) => bar.update(done, { total }) } : {}),
      ...(opts.untilSeq !== undefined ? { untilSeq: opts.untilSeq } : {}),
    })
    return { ...log, file: path }
  } finally {
    bar?.stop()
  }
}

/**
 * Streams the log at `arg` through `onBatch` (one batch of events per chunk; nothing is kept
 * here), with the progress bar. `opts` are `scanLog`'s: `untilSeq`, `validate: false` (the
 * record-level read of `verify`), `tolerateTornTail`.
 */
export async function streamLog(
  arg: string, io: CliIo, opts: Omit<ScanLogOptions, 'onProgress'>,
  onBatch: (events: LogEvent[], header: LogHeader) => void | Promise<void>,
): Promise<ReadLogSummary & { file: string }> {
  if (isStoreUrl(arg)) {
    // a database session is read whole (the store pages it); one batch, cut at untilSeq
    const log = await loadPgLog(arg)
    const events = opts.untilSeq === undefined ? log.events : log.events.slice(0, opts.untilSeq + 1)
    await onBatch(events as LogEvent[], log.header)
    return { header: log.header, eventCount: events.length, bytes: 0, file: log.file, stopped: events.length < log.events.length }
  }
  const path = resolveLogPath(arg, io)
  const bar = await progressBar(path, io)
  try {
    const r = await scanLog(path, { ...opts, ...(bar ? { onProgress: (done: number, total: number) => bar.update(done, { total }) } : {}) }, onBatch)
    return { ...r, file: path }
  } finally {
    bar?.stop()
  }
}

/** A progress bar on stderr for logs of `PROGRESS_FROM_BYTES` or more, when `io.progress`. */
export async function progressBar(path: string, io: CliIo): Promise<cliProgress.SingleBar | null> {
  if (!io.progress) return null
  let size: number
  try {
    const st = await stat(path)
    if (!st.isFile()) return null // the reader refuses it
    size = st.size
  } catch {
    return null // the reader reports the real error
  }
  if (size < PROGRESS_FROM_BYTES) return null
  const lib = await loadProgress() // an optional peer: no bar without it (cli/optional.ts)
  if (lib === null) return null
  const bar = new lib.SingleBar({
    format: 'reading {bar} {percentage}% | {value_mb}/{total_mb} MB | ETA {eta_formatted}',
    stream: io.progressStream ?? process.stderr,
    clearOnComplete: true,
    hideCursor: true,
    formatValue: (v, _o, type) => (type === 'value' || type === 'total' ? (v / 1048576).toFixed(0) : String(v)),
  }, lib.Presets.shades_classic)
  bar.start(size, 0, { value_mb: '0', total_mb: (size / 1048576).toFixed(0) })
  const update = bar.update.bind(bar)
  // keep the MB payload in step with the value
  bar.update = ((value: number, payload?: object) => update(value, { ...payload, value_mb: (value / 1048576).toFixed(0) })) as typeof bar.update
  return bar
}

export type { LogEvent }
