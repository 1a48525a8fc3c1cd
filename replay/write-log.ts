/**
 * writeLog: a whole log to a new JSONL file. Validates first (so it never writes a log that
 * `readLog` would refuse), writes a temp file next to the target, fsyncs it, moves it into place
 * (refusing to replace an existing file unless `overwrite`), and fsyncs the directory. A user's
 * log is never rewritten in place.
 */
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import { encodeEvent, encodeHeader, JSONL_FORMAT, type LogHeader } from '../events/jsonl.js'
import { findLossy } from '../events/lossless.js'
import { defaultRegistry, type EventRegistry } from '../events/registry.js'
import { AtomicFile, exists, fileExists } from './atomic-file.js'

export interface WriteLogOptions {
  /** Write `"checksums":"crc32"` in the header and a crc on every record. Default true. */
  checksums?: boolean
  /** Replace an existing file (atomically, by rename). Default false: `FILE_EXISTS`. */
  overwrite?: boolean
  /** Validates events before anything is written. Default `defaultRegistry`. */
  registry?: EventRegistry
}

export interface WriteLogResult {
  file: string
  bytes: number
  eventCount: number
  header: LogHeader
}

const FLUSH_AT = 1 << 20

/**
 * What `writeLog` writes: a header and its events, or an agent (anything with a `sessionId` and
 * `events`, as `Agent`), whose header is made for it: `{type: 'session', format, id: sessionId,
 * createdAt}` with `createdAt` the time of its first event. (An agent on a store already has its
 * log there, header included; this writes what the handle holds.)
 */
export type WritableLog = { header: LogHeader; events: readonly LogEvent[] } | { sessionId: string; events: readonly LogEvent[] }

/** The header and events of a `WritableLog`. */
export function logOf(log: WritableLog): { header: LogHeader; events: readonly LogEvent[] } {
  if ('header' in log && log.header !== undefined) return { header: log.header, events: log.events }
  const { sessionId, events } = log as { sessionId: string; events: readonly LogEvent[] }
  return { header: { type: 'session', format: JSONL_FORMAT, id: sessionId, createdAt: events[0]?.time ?? Date.now() }, events }
}

/**
 * Writes `{header, events}` (or an agent's log: `writeLog(path, agent)`) to `path`. Refuses
 * (coded, nothing written) an invalid header
 * (`INVALID_HEADER`), an invalid event (`INVALID_EVENT`, `UNKNOWN_EVENT_TYPE`), a lossy value
 * (`NOT_LOSSLESS`), a seq that is not its index (`BAD_SEQ`), and an existing file (`FILE_EXISTS`).
 * I/O failures are `IO_ERROR` / `FSYNC_FAILED`; the temp file is removed.
 */
export async function writeLog(
  path: string,
  writable: WritableLog,
  opts: WriteLogOptions = {},
): Promise<WriteLogResult> {
  const log = logOf(writable)
  const checksums = opts.checksums ?? true
  const registry = opts.registry ?? defaultRegistry
  const { checksums: _drop, ...rest } = log.header
  void _drop
  const header: LogHeader = checksums ? { ...rest, checksums: 'crc32' } : rest
  const lines: string[] = [encodeHeader(header)]
  const events = log.events
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    const where = { file: path, line: i + 2 }
    registry.validate(e, where)
    if (e.seq !== i) {
      throw new TurnlogError('BAD_SEQ', `event at index ${i} has seq ${e.seq}`, {
        ...where, seq: e.seq, field: 'seq', expectedSeq: i, actualSeq: e.seq,
      })
    }
    const lossy = findLossy(e.data)
    if (lossy) {
      throw new TurnlogError('NOT_LOSSLESS', `${lossy.path}: ${lossy.why}`, { ...where, seq: e.seq, field: lossy.path })
    }
    lines.push(encodeEvent(e, { checksums }))
  }

  if (!opts.overwrite && (await exists(path))) throw fileExists(path)
  const f = await AtomicFile.create(path)
  try {
    let buf: string[] = []
    let size = 0
    const flush = async () => {
      if (!buf.length) return
      const b = Buffer.from(buf.join(''), 'utf8')
      buf = []
      size = 0
      await f.write(b)
    }
    for (const l of lines) {
      buf.push(l, '\n')
      size += l.length + 1
      if (size >= FLUSH_AT) await flush()
    }
    await flush()
    await f.commit({ overwrite: opts.overwrite === true })
  } finally {
    await f.discard()
  }
  return { file: path, bytes: f.bytes, eventCount: events.length, header }
}
