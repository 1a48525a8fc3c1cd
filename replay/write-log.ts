/**
 * writeLog: a whole log to a new JSONL file. Validates first (so it never writes a log that
 * `readLog` would refuse), writes a temp file next to the target, fsyncs it, moves it into place
 * (refusing to replace an existing file unless `overwrite`), and fsyncs the directory. A user's
 * log is never rewritten in place.
 */
import { randomBytes } from 'node:crypto'
import { constants as fsc } from 'node:fs'
import { link, lstat, open, rename, unlink, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import { encodeEvent, encodeHeader, type LogHeader } from '../events/jsonl.js'
import { findLossy } from '../events/lossless.js'
import { defaultRegistry, type EventRegistry } from '../events/registry.js'

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
 * Writes `{header, events}` to `path`. Refuses (coded, nothing written) an invalid header
 * (`INVALID_HEADER`), an invalid event (`INVALID_EVENT`, `UNKNOWN_EVENT_TYPE`), a lossy value
 * (`NOT_LOSSLESS`), a seq that is not its index (`BAD_SEQ`), and an existing file (`FILE_EXISTS`).
 * I/O failures are `IO_ERROR` / `FSYNC_FAILED`; the temp file is removed.
 */
export async function writeLog(
  path: string,
  log: { header: LogHeader; events: readonly LogEvent[] },
  opts: WriteLogOptions = {},
): Promise<WriteLogResult> {
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

  if (!opts.overwrite && (await exists(path))) {
    throw new TurnlogError('FILE_EXISTS', 'refusing to overwrite an existing file (pass { overwrite: true })', { file: path })
  }
  const dir = dirname(path)
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  let bytes = 0
  let fh: FileHandle | undefined
  try {
    fh = await open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o644)
  } catch (err) {
    throw io('IO_ERROR', err, path, 'cannot create the temp file')
  }
  const handle = fh
  try {
    let buf: string[] = []
    let size = 0
    const flush = async () => {
      if (!buf.length) return
      const b = Buffer.from(buf.join(''), 'utf8')
      buf = []
      size = 0
      await handle.write(b, 0, b.length)
      bytes += b.length
    }
    try {
      for (const l of lines) {
        buf.push(l, '\n')
        size += l.length + 1
        if (size >= FLUSH_AT) await flush()
      }
      await flush()
    } catch (err) {
      throw io('IO_ERROR', err, path, 'cannot write the temp file')
    }
    try {
      await handle.sync()
    } catch (err) {
      throw io('FSYNC_FAILED', err, path, 'fsync of the temp file failed')
    }
    fh = undefined
    await handle.close().catch(() => {})
    if (opts.overwrite) {
      try {
        await rename(tmp, path)
      } catch (err) {
        throw io('IO_ERROR', err, path, 'cannot move the temp file into place')
      }
    } else {
      // link fails atomically if the target appeared meanwhile; rename would silently replace it
      try {
        await link(tmp, path)
      } catch (err) {
        const code = (err as { code?: string }).code
        if (code === 'EEXIST') {
          throw new TurnlogError('FILE_EXISTS', 'refusing to overwrite an existing file (pass { overwrite: true })', { file: path })
        }
        if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') {
          throw io('IO_ERROR', err, path, 'cannot move the temp file into place')
        }
        // file systems without hard links: check then rename (a small race, documented)
        if (await exists(path)) {
          throw new TurnlogError('FILE_EXISTS', 'refusing to overwrite an existing file (pass { overwrite: true })', { file: path })
        }
        try {
          await rename(tmp, path)
        } catch (err2) {
          throw io('IO_ERROR', err2, path, 'cannot move the temp file into place')
        }
      }
    }
    await syncDir(dir, path)
  } finally {
    if (fh) await fh.close().catch(() => {})
    // after link the temp name is a second name of the file; after rename it is gone
    await unlink(tmp).catch(() => {})
  }
  return { file: path, bytes, eventCount: events.length, header }
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p)
    return true
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return false
    throw io('IO_ERROR', err, p, 'cannot stat the target')
  }
}

async function syncDir(dir: string, file: string): Promise<void> {
  let d
  try {
    d = await open(dir, 'r')
  } catch {
    return // platforms that cannot open a directory (Windows) have nothing to fsync
  }
  try {
    await d.sync()
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'EBADF') {
      throw io('FSYNC_FAILED', err, file, 'fsync of the directory failed')
    }
  } finally {
    await d.close().catch(() => {})
  }
}

function io(code: 'IO_ERROR' | 'FSYNC_FAILED', err: unknown, file: string, what: string): TurnlogError {
  if (TurnlogError.is(err)) return err
  const errno = (err as { code?: unknown })?.code
  return new TurnlogError(code, `${what}: ${(err as Error)?.message ?? String(err)}`, {
    file, ...(typeof errno === 'string' ? { info: { errno } } : {}),
  }, { cause: err })
}
