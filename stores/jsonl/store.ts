/**
 * `jsonlStore(dir)`: one `<id>.jsonl` file per session (events.md "JSONL": a header with
 * `"checksums":"crc32"`, one checked record per line), appended with group commit and fsync, owned
 * by one writer at a time through a lock file. See docs/ARCHITECTURE.md "Decisions: stores".
 *
 * Files beside `<id>.jsonl`:
 * - `<id>.lock`: the owner `{pid, host, token, acquiredAt}`, created with `open(…, 'wx')` (atomic:
 *   exactly one creator wins), removed by `close()`.
 * - `<id>.fence`: the last fencing token handed out (so tokens grow across owners and restarts).
 * - `<id>.lock.takeover`: a short-lived mutex held while a stale lock is broken.
 * - `<id>.quarantine-<n>`: torn bytes moved aside by `quarantineTornTail()` (never deleted).
 *
 * This file holds the store (create, open, list) and the lock protocol; the handles are in
 * `reader.ts` and `writer.ts`, small I/O helpers in `io.ts`.
 */
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import { encodeHeader, JsonlDecoder, type LogHeader } from '../../events/jsonl.js'
import { deepFreeze } from '../../events/lossless.js'
import { defaultRegistry, type EventRegistry } from '../../events/registry.js'
import { assertSessionId, isValidSessionId } from '../ids.js'
import { makeHeader } from '../memory.js'
import type { HeaderInit, LogReader, LogStore, LogWriter, OpenMode, OpenWriteOptions } from '../types.js'
import { nodeFs, type StoreFile, type StoreFs } from './fs.js'
import { chunkIterator, errno, ioError, pidAlive, readChunks, writeAll } from './io.js'
import { JsonlReader, type Scan } from './reader.js'
import { JsonlWriter } from './writer.js'

export { pidAlive } from './io.js'

export interface JsonlStoreOptions {
  /** The file system (tests inject faults). Default `node:fs/promises`. */
  fs?: StoreFs
  registry?: EventRegistry
  /** Epoch ms for headers and locks. Default `Date.now`. */
  clock?: () => number
  /**
   * An unparseable (empty, half-written) lock file older than this is stale: its creator died
   * between creating and writing it. Default 5000 ms. Also the age after which a leftover
   * `.lock.takeover` mutex is broken.
   */
  staleLockMs?: number
  /** Test seams: this process's identity and the liveness check. Default `process.pid`, `os.hostname()`,
   * `process.kill(pid, 0)`. */
  pid?: number
  host?: string
  isAlive?: (pid: number) => boolean
}

/** The contents of `<id>.lock`. */
export interface LockOwner {
  pid: number
  host: string
  token: number
  acquiredAt: number
}

/**
 * A read handle keeps the events of a log up to this size from its one scan (frozen: a caller's
 * mutation changes nothing), so `events()` does not read and decode the file again; a larger log
 * is streamed again by `events()` (memory stays bounded; the scan at open still checks it all).
 */
export const READ_CACHE_BYTES = 64 * 1024 * 1024

export function jsonlStore(dir: string, opts: JsonlStoreOptions = {}): JsonlStore {
  return new JsonlStore(dir, opts)
}

export class JsonlStore implements LogStore {
  readonly kind = 'jsonl'
  readonly dir: string
  /** @internal */ readonly fs: StoreFs
  /** @internal */ readonly registry: EventRegistry
  /** @internal */ readonly clock: () => number
  /** @internal */ readonly staleLockMs: number
  /** @internal */ readonly pid: number
  /** @internal */ readonly host: string
  /** @internal */ readonly isAlive: (pid: number) => boolean

  constructor(dir: string, opts: JsonlStoreOptions = {}) {
    if (typeof dir !== 'string' || dir === '') throw new TurnlogError('INVALID_ARGUMENT', 'jsonlStore needs a directory path')
    this.dir = resolve(dir)
    this.fs = opts.fs ?? nodeFs
    this.registry = opts.registry ?? defaultRegistry
    this.clock = opts.clock ?? Date.now
    this.staleLockMs = opts.staleLockMs ?? 5000
    this.pid = opts.pid ?? process.pid
    this.host = opts.host ?? hostname()
    this.isAlive = opts.isAlive ?? pidAlive
  }

  /** The log file of a session (the id is checked first). */
  path(id: string): string {
    assertSessionId(id)
    return join(this.dir, `${id}.jsonl`)
  }

  lockPath(id: string): string {
    assertSessionId(id)
    return join(this.dir, `${id}.lock`)
  }

