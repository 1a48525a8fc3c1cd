/**
 * A new file written atomically: a temp file beside the target (`O_EXCL`), written, fsynced, then
 * moved into place — `link` when the target must not exist (fails atomically with `EEXIST` →
 * `FILE_EXISTS`; file systems without hard links fall back to check and rename), `rename` over it
 * with `overwrite` — and the directory fsynced. An existing file is never opened for writing: a
 * replaced target is a new inode under the old name, so a symlink or hard link at the target
 * never lets the write reach another file's bytes.
 */
import { randomBytes } from 'node:crypto'
import { constants as fsc } from 'node:fs'
import { link, lstat, open, rename, unlink, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { TurnlogError } from '../events/errors.js'

export class AtomicFile {
  /** Bytes written so far. */
  bytes = 0
  #fh: FileHandle | undefined
  #done = false

  private constructor(readonly path: string, readonly tmp: string, fh: FileHandle) {
    this.#fh = fh
  }

  /** Creates the temp file for `path` (in its directory). */
  static async create(path: string): Promise<AtomicFile> {
    const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
    try {
      return new AtomicFile(path, tmp, await open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o644))
    } catch (err) {
      throw ioFailure('IO_ERROR', err, path, 'cannot create the temp file')
    }
  }

  async write(b: Uint8Array): Promise<void> {
    let off = 0
    try {
      while (off < b.length) {
        const { bytesWritten } = await this.#fh!.write(b, off, b.length - off)
        if (bytesWritten <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' })
        off += bytesWritten
      }
    } catch (err) {
      throw ioFailure('IO_ERROR', err, this.path, 'cannot write the temp file')
    }
    this.bytes += b.length
  }

  /** fsyncs, closes and moves the temp file into place. Refuses an existing target unless `overwrite`. */
  async commit(opts: { overwrite?: boolean } = {}): Promise<void> {
    const fh = this.#fh!
    try {
      await fh.sync()
    } catch (err) {
      throw ioFailure('FSYNC_FAILED', err, this.path, 'fsync of the temp file failed')
    }
    this.#fh = undefined
    await fh.close().catch(() => {})
    const path = this.path
    if (opts.overwrite) {
      try {
        await rename(this.tmp, path)
      } catch (err) {
        throw ioFailure('IO_ERROR', err, path, 'cannot move the temp file into place')
      }
    } else {
      // link fails atomically if the target appeared meanwhile; rename would silently replace it
      try {
        await link(this.tmp, path)
      } catch (err) {
        const code = (err as { code?: string }).code
        if (code === 'EEXIST') throw fileExists(path)
        if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') {
          throw ioFailure('IO_ERROR', err, path, 'cannot move the temp file into place')
        }
        // file systems without hard links: check then rename (a small race, documented)
        if (await exists(path)) throw fileExists(path)
        try {
          await rename(this.tmp, path)
        } catch (err2) {
          throw ioFailure('IO_ERROR', err2, path, 'cannot move the temp file into place')
        }
      }
    }
    this.#done = true
    await unlink(this.tmp).catch(() => {}) // after link the temp name is a second name of the file
    await syncDir(dirname(path), path)
  }

  /** Removes the temp file (after a failure). Safe to call after `commit`. */
  async discard(): Promise<void> {
    if (this.#fh) await this.#fh.close().catch(() => {})
    this.#fh = undefined
    if (!this.#done) await unlink(this.tmp).catch(() => {})
  }
}

export function fileExists(path: string): TurnlogError {
  return new TurnlogError('FILE_EXISTS', 'refusing to overwrite an existing file (pass { overwrite: true })', { file: path })
}

export async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p)
    return true
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return false
    throw ioFailure('IO_ERROR', err, p, 'cannot stat the target')
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
      throw ioFailure('FSYNC_FAILED', err, file, 'fsync of the directory failed')
    }
  } finally {
    await d.close().catch(() => {})
  }
}

export function ioFailure(code: 'IO_ERROR' | 'FSYNC_FAILED', err: unknown, file: string, what: string): TurnlogError {
  if (TurnlogError.is(err)) return err
  const errno = (err as { code?: unknown })?.code
  return new TurnlogError(code, `${what}: ${(err as Error)?.message ?? String(err)}`, {
    file, ...(typeof errno === 'string' ? { info: { errno } } : {}),
  }, { cause: err })
}
