/** Small I/O helpers shared by the jsonl store's parts (store.ts, reader.ts, writer.ts). */
import { readFileSync } from 'node:fs'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import type { StoreFile } from './fs.js'

export const CHUNK = 4 * 1024 * 1024

export function checkFrom(fromSeq: unknown, sessionId: string): number {
  if (fromSeq === undefined) return 0
  if (typeof fromSeq !== 'number' || !Number.isSafeInteger(fromSeq) || fromSeq < 0) {
    throw new TurnlogError('INVALID_ARGUMENT', 'events(fromSeq): fromSeq must be a non-negative integer', { sessionId, field: 'fromSeq' })
  }
  return fromSeq
}

export async function* fromMemory(events: readonly LogEvent[], from: number): AsyncGenerator<LogEvent> {
  for (let i = from; i < events.length; i++) yield events[i]!
}

export async function writeAll(fh: StoreFile, buf: Uint8Array, position: number): Promise<void> {
  let off = 0
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off, position + off)
    if (bytesWritten <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' })
    off += bytesWritten
  }
}

export async function* chunkIterator(fh: StoreFile, limit: number, file: string, id: string): AsyncGenerator<Buffer> {
  let pos = 0
  for (;;) {
    const want = Math.min(CHUNK, limit - pos)
    if (want <= 0) return
    const buf = Buffer.allocUnsafe(want)
    let got: number
    try {
      got = (await fh.read(buf, 0, want, pos)).bytesRead
    } catch (err) {
      throw ioError('IO_ERROR', err, file, 'read failed', id)
    }
    if (got === 0) return
    pos += got
    yield got === want ? buf : buf.subarray(0, got)
  }
}

export async function readChunks(fh: StoreFile, limit: number, file: string, id: string, onChunk: (b: Buffer) => void): Promise<void> {
  for await (const c of chunkIterator(fh, limit, file, id)) onChunk(c)
}

export function errno(err: unknown): string | undefined {
  const c = (err as { code?: unknown } | null)?.code
  return typeof c === 'string' ? c : undefined
}

export function ioError(
  code: 'IO_ERROR' | 'FSYNC_FAILED', err: unknown, file: string, what: string, sessionId?: string, seq?: number,
): TurnlogError {
  if (TurnlogError.is(err)) return err
  const e = errno(err)
  return new TurnlogError(code, `${what}: ${(err as Error)?.message ?? String(err)}`, {
    file, sessionId, ...(seq !== undefined ? { seq } : {}), ...(e ? { info: { errno: e } } : {}),
  }, { cause: err })
}

/**
 * Liveness of a pid on this host: `kill(pid, 0)` (EPERM means it exists: another user's), and on
 * Linux not a zombie. A process that exited but was never reaped (state `Z`, or `X` while it is
 * being reaped, in `/proc/PID/stat`) still answers `kill(pid, 0)`; it writes nothing more, so its
 * lock is stale (issue 27 item 11: a container whose init does not reap).
 */
export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (err) {
    if (errno(err) !== 'EPERM') return false
  }
  return !isZombie(pid)
}

/** True when `/proc/PID/stat` says the process has exited (Z or X); false when it cannot tell. */
export function isZombie(pid: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return false // no /proc (not Linux), or the process is gone: kill(pid, 0) decided
  }
  // "pid (comm) S ...": comm may hold spaces and parentheses, so the state follows the LAST ')'
  const state = stat.charAt(stat.lastIndexOf(')') + 2)
  return state === 'Z' || state === 'X'
}