  async create(id: string, init: HeaderInit = {}): Promise<LogHeader> {
    const file = this.path(id)
    const header = makeHeader(id, init, this.clock)
    const bytes = Buffer.from(encodeHeader(header) + '\n', 'utf8')
    try {
      await this.fs.mkdir(this.dir, { recursive: true })
    } catch (err) {
      throw ioError('IO_ERROR', err, this.dir, 'cannot create the store directory', id)
    }
    // write a temp file, fsync it, then link it into place: a crash never leaves a half header
    const tmp = join(this.dir, `.${id}.${this.pid}.${randomBytes(6).toString('hex')}.tmp`)
    let fh: StoreFile
    try {
      fh = await this.fs.open(tmp, 'wx', 0o644)
    } catch (err) {
      throw ioError('IO_ERROR', err, file, 'cannot create the session file', id)
    }
    try {
      try {
        await writeAll(fh, bytes, 0)
      } catch (err) {
        throw ioError('IO_ERROR', err, file, 'cannot write the session header', id)
      }
      try {
        await fh.sync()
      } catch (err) {
        throw ioError('FSYNC_FAILED', err, file, 'fsync of the new session file failed', id)
      }
      await fh.close().catch(() => {})
      try {
        await this.fs.link(tmp, file)
      } catch (err) {
        const code = errno(err)
        if (code === 'EEXIST') throw new TurnlogError('SESSION_EXISTS', 'the session exists already', { sessionId: id, file })
        if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS' && code !== 'EXDEV') {
          throw ioError('IO_ERROR', err, file, 'cannot move the session file into place', id)
        }
        // file systems without hard links: check, then rename (a small race, documented)
        if (await this.#exists(file)) throw new TurnlogError('SESSION_EXISTS', 'the session exists already', { sessionId: id, file })
        try {
          await this.fs.rename(tmp, file)
        } catch (err2) {
          throw ioError('IO_ERROR', err2, file, 'cannot move the session file into place', id)
        }
      }
      try {
        await this.fs.syncDir(this.dir)
      } catch (err) {
        throw ioError('FSYNC_FAILED', err, this.dir, 'fsync of the store directory failed', id)
      }
    } finally {
      await fh.close().catch(() => {})
      await this.fs.unlink(tmp).catch(() => {})
    }
    return header
  }

