/**
 * The jsonl store's lock protocol (decision record "stores" (docs/decisions/ in the repository), "JsonlStore files and the lock protocol"):
 * `<id>.lock` names the one writer, `<id>.fence` hands out growing fencing tokens, a stale lock
 * (a dead pid on this host, or an unparseable file older than `staleLockMs`) is broken under the
 * `<id>.lock.takeover` mutex, and a writer checks its token (fencing) before each batch.
 */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { TurnlogError } from '../../events/errors.js'
import { assertSessionId } from '../ids.js'
import type { StoreFile, StoreFs } from './fs.js'
import { errno, ioError, writeAll } from './io.js'

/** The contents of `<id>.lock`. */
export interface LockOwner {
  pid: number
  host: string
  token: number
  acquiredAt: number
}

/** What the protocol needs of its store (`JsonlStore` provides it). */
export interface LockEnv {
  readonly dir: string
  readonly fs: StoreFs
  /** Epoch ms for lock files and staleness. */
  readonly clock: () => number
  readonly staleLockMs: number
  readonly pid: number
  readonly host: string
  readonly isAlive: (pid: number) => boolean
}

/** `<dir>/<id>.lock` (the id is checked first). */
export function lockPath(env: Pick<LockEnv, 'dir'>, id: string): string {
  assertSessionId(id)
  return join(env.dir, `${id}.lock`)
}

/**
 * Takes `<id>.lock`: created with `wx` (one creator wins), then the next fencing token is taken
 * from `<id>.fence` and the owner is written and fsynced. An existing lock is stale, and broken,
 * only when it names this host and a pid that is not alive, or when it is unparseable and older
 * than `staleLockMs`. Anything else is `SESSION_OWNED` naming the owner. The lock file stays
 * open while owned: its inode cannot be reused, so "the path still has my inode" is a sound
 * fencing fast path.
 */
export async function acquireLock(env: LockEnv, id: string): Promise<{ owner: LockOwner; lockFile: StoreFile }> {
  const lock = lockPath(env, id)
  for (let attempt = 0; ; attempt++) {
    let fh: StoreFile
    try {
      fh = await env.fs.open(lock, 'wx', 0o644)
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw ioError('IO_ERROR', err, lock, 'cannot create the lock file', id)
      const seen = await readLock(env, lock)
      if (seen.kind === 'gone') continue
      const stale = isStale(env, seen)
      if (!stale || attempt >= 3) {
        throw new TurnlogError(
          'SESSION_OWNED',
          seen.kind === 'owner'
            ? `the session has a writer: pid ${seen.owner.pid} on ${seen.owner.host} (token ${seen.owner.token})`
            : 'the session is being opened for writing by another process',
          { sessionId: id, file: lock, info: seen.kind === 'owner' ? { owner: seen.owner } : { lock: 'incomplete' } },
        )
      }
      await breakStale(env, id, lock, seen)
      continue
    }
    try {
      const token = (await readFence(env, id)) + 1
      await writeFence(env, id, token)
      const owner: LockOwner = { pid: env.pid, host: env.host, token, acquiredAt: env.clock() }
      await writeAll(fh, Buffer.from(JSON.stringify(owner) + '\n'), 0)
      await fh.sync()
      return { owner, lockFile: fh }
    } catch (err) {
      await fh.close().catch(() => {})
      await env.fs.unlink(lock).catch(() => {})
      throw TurnlogError.is(err) ? err : ioError('IO_ERROR', err, lock, 'cannot write the lock file', id)
    }
  }
}

/** Removes `<id>.lock` if it still names this owner's token. */
export async function releaseLock(env: LockEnv, id: string, owner: LockOwner): Promise<void> {
  const lock = lockPath(env, id)
  const seen = await readLock(env, lock)
  if (seen.kind === 'owner' && seen.owner.token === owner.token && seen.owner.pid === owner.pid) {
    await env.fs.unlink(lock).catch(() => {})
  }
}

/**
 * Throws `SESSION_OWNED` unless `<id>.lock` still names `owner` (the fencing check). Fast path:
 * one `stat` of the lock, compared with the identity (inode, size, mtime) it had when this owner
 * wrote it (`seen`); a takeover makes a new file, and the owner holds its lock file open, so the
 * inode number cannot have been reused. On any difference the lock is read and its
 * token compared; `seen` is then refreshed.
 */
