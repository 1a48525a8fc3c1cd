/**
 * The small file-system interface the jsonl store uses, so tests can put a fault-injecting layer
 * under it (`test/stores/faulty-fs.ts`: EIO on fsync, ENOSPC on write, a crash that drops unsynced
 * bytes). The default is `node:fs/promises`, and `node:fs`'s synchronous calls for the decision
 * claims (`claims`). Errors are Node's (with `code`); the store turns them into coded
 * `TurnlogError`s.
 */
import {
  closeSync, constants as fsc, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, readSync, statSync,
  unlinkSync, watch, writeSync,
} from 'node:fs'
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
  /**
   * The synchronous calls of the decision claims (stores/jsonl/decisions.ts). Required: a store
   * whose injected file system lacked them would write its claims around it.
   */
  readonly claims: ClaimFs
}

/** A new file of a decision claim, opened by `ClaimFs.create`. */
export interface ClaimFile {
  /** Writes `length` bytes of `buffer` from `offset` at file `position`; returns how many (may be fewer). */
  write(buffer: Uint8Array, offset: number, length: number, position: number): number
  sync(): void
  close(): void
}

/**
 * Synchronous file calls for the decision claims: the agent's decision paths are synchronous (a
 * decision is claimed and logged in the tick it is made: stores/types.ts `DecisionChannel`), so
 * they cannot await the calls above. Same errors (Node's, with `code`).
 */
export interface ClaimFs {
  mkdir(path: string, opts: { recursive: true }): void
  /** Creates a new file (`'wx'`: EEXIST when it exists). */
  create(path: string, mode: number): ClaimFile
  /**
   * The whole content of a regular file, without ever blocking on a FIFO or a device put in its
   * place (`ENOTREG`/`EISDIR`, like `StoreFs.open`); `EFBIG` when it holds more than `limit` bytes.
   */
  readFile(path: string, limit: number): Buffer
  readdir(path: string): string[]
  /** Atomically gives `existing` a second name; EEXIST when `newPath` exists. */
  link(existing: string, newPath: string): void
  unlink(path: string): void
  /** fsync of a directory. Platforms that cannot: no-op. */
  syncDir(path: string): void
  /**
   * Optional: calls `onChange` when entries of the directory change (a hint only: the claims are
   * polled as well, so a watch that misses events or fails loses nothing). Without it: the poll alone.
   */
  watch?(path: string, onChange: () => void): { close(): void }
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

/** Why `fd` (opened from `path`) is not a regular file, or null when it is one. */
function notRegular(kind: { isFile(): boolean; isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }, path: string): Error | null {
  if (kind.isFile()) return null
  const what = kind.isDirectory() ? 'a directory' : kind.isFIFO() ? 'a FIFO' : kind.isSocket() ? 'a socket' : 'a device or other special file'
  return Object.assign(new Error(`${path} is ${what}, not a regular file`), { code: kind.isDirectory() ? 'EISDIR' : 'ENOTREG', path })
}

/** `node:fs`'s synchronous calls for the decision claims. */
export const nodeClaimFs: ClaimFs = {
  mkdir: (p, o) => {
    mkdirSync(p, o)
  },
  create(path, mode) {
    const fd = openSync(path, 'wx', mode)
    return {
      write: (buf, off, len, pos) => writeSync(fd, buf, off, len, pos),
      sync: () => fsyncSync(fd),
      close: () => closeSync(fd),
    }
  },
  readFile(path, limit) {
    const fd = openSync(path, fsc.O_RDONLY | (fsc.O_NONBLOCK ?? 0) | (fsc.O_NOCTTY ?? 0))
    try {
      const st = fstatSync(fd)
      const bad = notRegular(st, path)
      if (bad) throw bad
      if (st.size > limit) throw Object.assign(new Error(`${path} holds ${st.size} bytes, more than ${limit}`), { code: 'EFBIG', path })
      // read to the end (not just st.size: a file that grew is still bounded by limit)
      const buf = Buffer.alloc(Math.min(limit, st.size) + 1)
      let n = 0
      for (;;) {
        const r = readSync(fd, buf, n, buf.length - n, n)
        if (r === 0) break
        n += r
        if (n === buf.length) throw Object.assign(new Error(`${path} grew past ${buf.length - 1} bytes while read`), { code: 'EFBIG', path })
      }
      return buf.subarray(0, n)
    } finally {
      closeSync(fd)
    }
  },
  readdir: (p) => readdirSync(p),
  link: (a, b) => linkSync(a, b),
  unlink: (p) => unlinkSync(p),
  syncDir(path) {
    let fd: number
    try {
      fd = openSync(path, 'r')
    } catch {
      return // Windows cannot open a directory: nothing to fsync
    }
    try {
      fsyncSync(fd)
    } catch (err) {
      const code = (err as { code?: string }).code
      if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'EBADF') throw err
    } finally {
      closeSync(fd)
    }
  },
  watch(path, onChange) {
    const w = watch(path, { persistent: false }, () => onChange())
    // the poll goes on serving
    w.on('error', () => w.close())
    return w
  },
}

export const nodeFs: StoreFs = {
  claims: nodeClaimFs,
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
