/**
 * The small file-system interface the jsonl store uses, so tests can put a fault-injecting layer
 * under it (`test/stores/faulty-fs.ts`: EIO on fsync, ENOSPC on write, a crash that drops unsynced
 * bytes). The default is `node:fs/promises`. Errors are Node's (with `code`); the store turns them
 * into coded `TurnlogError`s.
 */
import { constants as fsc, statSync } from 'node:fs'
import * as fsp from 'node:fs/promises'

export interface StoreFile {
  /** Writes `length` bytes of `buffer` from `offset` at file `position` (may write fewer). */
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>
  sync(): Promise<void>
  truncate(length: number): Promise<void>
  stat(): Promise<{ size: number }>
  close(): Promise<void>
}

export interface StoreFs {
  /** `flags` as `fs.open`: 'r', 'r+', 'wx' (create, fail with EEXIST), 'a'. */
  open(path: string, flags: string, mode?: number): Promise<StoreFile>
  readFile(path: string): Promise<Buffer>
  /** Atomically gives `existing` a second name; EEXIST when `newPath` exists. */
  link(existing: string, newPath: string): Promise<void>
  rename(from: string, to: string): Promise<void>
  unlink(path: string): Promise<void>
  stat(path: string): Promise<{ size: number; mtimeMs: number; ino: number; isFile(): boolean }>
  /**
   * Optional synchronous stat for the per-batch fencing check (a cached metadata lookup: a few µs
   * on the main thread, against a thread-pool round trip that competes with the writes and fsyncs).
   * Without it the async `stat` is used.
   */
  statSync?(path: string): { size: number; mtimeMs: number; ino: number }
  readdir(path: string): Promise<string[]>
  mkdir(path: string, opts: { recursive: true }): Promise<unknown>
  /** fsync of a directory (makes a create/rename/unlink durable). Platforms that cannot: no-op. */
  syncDir(path: string): Promise<void>
}

/**
 * Opens an existing file of the store (`'r'` or `'r+'`) without ever blocking on it: a FIFO (or a
 * device) put where a session file or lock should be would block `open` until a writer appears,
 * tying up a libuv thread and the store call for good. So the open is `O_NONBLOCK` (regular files
 * ignore the flag) and the opened descriptor must be a regular file (`fstat`, the answer that
 * counts: no race with a swap after a `stat`); otherwise the error (`code: 'ENOTREG'` or
 * `'EISDIR'`) names the path and what it is, and the store turns it into `IO_ERROR`.
 */
async function openRegular(path: string, flags: 'r' | 'r+'): Promise<fsp.FileHandle> {
  const access = flags === 'r' ? fsc.O_RDONLY : fsc.O_RDWR
  const fh = await fsp.open(path, access | (fsc.O_NONBLOCK ?? 0) | (fsc.O_NOCTTY ?? 0))
  let kind: string | undefined
  try {
    const st = await fh.stat()
    if (!st.isFile()) kind = st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a FIFO' : st.isSocket() ? 'a socket' : 'a device or other special file'
  } catch (err) {
    await fh.close().catch(() => {})
    throw err
  }
  if (kind !== undefined) {
    await fh.close().catch(() => {})
    throw Object.assign(new Error(`${path} is ${kind}, not a regular file`), { code: kind === 'a directory' ? 'EISDIR' : 'ENOTREG', path })
  }
  return fh
}

export const nodeFs: StoreFs = {
  open: (path, flags, mode) => (flags === 'r' || flags === 'r+' ? openRegular(path, flags) : fsp.open(path, flags, mode)),
  readFile: async (path) => {
    const fh = await openRegular(path, 'r')
    try {
      return await fh.readFile()
    } finally {
      await fh.close().catch(() => {})
    }
  },
  link: (a, b) => fsp.link(a, b),
  rename: (a, b) => fsp.rename(a, b),
  unlink: (p) => fsp.unlink(p),
  stat: (p) => fsp.stat(p),
  statSync: (p) => statSync(p),
  readdir: (p) => fsp.readdir(p),
  mkdir: (p, o) => fsp.mkdir(p, o),
  async syncDir(path) {
    let d: fsp.FileHandle
    try {
      d = await fsp.open(path, 'r')
    } catch {
      return // Windows cannot open a directory: nothing to fsync
    }
    try {
      await d.sync()
    } catch (err) {
      const code = (err as { code?: string }).code
      if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'EBADF') throw err
    } finally {
      await d.close().catch(() => {})
    }
  },
}
