/**
 * A fault-injecting `StoreFs` for the jsonl store (docs/spec/reliability.md "Faults"): wraps the real file
 * system and can
 * - fail an fsync (`failSync('EIO')`), a write (`failWrite('ENOSPC', { partial })`, optionally after
 *   writing a part of the buffer, as a full disk does);
 * - hold an fsync open (`holdSyncs()`): the bytes are written, not yet durable — then `crash()`;
 * - `crash({ keep })`: drop what was not fsynced. For every file written through this layer the
 *   bytes after its last fsync are cut, keeping `keep(unsynced)` of them (0: nothing reached the
 *   disk; a random prefix: a torn write). Every handle opened before the crash then fails with EIO,
 *   like a process that is gone.
 * It counts writes and fsyncs (group commit tests).
 *
 * The decision claims' synchronous calls (`claims`, stores/jsonl/decisions.ts) go through it too:
 * `failClaim(step)` fails the next call of one step (a write may write a part first), `beforeClaim
 * (step, fn)` runs `fn` right before it (another decider in between), and `crash()` also drops the
 * unsynced bytes of claim files and the claim links made since their directory's last fsync.
 */
import { unlinkSync } from 'node:fs'
import { truncate } from 'node:fs/promises'
import { dirname } from 'node:path'
import { nodeFs, type ClaimFs, type StoreFile, type StoreFs } from '../../stores/jsonl/fs.js'

/** The steps of the claims' synchronous calls that a fault or a hook can target. */
export type ClaimStep = 'mkdir' | 'create' | 'write' | 'sync' | 'close' | 'link' | 'unlink' | 'syncDir' | 'readFile' | 'readdir' | 'watch'

export interface FaultyFs extends StoreFs {
  writes: number
  syncs: number
  /** The next fsync (of a path containing `match`, if given) fails with `code`. */
  failSync(code?: string, match?: string): void
  /** The next write fails with `code` after writing `partial` bytes of it. */
  failWrite(code?: string, opts?: { partial?: number; match?: string }): void
  /** Every later fsync waits until `release()` is called (or forever, then `crash()`). */
  holdSyncs(): { release(): void; waiting(): number }
  /** Drops the unsynced bytes of every file written through this layer; old handles then fail. */
  crash(opts?: { keep?: (unsynced: number) => number }): Promise<Array<{ path: string; synced: number; size: number; kept: number }>>
  /** Bytes durable per path (size at the last fsync), for assertions. */
  synced(path: string): number | undefined
  /** The next claim call of `step` (on a path containing `match`, if given) fails with `code`; a write after writing `partial` bytes. */
  failClaim(step: ClaimStep, code?: string, opts?: { partial?: number; match?: string }): void
  /** Runs `fn` once, right before the next claim call of `step`. */
  beforeClaim(step: ClaimStep, fn: () => void): void
  /** The claim calls made, in order (`step path`). */
  claimCalls: string[]
}