  open(id: string, mode: 'read'): Promise<LogReader>
  open(id: string, mode: 'write', opts?: OpenWriteOptions): Promise<LogWriter>
  open(id: string, mode: OpenMode, opts?: OpenWriteOptions): Promise<LogReader | LogWriter>
  async open(id: string, mode: OpenMode, opts: OpenWriteOptions = {}): Promise<LogReader | LogWriter> {
    const file = this.path(id)
    if (mode === 'read') {
      // one pass: the scan keeps the (frozen) events of a log up to READ_CACHE_BYTES for events()
      const scan = await this.#scan(id, file, READ_CACHE_BYTES)
      return new JsonlReader(this, id, file, scan)
    }
    if (mode !== 'write') {
      throw new TurnlogError('INVALID_ARGUMENT', `open mode must be 'read' or 'write', got ${String(mode)}`, { sessionId: id })
    }
    if (!(await this.#exists(file))) throw new TurnlogError('SESSION_NOT_FOUND', 'no such session', { sessionId: id, file })
    const { owner, lockFile } = await this.acquireLock(id)
    let fh: StoreFile | undefined
    try {
      const scan = await this.#scan(id, file)
      if (scan.torn && !opts.allowTornTail) throw scan.torn.error
      try {
        fh = await this.fs.open(file, 'r+')
      } catch (err) {
        throw ioError('IO_ERROR', err, file, 'cannot open the session file for writing', id)
      }
      return new JsonlWriter(this, id, file, scan, fh, owner, lockFile)
    } catch (err) {
      if (fh) await fh.close().catch(() => {})
      await this.releaseLock(id, owner).catch(() => {})
      await lockFile.close().catch(() => {})
      throw err
    }
  }

  async list(): Promise<string[]> {
    let names: string[]
    try {
      names = await this.fs.readdir(this.dir)
    } catch (err) {
      if (errno(err) === 'ENOENT') return []
      throw ioError('IO_ERROR', err, this.dir, 'cannot list the store directory')
    }
    const ids: string[] = []
    for (const n of names) {
      if (!n.endsWith('.jsonl')) continue
      const id = n.slice(0, -'.jsonl'.length)
      if (isValidSessionId(id)) ids.push(id)
    }
    return ids.sort()
  }

  async has(id: string): Promise<boolean> {
    return this.#exists(this.path(id))
  }

  /** The current owner written in `<id>.lock`, or null when unlocked (or the file is unreadable). */
  async lockOwner(id: string): Promise<LockOwner | null> {
    const r = await this.#readLock(this.lockPath(id))
    return r.kind === 'owner' ? r.owner : null
  }

  // ---------------------------------------------------------------------------------------------
  // The lock protocol

  /**
   * Takes `<id>.lock`: created with `wx` (one creator wins), then the next fencing token is taken
   * from `<id>.fence` and the owner is written and fsynced. An existing lock is stale, and broken,
   * only when it names this host and a pid that is not alive, or when it is unparseable and older
   * than `staleLockMs`. Anything else is `SESSION_OWNED` naming the owner. The lock file stays
   * open while owned: its inode cannot be reused, so "the path still has my inode" is a sound
   * fencing fast path.
   * @internal
   */
  async acquireLock(id: string): Promise<{ owner: LockOwner; lockFile: StoreFile }> {
    const lock = this.lockPath(id)
    for (let attempt = 0; ; attempt++) {
      let fh: StoreFile
      try {
        fh = await this.fs.open(lock, 'wx', 0o644)
      } catch (err) {
        if (errno(err) !== 'EEXIST') throw ioError('IO_ERROR', err, lock, 'cannot create the lock file', id)
        const seen = await this.#readLock(lock)
        if (seen.kind === 'gone') continue
        const stale = this.#isStale(seen)
        if (!stale || attempt >= 3) {
          throw new TurnlogError(
            'SESSION_OWNED',
            seen.kind === 'owner'
              ? `the session has a writer: pid ${seen.owner.pid} on ${seen.owner.host} (token ${seen.owner.token})`
              : 'the session is being opened for writing by another process',
            { sessionId: id, file: lock, info: seen.kind === 'owner' ? { owner: seen.owner } : { lock: 'incomplete' } },
          )
        }
        await this.#breakStale(id, lock, seen)
        continue
      }
      try {
        const token = (await this.#readFence(id)) + 1
        await this.#writeFence(id, token)
        const owner: LockOwner = { pid: this.pid, host: this.host, token, acquiredAt: this.clock() }
        await writeAll(fh, Buffer.from(JSON.stringify(owner) + '\n'), 0)
        await fh.sync()
        return { owner, lockFile: fh }
      } catch (err) {
        await fh.close().catch(() => {})
        await this.fs.unlink(lock).catch(() => {})
        throw TurnlogError.is(err) ? err : ioError('IO_ERROR', err, lock, 'cannot write the lock file', id)
      }
    }
  }

  /** Removes `<id>.lock` if it still names this owner's token. @internal */
  async releaseLock(id: string, owner: LockOwner): Promise<void> {
    const lock = this.lockPath(id)
    const seen = await this.#readLock(lock)
    if (seen.kind === 'owner' && seen.owner.token === owner.token && seen.owner.pid === owner.pid) {
      await this.fs.unlink(lock).catch(() => {})
    }
  }

  /**
   * Throws `SESSION_OWNED` unless `<id>.lock` still names `owner` (the fencing check). Fast path:
   * one `stat` of the lock, compared with the identity (inode, size, mtime) it had when this owner
   * wrote it (`seen`); a takeover makes a new file, and the owner holds its lock file open, so the
   * inode number cannot have been reused. On any difference the lock is read and its
   * token compared; `seen` is then refreshed. @internal
   */
  async checkFence(id: string, owner: LockOwner, seen?: LockIdentity): Promise<void> {
    const lock = this.lockPath(id)
    let ident: LockIdentity | undefined
    if (seen) {
      try {
        const st = this.fs.statSync ? this.fs.statSync(lock) : await this.fs.stat(lock)
        if (st.ino === seen.ino && st.size === seen.size && st.mtimeMs === seen.mtimeMs) return
        ident = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }
      } catch (err) {
        if (errno(err) !== 'ENOENT') throw ioError('IO_ERROR', err, lock, 'cannot stat the lock file', id)
      }
    }
    // slow path: the identity was taken before this read, so a takeover after it changes the identity
    const now = await this.#readLock(lock)
    if (now.kind === 'owner' && now.owner.token === owner.token && now.owner.pid === owner.pid && now.owner.host === owner.host) {
      if (seen && ident) Object.assign(seen, ident)
      return
    }
    const seenLock = now
    throw new TurnlogError('SESSION_OWNED', `this writer's fencing token ${owner.token} is stale: the lock was taken over or removed`, {
      sessionId: id, file: lock, info: { token: owner.token, ...(seenLock.kind === 'owner' ? { owner: seenLock.owner } : { lock: seenLock.kind }) },
    })
  }



  #isStale(seen: LockRead): boolean {
    if (seen.kind === 'owner') return seen.owner.host === this.host && seen.owner.pid !== this.pid && !this.isAlive(seen.owner.pid)
    if (seen.kind === 'garbage') return this.clock() - seen.mtimeMs > this.staleLockMs
    return false
  }

  /** Removes a stale lock under the takeover mutex, after checking it is still the same stale lock. */
  async #breakStale(id: string, lock: string, seen: LockRead): Promise<void> {
    const mutex = `${lock}.takeover`
    let m: StoreFile
    try {
      m = await this.fs.open(mutex, 'wx', 0o644)
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw ioError('IO_ERROR', err, mutex, 'cannot create the takeover file', id)
      // someone else is breaking it; a mutex left by a dead breaker goes after staleLockMs
      try {
        const st = await this.fs.stat(mutex)
        if (this.clock() - st.mtimeMs > this.staleLockMs) await this.fs.unlink(mutex).catch(() => {})
      } catch {
        /* gone meanwhile */
      }
      await new Promise((r) => setTimeout(r, 5))
      return
    }
    try {
      await m.close().catch(() => {})
      const now = await this.#readLock(lock)
      if (now.kind === 'gone') return
      if (JSON.stringify(now) !== JSON.stringify(seen) || !this.#isStale(now)) return
      await this.fs.unlink(lock).catch((err: unknown) => {
        if (errno(err) !== 'ENOENT') throw ioError('IO_ERROR', err, lock, 'cannot remove the stale lock', id)
      })
    } finally {
      await this.fs.unlink(mutex).catch(() => {})
    }
  }

  async #readLock(lock: string): Promise<LockRead> {
    let text: string
    let mtimeMs = 0
    try {
      text = (await this.fs.readFile(lock)).toString('utf8')
    } catch (err) {
      if (errno(err) === 'ENOENT') return { kind: 'gone' }
      throw ioError('IO_ERROR', err, lock, 'cannot read the lock file')
    }
    try {
      const o = JSON.parse(text) as Partial<LockOwner>
      if (typeof o.pid === 'number' && typeof o.host === 'string' && typeof o.token === 'number') {
        return { kind: 'owner', owner: { pid: o.pid, host: o.host, token: o.token, acquiredAt: Number(o.acquiredAt) || 0 } }
      }
    } catch {
      /* garbage */
    }
    try {
      mtimeMs = (await this.fs.stat(lock)).mtimeMs
    } catch (err) {
      if (errno(err) === 'ENOENT') return { kind: 'gone' }
    }
    return { kind: 'garbage', mtimeMs }
  }

