/**
 * Reading a session file: the one scan at open (header, complete records, where they end, the
 * torn tail; small logs keep their events) and the stream a handle's `events()` reads again.
 */
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import { JsonlDecoder, type LogHeader, type TornTail } from '../../events/jsonl.js'
import { deepFreeze } from '../../events/lossless.js'
import type { EventRegistry } from '../../events/registry.js'
import type { StoreFile, StoreFs } from './fs.js'
import { chunkIterator, errno, ioError, readChunks } from './io.js'

/** What reading needs of the store: its file system and the registry that validates events. */
export interface LogFiles {
  readonly fs: StoreFs
  readonly registry: EventRegistry
}

/** What the scan at open found. */
export interface Scan {
  header: LogHeader
  count: number
  /** The complete records, when the scan kept them (read handles of logs up to READ_CACHE_BYTES). */
  events?: readonly LogEvent[]
  /** Bytes of the header and the complete records. */
  completeBytes: number
  torn?: TornTail
}

export async function fileExists(fs: StoreFs, file: string): Promise<boolean> {
  try {
    await fs.stat(file)
    return true
  } catch (err) {
    if (errno(err) === 'ENOENT') return false
    throw ioError('IO_ERROR', err, file, 'cannot stat the session file')
  }
}

/**
 * Reads the whole file once: header, number of complete records, where they end, the torn tail.
 * With `keepUpTo`, a file of at most that many bytes also keeps its events (frozen), so a read
 * handle serves `events()` without decoding the file a second time.
 */
export async function scanLog(files: LogFiles, id: string, file: string, keepUpTo = 0): Promise<Scan> {
  let fh: StoreFile
  try {
    fh = await files.fs.open(file, 'r')
  } catch (err) {
    if (errno(err) === 'ENOENT') throw new TurnlogError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)} in the store`, { sessionId: id, file })
    throw ioError('IO_ERROR', err, file, 'cannot open the session file', id)
  }
  try {
    const dec = new JsonlDecoder({ registry: files.registry, file })
    let kept: LogEvent[] | undefined = keepUpTo > 0 ? [] : undefined
    const sink: LogEvent[] = []
    await readChunks(fh, Infinity, file, id, (chunk) => {
      dec.push(chunk, sink)
      if (kept !== undefined && dec.bytes <= keepUpTo) for (let i = 0; i < sink.length; i++) kept.push(deepFreeze(sink[i]!))
      else kept = undefined // too large to keep: events() streams the file again
      sink.length = 0
    })
    const r = dec.end({ tolerateTornTail: true })
    const complete = r.torn ? r.torn.offset : r.bytes
    return { header: r.header, count: dec.eventCount, completeBytes: complete, torn: r.torn, ...(kept ? { events: kept } : {}) }
  } finally {
    await fh.close().catch(() => {})
  }
}

/** Streams the records of `file` within its first `limit` bytes, from `fromSeq`. */
export async function* streamLog(files: LogFiles, id: string, file: string, limit: number, fromSeq: number): AsyncGenerator<LogEvent> {
  let fh: StoreFile
  try {
    fh = await files.fs.open(file, 'r')
  } catch (err) {
    throw ioError('IO_ERROR', err, file, 'cannot open the session file', id)
  }
  try {
    const dec = new JsonlDecoder({ registry: files.registry, file })
    const out: LogEvent[] = []
    for await (const chunk of chunkIterator(fh, limit, file, id)) {
      dec.push(chunk, out)
      const batch = out.splice(0)
      for (const e of batch) if (e.seq >= fromSeq) yield e
    }
    dec.end()
  } finally {
    await fh.close().catch(() => {})
  }
}