export async function checkFence(env: LockEnv, id: string, owner: LockOwner, seen?: LockIdentity): Promise<void> {
  const lock = lockPath(env, id)
  let ident: LockIdentity | undefined
  if (seen) {
    try {
      const st = env.fs.statSync ? env.fs.statSync(lock) : await env.fs.stat(lock)
      if (st.ino === seen.ino && st.size === seen.size && st.mtimeMs === seen.mtimeMs) return
      ident = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw ioError('IO_ERROR', err, lock, 'cannot stat the lock file', id)
    }
  }
  // slow path: the identity was taken before this read, so a takeover after it changes the identity
  const now = await readLock(env, lock)
  if (now.kind === 'owner' && now.owner.token === owner.token && now.owner.pid === owner.pid && now.owner.host === owner.host) {
    if (seen && ident) Object.assign(seen, ident)
    return
  }
  const seenLock = now
  throw new TurnlogError('SESSION_OWNED', `this writer's fencing token ${owner.token} is stale: the lock was taken over or removed`, {
    sessionId: id, file: lock, info: { token: owner.token, ...(seenLock.kind === 'owner' ? { owner: seenLock.owner } : { lock: seenLock.kind }) },
  })
}


function isStale(env: LockEnv, seen: LockRead): boolean {
  if (seen.kind === 'owner') return seen.owner.host === env.host && seen.owner.pid !== env.pid && !env.isAlive(seen.owner.pid)
  if (seen.kind === 'garbage') return env.clock() - seen.mtimeMs > env.staleLockMs
  return false
}

/** Removes a stale lock under the takeover mutex, after checking it is still the same stale lock. */
async function breakStale(env: LockEnv, id: string, lock: string, seen: LockRead): Promise<void> {
  const mutex = `${lock}.takeover`
  let m: StoreFile
  try {
    m = await env.fs.open(mutex, 'wx', 0o644)
  } catch (err) {
    if (errno(err) !== 'EEXIST') throw ioError('IO_ERROR', err, mutex, 'cannot create the takeover file', id)
    // someone else is breaking it; a mutex left by a dead breaker goes after staleLockMs
    try {
      const st = await env.fs.stat(mutex)
      if (env.clock() - st.mtimeMs > env.staleLockMs) await env.fs.unlink(mutex).catch(() => {})
    } catch {
      /* gone meanwhile */
    }
    await new Promise((r) => setTimeout(r, 5))
    return
  }
  try {
    await m.close().catch(() => {})
    const now = await readLock(env, lock)
    if (now.kind === 'gone') return
    if (JSON.stringify(now) !== JSON.stringify(seen) || !isStale(env, now)) return
    await env.fs.unlink(lock).catch((err: unknown) => {
      if (errno(err) !== 'ENOENT') throw ioError('IO_ERROR', err, lock, 'cannot remove the stale lock', id)
    })
  } finally {
    await env.fs.unlink(mutex).catch(() => {})
  }
}

export async function readLock(env: LockEnv, lock: string): Promise<LockRead> {
  let text: string
  let mtimeMs = 0
  try {
    text = (await env.fs.readFile(lock)).toString('utf8')
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
    mtimeMs = (await env.fs.stat(lock)).mtimeMs
  } catch (err) {
    if (errno(err) === 'ENOENT') return { kind: 'gone' }
  }
  return { kind: 'garbage', mtimeMs }
}

async function readFence(env: LockEnv, id: string): Promise<number> {
  const f = join(env.dir, `${id}.fence`)
  try {
    const n = Number((await env.fs.readFile(f)).toString('utf8').trim())
    return Number.isSafeInteger(n) && n >= 0 ? n : 0
  } catch (err) {
    if (errno(err) === 'ENOENT') return 0
    throw ioError('IO_ERROR', err, f, 'cannot read the fence file', id)
  }
}

async function writeFence(env: LockEnv, id: string, token: number): Promise<void> {
  const f = join(env.dir, `${id}.fence`)
  const tmp = `${f}.${env.pid}.${randomBytes(4).toString('hex')}.tmp`
  try {
    const fh = await env.fs.open(tmp, 'wx', 0o644)
    try {
      await writeAll(fh, Buffer.from(`${token}\n`), 0)
      await fh.sync()
    } finally {
      await fh.close().catch(() => {})
    }
    await env.fs.rename(tmp, f)
    await env.fs.syncDir(env.dir)
  } catch (err) {
    await env.fs.unlink(tmp).catch(() => {})
    throw ioError('IO_ERROR', err, f, 'cannot write the fence file', id)
  }
}

/** What the fencing fast path compares. */
export interface LockIdentity {
  ino: number
  size: number
  mtimeMs: number
}

export type LockRead = { kind: 'owner'; owner: LockOwner } | { kind: 'garbage'; mtimeMs: number } | { kind: 'gone' }

