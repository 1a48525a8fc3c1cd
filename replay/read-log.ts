/**
 * readLog / readLogStream / scanLog: a JSONL log from a path or from bytes, streamed in chunks
 * through `JsonlDecoder` (events/jsonl.ts). Every defect is a `TurnlogError` naming file, line
 * (1-based), byte offset, seq and field. See decision record "jsonl-codec" (docs/decisions/ in the repository) and
 * decision record "hostile-logs" (docs/decisions/ in the repository).
 */
import { constants as fsc, type Stats } from 'node:fs'
import { open, stat, type FileHandle } from 'node:fs/promises'
import type { LogEvent, SessionEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import { JsonlDecoder, type LogHeader, type TornTail } from '../events/jsonl.js'
import type { EventRegistry } from '../events/registry.js'
import { pushAll } from '../events/splice.js'

export interface ReadLogOptions {
  /** Validates events; extend `defaultRegistry` for plugin types. Default `defaultRegistry`. */
  registry?: EventRegistry
  /** Called after each chunk with the bytes read so far and the size of the input. */
  onProgress?: (bytesRead: number, totalBytes: number) => void
  /** Return the complete records and `torn` instead of throwing `TORN_TAIL` (what `repair` uses). */
  tolerateTornTail?: boolean
  /** A longer line is `RECORD_TOO_LARGE`. Default 256 MiB. */
  maxLineBytes?: number
  /** Read size. Default 4 MiB. */
  chunkBytes?: number
  /** Names the input in errors when `source` is bytes (a path names itself). */
  file?: string
  /** Stops between chunks; the read rejects with `signal.reason`. */
  signal?: AbortSignal
  /**
   * Stop after the event with this seq: nothing after its line is read or checked (`stopped` is
   * then true in the result, and there is no tail check). `replay --at N` and `fork --at N` read
   * this way, so their cost does not grow with the rest of the file.
   */
  untilSeq?: number
}

export interface ReadLogResult {
  header: LogHeader
  /**
   * Every complete, checked, validated record, in seq order (`events[i].seq === i`). Typed by
   * event type like `agent.events`: `e.type === 'tool/result'` narrows `e.data`. Events of
   * extension types (a plugin's registry, or ignorable unknown types) are in it too; read them as
   * `LogEvent` and narrow with `isCore(e, type)`.
   */
  events: SessionEvent[]
  /** The path, when `source` was a path. */
  file?: string
  /** With `tolerateTornTail` only: the torn last line, not part of `events`. */
  torn?: TornTail
  /** Size of the input in bytes (the bytes read, when `untilSeq` stopped the read). */
  bytes: number
  /** True when `untilSeq` stopped the read before the end of the input. */
  stopped?: boolean
}

/** What `readLogStream` and `scanLog` return when they are done. */
export interface ReadLogSummary {
  header: LogHeader
  eventCount: number
  file?: string
  torn?: TornTail
  bytes: number
  /** True when `untilSeq` stopped the read before the end of the input. */
  stopped?: boolean
}

/** `scanLog`'s options: `readLog`'s, and the lenient record-level mode. */
export interface ScanLogOptions extends ReadLogOptions {
  /**
   * False: hand out every record as parsed, unvalidated (bytes still checked: crc, UTF-8, JSON,
   * tail). A record refused for its nesting depth comes as a `RecordDefect`. What `verify` reads
   * with. Default true.
   */
  validate?: boolean
}

const DEFAULT_CHUNK = 4 * 1024 * 1024

/**
 * Reads a whole log: `{ header, events, file?, torn?, bytes }`. Streams the input in chunks (a
 * 200 MB log is never one string), checks every crc on the raw bytes, validates every event.
 */
export async function readLog(source: string | Uint8Array, opts: ReadLogOptions = {}): Promise<ReadLogResult> {
  const events: LogEvent[] = []
  const r = await scanLog(source, opts, (batch) => pushAll(events, batch))
  // typed by event type for readers; extension events stay in it (see ReadLogResult.events)
  const out: ReadLogResult = { header: r.header, events: events as SessionEvent[], bytes: r.bytes }
  if (typeof source === 'string') out.file = source
  if (r.torn) out.torn = r.torn
  if (r.stopped) out.stopped = true
  return out
}

/**
 * The streaming core of every reader: calls `onBatch(events, header)` once per chunk with the
 * events decoded from it (a fresh array each time; the caller may keep it or drop it), and
 * resolves to the summary. Memory stays bounded by one chunk plus what the caller keeps.
 * `onBatch` may return a promise (it is awaited before the next chunk is read).
 */
export async function scanLog(
  source: string | Uint8Array,
  opts: ScanLogOptions,
  onBatch: (events: LogEvent[], header: LogHeader) => void | Promise<void>,
): Promise<ReadLogSummary> {
  const file = typeof source === 'string' ? source : opts.file
  const dec = decoderFor(file, opts)
  let total = 0
  for await (const chunk of chunks(source, opts, file, (t) => (total = t))) {
    const out: LogEvent[] = []
    let failure: unknown
    try {
      dec.push(chunk, out)
    } catch (err) {
      failure = err
    }
    // the events before a defect are handed out first, then the defect is thrown
    if (out.length) await onBatch(out, dec.header!)
    if (failure !== undefined) throw failure
    if (dec.stopped) break
  }
  const r = dec.end({ tolerateTornTail: opts.tolerateTornTail })
  const summary: ReadLogSummary = { header: r.header, eventCount: dec.eventCount, bytes: r.stopped ? dec.bytes : total }
  if (file !== undefined) summary.file = file
  if (r.torn) summary.torn = r.torn
  if (r.stopped) summary.stopped = true
  return summary
}

function decoderFor(file: string | undefined, opts: ScanLogOptions): JsonlDecoder {
  const until = opts.untilSeq
  if (until !== undefined && !(Number.isSafeInteger(until) && until >= 0)) {
    throw new TurnlogError('INVALID_OPTION', 'untilSeq must be a non-negative integer', { field: 'untilSeq' })
  }
  return new JsonlDecoder({
    registry: opts.registry, file, maxLineBytes: opts.maxLineBytes,
    ...(opts.validate === false ? { validate: false } : {}),
    ...(until !== undefined ? { maxEvents: until + 1 } : {}),
  })
}

/**
 * Streams a log with bounded memory (one chunk's events at a time): yields the header first, then
 * every event in seq order. Errors are thrown from the iteration at the first defect (the events
 * before it were already yielded). The generator's return value is a `ReadLogSummary` (with
 * `torn` under `tolerateTornTail`).
 */
export async function* readLogStream(
  source: string | Uint8Array,
  opts: ReadLogOptions = {},
): AsyncGenerator<LogHeader | LogEvent, ReadLogSummary, undefined> {
  const file = typeof source === 'string' ? source : opts.file
  const dec = decoderFor(file, opts)
  let headerSent = false
  let total = 0
  let out: LogEvent[] = []
  for await (const chunk of chunks(source, opts, file, (t) => (total = t))) {
    let failure: unknown
    try {
      dec.push(chunk, out)
    } catch (err) {
      failure = err
    }
    if (!headerSent && dec.header) {
      headerSent = true
      yield dec.header
    }
    if (out.length) {
      const batch = out
      out = []
      for (let i = 0; i < batch.length; i++) yield batch[i]!
    }
    // the events before a defect are yielded first, then the defect is thrown
    if (failure !== undefined) throw failure
    if (dec.stopped) break
  }
  const r = dec.end({ tolerateTornTail: opts.tolerateTornTail })
  if (!headerSent) yield r.header
  const summary: ReadLogSummary = { header: r.header, eventCount: dec.eventCount, bytes: r.stopped ? dec.bytes : total }
  if (file !== undefined) summary.file = file
  if (r.torn) summary.torn = r.torn
  if (r.stopped) summary.stopped = true
  return summary
}

/** True for the first item of `readLogStream` (the header), false for events. */
export function isLogHeader(item: LogHeader | LogEvent): item is LogHeader {
  return (item as { type?: unknown }).type === 'session' && !('seq' in item)
}

/** What a path that is not a regular file is, for the error. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory'
  if (st.isFIFO()) return 'a FIFO (named pipe)'
  if (st.isCharacterDevice()) return 'a character device'
  if (st.isBlockDevice()) return 'a block device'
  if (st.isSocket()) return 'a socket'
  return 'not a regular file'
}

/**
 * Opens a log path for reading without ever blocking: only a regular file is a log. A FIFO would
 * block `open` until a writer appears (tying up a libuv thread, and the command for good), a
 * device can stream forever, a directory has no bytes. So: `stat` first (following symlinks) and
 * refuse anything but a regular file before opening it; then open with `O_NONBLOCK` (a FIFO or
 * device swapped in between the `stat` and the `open` still cannot block the open; regular files
 * ignore the flag) and check the opened descriptor with `fstat`, which is the answer that counts
 * (no race: it describes what we will read). Throws `IO_ERROR` naming the path and what it is.
 */
export async function openLogFile(path: string, file: string | undefined = path): Promise<{ fh: FileHandle; size: number }> {
  let st: Stats
  try {
    st = await stat(path)
  } catch (err) {
    throw ioError(err, file, 'cannot open the log')
  }
  if (!st.isFile()) throw notRegular(st, file)
  let fh: FileHandle
  try {
    fh = await open(path, fsc.O_RDONLY | (fsc.O_NONBLOCK ?? 0) | (fsc.O_NOCTTY ?? 0))
  } catch (err) {
    throw ioError(err, file, 'cannot open the log')
  }
  try {
    const st2 = await fh.stat()
    if (!st2.isFile()) throw notRegular(st2, file)
    return { fh, size: st2.size }
  } catch (err) {
    await fh.close().catch(() => {})
    throw ioError(err, file, 'cannot stat the log')
  }
}

function notRegular(st: Stats, file: string | undefined): TurnlogError {
  const kind = kindOf(st)
  return new TurnlogError('IO_ERROR', `the log is ${kind}, not a regular file`, {
    file, info: { errno: st.isDirectory() ? 'EISDIR' : 'ENOTREG', kind },
  })
}

async function* chunks(
  source: string | Uint8Array,
  opts: ReadLogOptions,
  file: string | undefined,
  setTotal: (t: number) => void,
): AsyncGenerator<Buffer> {
  const size = opts.chunkBytes ?? DEFAULT_CHUNK
  if (!(Number.isSafeInteger(size) && size > 0)) {
    throw new TurnlogError('INVALID_OPTION', 'chunkBytes must be a positive integer', { field: 'chunkBytes' })
  }
  if (typeof source !== 'string') {
    if (!(source instanceof Uint8Array)) {
      throw new TurnlogError('INVALID_ARGUMENT', 'readLog takes a path or a Uint8Array')
    }
    const buf = Buffer.from(source.buffer, source.byteOffset, source.byteLength)
    setTotal(buf.length)
    for (let p = 0; p < buf.length; p += size) {
      opts.signal?.throwIfAborted()
      const c = buf.subarray(p, Math.min(buf.length, p + size))
      yield c
      opts.onProgress?.(p + c.length, buf.length)
    }
    return
  }
  const { fh, size: total } = await openLogFile(source, file)
  try {
    setTotal(total)
    // read the bytes that exist at open: a concurrent append does not move the goal posts
    let pos = 0
    while (pos < total) {
      opts.signal?.throwIfAborted()
      const want = Math.min(size, total - pos)
      const buf = Buffer.allocUnsafe(want)
      let n: number
      try {
        n = (await fh.read(buf, 0, want, pos)).bytesRead
      } catch (err) {
        throw ioError(err, file, 'cannot read the log')
      }
      if (n === 0) break // truncated under us: what was read is what there is
      pos += n
      yield n === want ? buf : buf.subarray(0, n)
      opts.onProgress?.(pos, total)
    }
    setTotal(pos)
  } finally {
    await fh.close().catch(() => {})
  }
}

function ioError(err: unknown, file: string | undefined, what: string): TurnlogError {
  if (TurnlogError.is(err)) return err
  const code = (err as { code?: unknown })?.code
  return new TurnlogError('IO_ERROR', `${what}: ${(err as Error)?.message ?? String(err)}`, {
    file, ...(typeof code === 'string' ? { info: { errno: code } } : {}),
  }, { cause: err })
}