function errnoError(code: string, what: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected fault (${what})`), { code })
}

export function faultyFs(base: StoreFs = nodeFs): FaultyFs {
  let epoch = 0
  const synced = new Map<string, number>()
  const sizes = new Map<string, number>()
  let syncFault: { code: string; match?: string } | null = null
  let writeFault: { code: string; partial: number; match?: string } | null = null
  let hold: { waiters: Array<() => void>; released: boolean } | null = null

  const claimFaults = new Map<ClaimStep, { code: string; partial: number; match?: string }>()
  const claimHooks = new Map<ClaimStep, () => void>()
  /** Claim links not yet made durable by an fsync of their directory. */
  const claimLinks = new Set<string>()
  const claimStep = (step: ClaimStep, path: string): { partial: number; code: string } | null => {
    fs.claimCalls.push(`${step} ${path}`)
    const hook = claimHooks.get(step)
    if (hook) {
      claimHooks.delete(step)
      hook()
    }
    const f = claimFaults.get(step)
    if (f && (!f.match || path.includes(f.match))) {
      claimFaults.delete(step)
      return f
    }
    return null
  }
  const fault = (step: ClaimStep, path: string) => {
    const f = claimStep(step, path)
    if (f) throw errnoError(f.code, `claim ${step}`)
  }
  const bc = base.claims
  const claims: ClaimFs = {
    mkdir(p, o) {
      fault('mkdir', p)
      bc.mkdir(p, o)
    },
    create(path, mode) {
      fault('create', path)
      const f = bc.create(path, mode)
      synced.set(path, 0)
      sizes.set(path, 0)
      return {
        write(buf, off, len, pos) {
          fs.writes++
          const wf = claimStep('write', path)
          if (wf) {
            const part = Math.min(wf.partial, len)
            if (part > 0) f.write(buf, off, part, pos)
            sizes.set(path, Math.max(sizes.get(path) ?? 0, pos + part))
            throw errnoError(wf.code, 'claim write')
          }
          const n = f.write(buf, off, len, pos)
          sizes.set(path, Math.max(sizes.get(path) ?? 0, pos + n))
          return n
        },
        sync() {
          fs.syncs++
          fault('sync', path)
          f.sync()
          synced.set(path, sizes.get(path) ?? 0)
        },
        close() {
          const cf = claimStep('close', path)
          f.close()
          if (cf) throw errnoError(cf.code, 'claim close')
        },
      }
    },
    readFile(p, limit) {
      fault('readFile', p)
      return bc.readFile(p, limit)
    },
    readdir(p) {
      fault('readdir', p)
      return bc.readdir(p)
    },
    link(a, b) {
      fault('link', b)
      bc.link(a, b)
      claimLinks.add(b)
      const s = synced.get(a)
      if (s !== undefined) {
        synced.set(b, s)
        sizes.set(b, sizes.get(a) ?? s)
      }
    },
    unlink(p) {
      fault('unlink', p)
      bc.unlink(p)
      claimLinks.delete(p)
      synced.delete(p)
      sizes.delete(p)
    },
    syncDir(p) {
      fs.syncs++
      fault('syncDir', p)
      bc.syncDir(p)
      for (const l of [...claimLinks]) if (dirname(l) === p) claimLinks.delete(l)
    },
    ...(bc.watch
      ? {
          watch: (p: string, onChange: () => void) => {
            fault('watch', p)
            return bc.watch!(p, onChange)
          },
        }
      : {}),
  }

  const fs: FaultyFs = {
    claims,
    claimCalls: [],
    failClaim(step, code = 'EIO', opts = {}) {
      claimFaults.set(step, { code, partial: opts.partial ?? 0, ...(opts.match ? { match: opts.match } : {}) })
    },
    beforeClaim(step, fn) {
      claimHooks.set(step, fn)
    },
    writes: 0,
    syncs: 0,
    async open(path, flags, mode) {
      const f = await base.open(path, flags, mode)
      const myEpoch = epoch
      const alive = (what: string) => {
        if (myEpoch !== epoch) throw errnoError('EIO', `${what} after crash`)
      }
      if (flags !== 'r') {
        const size = (await f.stat()).size
        if (!synced.has(path)) synced.set(path, flags.includes('x') ? 0 : size)
        sizes.set(path, size)
      }
      const file: StoreFile = {
        async write(buf, off, len, pos) {
          alive('write')
          fs.writes++
          if (writeFault && (!writeFault.match || path.includes(writeFault.match))) {
            const wf = writeFault
            writeFault = null
            const part = Math.min(wf.partial, len)
            if (part > 0) await f.write(buf, off, part, pos)
            sizes.set(path, Math.max(sizes.get(path) ?? 0, pos + part))
            throw errnoError(wf.code, 'write')
          }
          const r = await f.write(buf, off, len, pos)
          sizes.set(path, Math.max(sizes.get(path) ?? 0, pos + r.bytesWritten))
          return r
        },
        async read(buf, off, len, pos) {
          alive('read')
          return f.read(buf, off, len, pos)
        },
        async sync() {
          alive('fsync')
          fs.syncs++
          const sizeAtCall = sizes.get(path) ?? (await f.stat()).size
          if (hold && !hold.released) {
            const h = hold
            await new Promise<void>((r) => h.waiters.push(r))
            alive('fsync')
          }
          if (syncFault && (!syncFault.match || path.includes(syncFault.match))) {
            const sf = syncFault
            syncFault = null
            throw errnoError(sf.code, 'fsync')
          }
          await f.sync()
          synced.set(path, sizeAtCall)
        },
        async truncate(len) {
          alive('truncate')
          await f.truncate(len)
          sizes.set(path, len)
          // a truncate is metadata: durable at the next fsync; until then the old size may come back
        },
        async stat() {
          alive('stat')
          return f.stat()
        },
        async close() {
          await f.close()
        },
      }
      return file
    },
    readFile: (p) => base.readFile(p),
    link: (a, b) => base.link(a, b),
    rename: async (a, b) => {
      await base.rename(a, b)
      const s = synced.get(a)
      if (s !== undefined) {
        synced.set(b, s)
        synced.delete(a)
        sizes.set(b, sizes.get(a) ?? s)
        sizes.delete(a)
      }
    },
    unlink: async (p) => {
      await base.unlink(p)
      synced.delete(p)
      sizes.delete(p)
    },
    stat: (p) => base.stat(p),
    readdir: (p) => base.readdir(p),
    mkdir: (p, o) => base.mkdir(p, o),
    syncDir: (p) => base.syncDir(p),
    failSync(code = 'EIO', match) {
      syncFault = { code, ...(match ? { match } : {}) }
    },
    failWrite(code = 'ENOSPC', opts = {}) {
      writeFault = { code, partial: opts.partial ?? 0, ...(opts.match ? { match: opts.match } : {}) }
    },
    holdSyncs() {
      const h = { waiters: [] as Array<() => void>, released: false }
      hold = h
      return {
        release() {
          h.released = true
          for (const w of h.waiters.splice(0)) w()
          if (hold === h) hold = null
        },
        waiting: () => h.waiters.length,
      }
    },
    async crash(opts = {}) {
      epoch++
      const out: Array<{ path: string; synced: number; size: number; kept: number }> = []
      for (const [path, s] of synced) {
        let size: number
        try {
          size = (await base.stat(path)).size
        } catch {
          continue
        }
        if (size <= s) continue
        const unsynced = size - s
        const kept = Math.max(0, Math.min(unsynced, Math.floor(opts.keep?.(unsynced) ?? 0)))
        await truncate(path, s + kept)
        out.push({ path, synced: s, size, kept })
      }
      // claim links whose directory was never fsynced are gone
      for (const l of claimLinks) {
        try {
          unlinkSync(l)
        } catch {
          // gone already
        }
      }
      claimLinks.clear()
      // the pending holds never return (their handles are dead)
      if (hold) {
        const h = hold
        hold = null
        h.released = true
        for (const w of h.waiters.splice(0)) w()
      }
      synced.clear()
      sizes.clear()
      return out
    },
    synced: (p) => synced.get(p),
  }
  return fs
}
