/**
 * `jsonlStore(dir)`: one `<id>.jsonl` file per session (docs/spec/events.md "JSONL": a header with
 * `"checksums":"crc32"`, one checked record per line), appended with group commit and fsync, owned
 * by one writer at a time through a lock file. See decision record "stores" (docs/decisions/ in the repository).
 *
 * Files beside `<id>.jsonl`:
 * - `<id>.lock`: the owner `{pid, host, token, acquiredAt}`, created with `open(…, 'wx')` (atomic:
 *   exactly one creator wins), removed by `close()`.
 * - `<id>.fence`: the last fencing token handed out (so tokens grow across owners and restarts).
 * - `<id>.lock.takeover`: a short-lived mutex held while a stale lock is broken.
 * - `<id>.quarantine-<n>`: torn bytes moved aside by `quarantineTornTail()` (never deleted).
 *
 * This file holds the store (create, open, list); the lock protocol is in `lock.ts`, reading the
 * file in `scan.ts`, the handles in `reader.ts` and `writer.ts`, small I/O helpers in `io.ts`.
 */
import { answerThroughChildren, decideThroughChildren } from '../decide-children.js'
import { answerInStore, type StoreAnswerOptions, type StoreAnswered } from '../answer.js'
import { decideInStore, type StoreDecided, type StoreDecideOptions, type StoreDecisionInput } from '../decide.js'
import { JsonlDecisionChannel } from './decision-watch.js'
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import { encodeHeader, type LogHeader } from '../../events/jsonl.js'
import { defaultRegistry, type EventRegistry } from '../../events/registry.js'
import { assertSessionId, isValidSessionId } from '../ids.js'
import { makeHeader } from '../memory.js'
import type { HeaderInit, LogReader, LogStore, LogWriter, OpenMode, OpenWriteOptions } from '../types.js'
import { nodeFs, type StoreFile, type StoreFs } from './fs.js'
import { errno, ioError, pidAlive, writeAll } from './io.js'
import { acquireLock, checkFence, lockPath, readLock, releaseLock, type LockIdentity, type LockOwner } from './lock.js'
import { JsonlReader } from './reader.js'
import { fileExists, scanLog, streamLog } from './scan.js'
import { JsonlWriter } from './writer.js'