  async #readFence(id: string): Promise<number> {
    const f = join(this.dir, `${id}.fence`)
    try {
      const n = Number((await this.fs.readFile(f)).toString('utf8').trim())
      return Number.isSafeInteger(n) && n >= 0 ? n : 0
    } catch (err) {
      if (errno(err) === 'ENOENT') return 0
      throw ioError('IO_ERROR', err, f, 'cannot read the fence file', id)
    }
  }

  async #writeFence(id: string, token: number): Promise<void> {
    const f = join(this.dir, `${id}.fence`)
    const tmp = `${f}.${this.pid}.${randomBytes(4).toString('hex')}.tmp`
    try {
      const fh = await this.fs.open(tmp, 'wx', 0o644)
      try {
        await writeAll(fh, Buffer.from(`${token}\n`), 0)
        await fh.sync()
      } finally {
        await fh.close().catch(() => {})
      }
      await this.fs.rename(tmp, f)
      await this.fs.syncDir(this.dir)
    } catch (err) {
      await this.fs.unlink(tmp).catch(() => {})
      throw ioError('IO_ERROR', err, f, 'cannot write the fence file', id)
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  async #exists(file: string): Promise<boolean> {
    try {
      await this.fs.stat(file)
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
  async #scan(id: string, file: string, keepUpTo = 0): Promise<Scan> {
    let fh: StoreFile
    try {
      fh = await this.fs.open(file, 'r')
    } catch (err) {
      if (errno(err) === 'ENOENT') throw new TurnlogError('SESSION_NOT_FOUND', 'no such session', { sessionId: id, file })
      throw ioError('IO_ERROR', err, file, 'cannot open the session file', id)
    }
    try {
      const dec = new JsonlDecoder({ registry: this.registry, file })
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

  /** Streams the records of `file` within its first `limit` bytes, from `fromSeq`. @internal */
  async *stream(id: string, file: string, limit: number, fromSeq: number): AsyncGenerator<LogEvent> {
    let fh: StoreFile
    try {
      fh = await this.fs.open(file, 'r')
    } catch (err) {
      throw ioError('IO_ERROR', err, file, 'cannot open the session file', id)
    }
    try {
      const dec = new JsonlDecoder({ registry: this.registry, file })
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
}

/** What the fencing fast path compares. */
export interface LockIdentity {
  ino: number
  size: number
  mtimeMs: number
}

export type LockRead = { kind: 'owner'; owner: LockOwner } | { kind: 'garbage'; mtimeMs: number } | { kind: 'gone' }

