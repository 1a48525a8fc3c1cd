/**
 * readLog / readLogStream: a JSONL log from a path or from bytes, streamed in chunks through
 * `JsonlDecoder` (events/jsonl.ts). Every defect is a `TurnlogError` naming file, line (1-based),
 * byte offset, seq and field. See docs/ARCHITECTURE.md "Decisions: JSONL".
 */
import { open, type FileHandle } from 'node:fs/promises'
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import { JsonlDecoder, type LogHeader, type TornTail } from '../events/jsonl.js'
import type { EventRegistry } from '../events/registry.js'

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
}

export interface ReadLogResult {
  header: LogHeader
  /** Every complete, checked, validated record, in seq order (`events[i].seq === i`). */
  events: LogEvent[]
  /** The path, when `source` was a path. */
  file?: string
  /** With `tolerateTornTail` only: the torn last line, not part of `events`. */
  torn?: TornTail
  /** Size of the input in bytes. */
  bytes: number
}

/** What `readLogStream` returns when it is done (the generator's return value). */
export interface ReadLogSummary {
  header: LogHeader
  eventCount: number
  file?: string
  torn?: TornTail
  bytes: number
}

const DEFAULT_CHUNK = 4 * 1024 * 1024

/**
 * Reads a whole log: `{ header, events, file?, torn?, bytes }`. Streams the input in chunks (a
 * 200 MB log is never one string), checks every crc on the raw bytes, validates every event.
 */
export async function readLog(source: string | Uint8Array, opts: ReadLogOptions = {}): Promise<ReadLogResult> {
  const file = typeof source === 'string' ? source : opts.file
  const dec = new JsonlDecoder({ registry: opts.registry, file, maxLineBytes: opts.maxLineBytes })
  const events: LogEvent[] = []
  let total = 0
  for await (const chunk of chunks(source, opts, file, (t) => (total = t))) dec.push(chunk, events)
  const r = dec.end({ tolerateTornTail: opts.tolerateTornTail })
  const out: ReadLogResult = { header: r.header, events, bytes: total }
  if (typeof source === 'string') out.file = source
  if (r.torn) out.torn = r.torn
  return out
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
  const dec = new JsonlDecoder({ registry: opts.registry, file, maxLineBytes: opts.maxLineBytes })
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
  }
  const r = dec.end({ tolerateTornTail: opts.tolerateTornTail })
  if (!headerSent) yield r.header
  const summary: ReadLogSummary = { header: r.header, eventCount: dec.eventCount, bytes: total }
  if (file !== undefined) summary.file = file
  if (r.torn) summary.torn = r.torn
  return summary
}

/** True for the first item of `readLogStream` (the header), false for events. */
export function isLogHeader(item: LogHeader | LogEvent): item is LogHeader {
  return (item as { type?: unknown }).type === 'session' && !('seq' in item)
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
  let fh: FileHandle
  try {
    fh = await open(source, 'r')
  } catch (err) {
    throw ioError(err, file, 'cannot open the log')
  }
  try {
    let total: number
    try {
      const st = await fh.stat()
      if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' })
      total = st.size
    } catch (err) {
      throw ioError(err, file, 'cannot stat the log')
    }
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