export { pidAlive } from './io.js'
export type { LockIdentity, LockOwner, LockRead } from './lock.js'

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
    if (typeof this.fs.claims !== 'object' || this.fs.claims === null) {
      throw new TurnlogError('INVALID_ARGUMENT', 'jsonlStore: the injected fs has no `claims` (the synchronous calls of the decision claims, StoreFs in stores/jsonl/fs.ts)', { field: 'fs.claims' })
    }
    this.registry = opts.registry ?? defaultRegistry
    this.clock = opts.clock ?? Date.now
    this.staleLockMs = opts.staleLockMs ?? 5000
    this.pid = opts.pid ?? process.pid
    this.host = opts.host ?? hostname()
    this.isAlive = opts.isAlive ?? pidAlive
  }

  /**
   * Decides an open approval of a session from any process on this machine, while an agent runs
   * the session or not (docs/spec/lifecycle.md §9): checked against the log, claimed in `<id>.decisions/` (the
   * first claim wins, durable when this resolves), then logged under the write lock, or by the
   * running owner, which watches the claims (stores/decide.ts, stores/jsonl/decisions.ts).

   * An approval id of a request of a running child (the parent's `approvals()` lists them) is
   * decided in that child, as `agent.decide` of the parent does (docs/spec/lifecycle.md §10,
   * stores/decide-children.ts); the result's `sessionId` names the child.
   */
  async decide(id: string, approvalId: string, decision: StoreDecisionInput, opts: StoreDecideOptions = {}): Promise<StoreDecided> {
    // async: an invalid id rejects the promise (a caller awaiting it catches it), never a synchronous throw (issue 38.28)
    assertSessionId(id)
    // an id of a running child's request is decided in that child (docs/spec/lifecycle.md §10, decide-children.ts)
    return decideThroughChildren(this, id, approvalId, (sid) =>
      decideInStore(this, sid, approvalId, decision, { clock: this.clock, channel: new JsonlDecisionChannel(this.dir, sid, { fs: this.fs }), ...opts }))
  }

  /**
   * Answers an open input round of a session from any process on this machine, while an agent
   * runs the session or not (docs/spec/lifecycle.md §11; stores/answer.ts): checked, claimed in
   * `<id>.decisions/` like a decision (the first answer wins, durable when this resolves), then
   * logged under the write lock, or by the running owner, which watches the claims. The body's
   * next round runs once, in whichever process owns the session then. A request id of a running
   * child's round is answered in that child.
   */
  async answer(id: string, requestId: string, answer: unknown, opts: StoreAnswerOptions = {}): Promise<StoreAnswered> {
    assertSessionId(id)
    return answerThroughChildren(this, id, requestId, (sid) =>
      answerInStore(this, sid, requestId, answer, { clock: this.clock, channel: new JsonlDecisionChannel(this.dir, sid, { fs: this.fs }), ...opts }))
  }

  /** The log file of a session (the id is checked first). */
  path(id: string): string {
    assertSessionId(id)
    return join(this.dir, `${id}.jsonl`)
  }

  lockPath(id: string): string {
    return lockPath(this, id)
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
        if (code === 'EEXIST') throw new TurnlogError('SESSION_EXISTS', `session ${JSON.stringify(id)} exists already`, { sessionId: id, file })
        if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS' && code !== 'EXDEV') {
          throw ioError('IO_ERROR', err, file, 'cannot move the session file into place', id)
        }
        // file systems without hard links: check, then rename (a small race, documented)
        if (await fileExists(this.fs, file)) throw new TurnlogError('SESSION_EXISTS', `session ${JSON.stringify(id)} exists already`, { sessionId: id, file })
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
      const scan = await scanLog(this, id, file, READ_CACHE_BYTES)
      return new JsonlReader(this, id, file, scan)
    }
    if (mode !== 'write') {
      throw new TurnlogError('INVALID_ARGUMENT', `open mode must be 'read' or 'write', got ${String(mode)}`, { sessionId: id })
    }
    if (!(await fileExists(this.fs, file))) throw new TurnlogError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)} in the store`, { sessionId: id, file })
    const { owner, lockFile } = await this.acquireLock(id)
    let fh: StoreFile | undefined
    try {
      const scan = await scanLog(this, id, file)
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
    return fileExists(this.fs, this.path(id))
  }

  /** The current owner written in `<id>.lock`, or null when unlocked (or the file is unreadable). */
  async lockOwner(id: string): Promise<LockOwner | null> {
    const r = await readLock(this, this.lockPath(id))
    return r.kind === 'owner' ? r.owner : null
  }

  // ---------------------------------------------------------------------------------------------
  // The lock protocol (lock.ts)

  /** Takes `<id>.lock` (lock.ts `acquireLock`). @internal */
  acquireLock(id: string): Promise<{ owner: LockOwner; lockFile: StoreFile }> {
    return acquireLock(this, id)
  }

  /** Removes `<id>.lock` if it still names this owner's token. @internal */
  releaseLock(id: string, owner: LockOwner): Promise<void> {
    return releaseLock(this, id, owner)
  }

  /** Throws `SESSION_OWNED` unless `<id>.lock` still names `owner` (lock.ts `checkFence`). @internal */
  checkFence(id: string, owner: LockOwner, seen?: LockIdentity): Promise<void> {
    return checkFence(this, id, owner, seen)
  }

  /** Streams the records of `file` within its first `limit` bytes, from `fromSeq`. @internal */
  stream(id: string, file: string, limit: number, fromSeq: number): AsyncGenerator<LogEvent> {
    return streamLog(this, id, file, limit, fromSeq)
  }
}
