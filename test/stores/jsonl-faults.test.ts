/**
 * jsonlStore under injected faults (docs/spec/reliability.md "Faults": crash between write and fsync; crash
 * mid-batch; fsync EIO; ENOSPC; two writers) and its lock, fencing and quarantine rules.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile, readdir } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import { readLog } from '../../replay/read-log.js'
import { jsonlStore, type JsonlStoreOptions } from '../../stores/jsonl/index.js'
import { collect, expectCode, SAMPLE } from './contract.js'
import { faultyFs } from './faulty-fs.js'

const dirs: string[] = []
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'turnlog-faults-'))
  dirs.push(d)
  return d
}
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

/** Two identities in one process: the "crashed" one is dead for the other. */
const DEAD_PID = 2_000_000_001
const LIVE_PID = 2_000_000_002
const asCrashed = (o: JsonlStoreOptions = {}): JsonlStoreOptions => ({ pid: DEAD_PID, isAlive: () => true, ...o })
const asRestarted = (o: JsonlStoreOptions = {}): JsonlStoreOptions => ({ pid: LIVE_PID, isAlive: (p) => p === LIVE_PID, ...o })
/** Closes the file descriptor of a handle whose process "crashed" (without releasing its lock). */
const deadHandle = async (w: unknown) => {
  const h = w as { fh: { close(): Promise<void> }; lockFile: { close(): Promise<void> } }
  await h.fh.close().catch(() => {})
  await h.lockFile.close().catch(() => {})
}
const plain = (es: readonly LogEvent[]) => JSON.parse(JSON.stringify(es)) as LogEvent[]

describe('jsonlStore: crash between write and fsync (reliability: crash mid-batch)', () => {
  it('every append that resolved is there after a crash; the unresolved batch is cut at a record boundary or is a repairable torn tail that is quarantined, not dropped', async () => {
    const seen = { torn: 0, clean: 0 }
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: SAMPLE.length - 2 }),
        fc.integer({ min: 1, max: 6 }),
        // nothing of the batch reached the disk, all of it, or a random prefix of its bytes
        fc.oneof(fc.constant(0), fc.constant(1), fc.noBias(fc.integer({ min: 1, max: 999 })).map((k) => k / 1000)),
        async (durableCount, pendingCount, keepFrac) => {
          const dir = await tmp()
          const ffs = faultyFs()
          const store = jsonlStore(dir, asCrashed({ fs: ffs }))
          await store.create('s')
          const w = await store.open('s', 'write')
          // acknowledged appends, one batch each
          for (let i = 0; i < durableCount; i++) await w.append([SAMPLE[i]!], { expectedSeq: i })
          // the next batch is written but its fsync never returns: then the machine dies
          const hold = ffs.holdSyncs()
          const end = Math.min(SAMPLE.length, durableCount + pendingCount)
          const pending = w.append(SAMPLE.slice(durableCount, end), { expectedSeq: durableCount })
          let settled = false
          pending.then(() => (settled = true), () => (settled = true))
          while (hold.waiting() === 0) await new Promise((r) => setTimeout(r, 1))
          expect(settled).toBe(false)
          const cut = await ffs.crash({ keep: (n) => Math.floor(n * keepFrac) })
          await pending.catch(() => {})

          // reopen as the restarted process (the crashed pid is dead; its lock is stale)
          const store2 = jsonlStore(dir, asRestarted())
          const file = store2.path('s')
          const log = await readLog(file, { tolerateTornTail: true })
          // nothing acknowledged lost
          expect(log.events.length).toBeGreaterThanOrEqual(durableCount)
          expect(log.events).toEqual(plain(SAMPLE.slice(0, log.events.length)))
          expect(log.events.length).toBeLessThanOrEqual(end)
          const keptBytes = cut.find((c) => c.path === file)?.kept ?? 0
          if (log.torn) {
            expect(log.torn.error.code).toBe('TORN_TAIL')
            expect(log.torn.error.repairable).toBe(true)
            expect(keptBytes).toBeGreaterThan(0)
            // a strict read refuses it, coded
            await expectCode(readLog(file), 'TORN_TAIL')
            // open for write refuses it too (repair first), and leaves no lock behind
            await expectCode(store2.open('s', 'write'), 'TORN_TAIL')
            const w2 = await store2.open('s', 'write', { allowTornTail: true })
            await expectCode(w2.append([SAMPLE[log.events.length]!], { expectedSeq: log.events.length }), 'TORN_TAIL')
            const torn = Buffer.from(log.torn.bytes)
            const q = await w2.quarantineTornTail!()
            expect(q).not.toBeNull()
            // the torn bytes are kept beside the log, byte for byte
            expect(await readFile(q!.file)).toEqual(torn)
            expect(q!.offset).toBe(log.torn.offset)
            // the log is its complete records again, and appends continue at the next seq
            const n = log.events.length
            await w2.append(SAMPLE.slice(n, n + 1), { expectedSeq: n })
            await w2.close()
          } else {
            // cut at a record boundary
            const w2 = await store2.open('s', 'write')
            expect(w2.length).toBe(log.events.length)
            await w2.close()
          }
          const final = await readLog(file)
          expect(final.events).toEqual(plain(SAMPLE.slice(0, final.events.length)))
          seen[log.torn ? 'torn' : 'clean']++
          await deadHandle(w)
        },
      ),
      { numRuns: 60 },
    )
    // both outcomes were exercised
    expect(seen.torn).toBeGreaterThan(5)
    expect(seen.clean).toBeGreaterThan(5)
  })

  it('a crash with nothing unsynced kept is a clean cut at the last acknowledged record', async () => {
    const dir = await tmp()
    const ffs = faultyFs()
    const store = jsonlStore(dir, asCrashed({ fs: ffs }))
    await store.create('s')
    const w = await store.open('s', 'write')
    await w.append(SAMPLE.slice(0, 4), { expectedSeq: 0 })
    ffs.holdSyncs()
    const p = w.append(SAMPLE.slice(4, 8), { expectedSeq: 4 })
    // its outcome is taken at once: under load the write may only happen after crash() began (it
    // then fails "after crash") and reject while crash() still runs, before an await could attach
    const outcome = p.then(() => 'resolved', (e: unknown) => e)
    await new Promise((r) => setTimeout(r, 5))
    await ffs.crash({ keep: () => 0 })
    expect(TurnlogError.is(await outcome)).toBe(true)
    const r = await jsonlStore(dir, asRestarted()).open('s', 'read')
    expect(r.length).toBe(4)
    expect(r.torn).toBeUndefined()
    await deadHandle(w)
  })
})

describe('jsonlStore: fsync EIO and ENOSPC (reliability: the session stops writing, never retries an fsync)', () => {
  it('fsync EIO: the append rejects FSYNC_FAILED, its whole batch too, every later append rejects, no fsync is retried; nothing acknowledged is lost', async () => {
    const dir = await tmp()
    const ffs = faultyFs()
    const store = jsonlStore(dir, asCrashed({ fs: ffs }))
    await store.create('s')
    const w = await store.open('s', 'write')
    await w.append(SAMPLE.slice(0, 3), { expectedSeq: 0 })
    ffs.failSync('EIO', 's.jsonl')
    const a = w.append(SAMPLE.slice(3, 4), { expectedSeq: 3 })
    const b = w.append(SAMPLE.slice(4, 5), { expectedSeq: 4 }) // same batch (same tick)
    const ea = await expectCode(a, 'FSYNC_FAILED')
    expect(ea.info).toMatchObject({ errno: 'EIO' })
    expect(ea.sessionId).toBe('s')
    expect(await b.catch((e) => e)).toBe(ea)
    expect(w.failed).toBe(ea)
    const syncs = ffs.syncs
    // later appends reject with the same error and never reach the disk
    const writes = ffs.writes
    expect(await w.append(SAMPLE.slice(5, 6), { expectedSeq: 5 }).catch((e) => e)).toBe(ea)
    expect(ffs.syncs).toBe(syncs)
    expect(ffs.writes).toBe(writes)
    expect(w.durableLength).toBe(3)
    await w.close()
    // after close the lock is free; everything acknowledged is there
    const log = await readLog(store.path('s'), { tolerateTornTail: true })
    expect(log.events.slice(0, 3)).toEqual(plain(SAMPLE.slice(0, 3)))
    expect(await store.lockOwner('s')).toBeNull()
  })

  it('ENOSPC mid-write: IO_ERROR {errno: ENOSPC}, the handle stops; reopen finds a repairable torn tail after the acknowledged records', async () => {
    const dir = await tmp()
    const ffs = faultyFs()
    const store = jsonlStore(dir, { fs: ffs })
    await store.create('s')
    const w = await store.open('s', 'write')
    await w.append(SAMPLE.slice(0, 5), { expectedSeq: 0 })
    ffs.failWrite('ENOSPC', { partial: 37, match: 's.jsonl' })
    const e = await expectCode(w.append(SAMPLE.slice(5, 9), { expectedSeq: 5 }), 'IO_ERROR')
    expect(e.info).toMatchObject({ errno: 'ENOSPC' })
    const syncs = ffs.syncs
    expect(await w.append(SAMPLE.slice(9, 10), { expectedSeq: 9 }).catch((x) => x)).toBe(e)
    expect(ffs.syncs).toBe(syncs)
    await w.close()
    const r = await store.open('s', 'read')
    expect(r.length).toBe(5)
    expect(r.torn?.error.code).toBe('TORN_TAIL')
    expect(r.torn?.bytes.length).toBe(37)
    expect(await collect(r.events())).toEqual(plain(SAMPLE.slice(0, 5)))
    const err = await expectCode(store.open('s', 'write'), 'TORN_TAIL')
    expect(err.repairable).toBe(true)
  })

  it('ENOSPC before any byte: IO_ERROR, and the file holds exactly the acknowledged records', async () => {
    const dir = await tmp()
    const ffs = faultyFs()
    const store = jsonlStore(dir, { fs: ffs })
    await store.create('s')
    const w = await store.open('s', 'write')
    await w.append(SAMPLE.slice(0, 2), { expectedSeq: 0 })
    ffs.failWrite('ENOSPC', { match: 's.jsonl' })
    await expectCode(w.append(SAMPLE.slice(2, 3), { expectedSeq: 2 }), 'IO_ERROR')
    await w.close()
    const w2 = await store.open('s', 'write')
    expect(w2.length).toBe(2)
    await w2.append(SAMPLE.slice(2, 3), { expectedSeq: 2 })
    await w2.close()
    expect((await readLog(store.path('s'))).events).toEqual(plain(SAMPLE.slice(0, 3)))
  })
})

describe('jsonlStore: group commit', () => {
  it('appends in one tick share one write and one fsync; appends during an fsync form the next batch', async () => {
    const dir = await tmp()
    const ffs = faultyFs()
    const store = jsonlStore(dir, { fs: ffs })
    await store.create('s')
    const w = await store.open('s', 'write')
    const w0 = ffs.writes
    const s0 = ffs.syncs
    const first = SAMPLE.slice(0, 10).map((e, i) => w.append([e], { expectedSeq: i }))
    await Promise.all(first)
    expect(ffs.writes - w0).toBe(1)
    expect(ffs.syncs - s0).toBe(1)
    // hold the next fsync; appends made meanwhile wait for it, then go as one batch
    const hold = ffs.holdSyncs()
    const a = w.append([SAMPLE[10]!], { expectedSeq: 10 })
    while (hold.waiting() === 0) await new Promise((r) => setTimeout(r, 1))
    const more: Promise<unknown>[] = []
    for (let i = 11; i < 20; i++) {
      more.push(w.append([SAMPLE[i]!], { expectedSeq: i }))
      await Promise.resolve()
    }
    let aDone = false
    void a.then(() => (aDone = true))
    await new Promise((r) => setTimeout(r, 5))
    expect(aDone).toBe(false)
    hold.release()
    await a
    await Promise.all(more)
    expect(ffs.writes - w0).toBe(3)
    expect(ffs.syncs - s0).toBe(3)
    expect(w.durableLength).toBe(20)
    await w.close()
  })
})

describe('jsonlStore: lock file, stale locks, fencing', () => {
  const deadPid = (): number => {
    // a pid that just existed on this host and is gone now
    return Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).toString())
  }

  it('a lock of a dead pid on this host is stale: taken over, with a larger fencing token', async () => {
    const dir = await tmp()
    const store = jsonlStore(dir)
    await store.create('s')
    const w = await store.open('s', 'write')
    const t1 = w.token
    await w.close()
    await writeFile(join(dir, 's.lock'), JSON.stringify({ pid: deadPid(), host: hostname(), token: t1, acquiredAt: 1 }))
    const w2 = await store.open('s', 'write')
    expect(w2.token).toBe(t1 + 1)
    expect(await store.lockOwner('s')).toMatchObject({ pid: process.pid, token: t1 + 1 })
    await w2.close()
    expect((await readdir(dir)).filter((n) => n.includes('takeover'))).toEqual([])
  })

  it('SESSION_OWNED for a live pid, for another host (even with a dead pid), and for a young half-written lock; an old half-written lock is stale', async () => {
    const dir = await tmp()
    let now = 10_000
    const store = jsonlStore(dir, { clock: () => now })
    await store.create('s')
    const lock = join(dir, 's.lock')
    await writeFile(lock, JSON.stringify({ pid: process.ppid, host: hostname(), token: 7, acquiredAt: 1 }))
    const e = await expectCode(store.open('s', 'write'), 'SESSION_OWNED')
    expect(e.info).toMatchObject({ owner: { pid: process.ppid, token: 7 } })
    await writeFile(lock, JSON.stringify({ pid: deadPid(), host: 'another-host', token: 7, acquiredAt: 1 }))
    await expectCode(store.open('s', 'write'), 'SESSION_OWNED')
    await writeFile(lock, '')
    now = Date.now() + 1000
    await expectCode(store.open('s', 'write'), 'SESSION_OWNED')
    now = Date.now() + 60_000
    const w = await store.open('s', 'write')
    await w.close()
  })

  it('fencing: a writer whose lock was taken over writes nothing more (SESSION_OWNED), the new owner continues', async () => {
    const dir = await tmp()
    const a = jsonlStore(dir, asCrashed())
    await a.create('s')
    const wa = await a.open('s', 'write')
    await wa.append(SAMPLE.slice(0, 2), { expectedSeq: 0 })
    // the owner is judged dead (say, a paused VM) and another process takes the session over
    const b = jsonlStore(dir, { pid: LIVE_PID, isAlive: (p) => p !== DEAD_PID })
    const wb = await b.open('s', 'write')
    expect(wb.token).toBeGreaterThan(wa.token)
    const err = await expectCode(wa.append(SAMPLE.slice(2, 3), { expectedSeq: 2 }), 'SESSION_OWNED')
    expect(err.message).toMatch(/stale/)
    await expectCode(wa.append(SAMPLE.slice(2, 3), { expectedSeq: 2 }), 'SESSION_OWNED')
    await wb.append(SAMPLE.slice(2, 4), { expectedSeq: 2 })
    await wa.close() // does not remove b's lock
    expect(await b.lockOwner('s')).toMatchObject({ pid: LIVE_PID, token: wb.token })
    await wb.close()
    expect((await readLog(b.path('s'))).events).toEqual(plain(SAMPLE.slice(0, 4)))
  })

  it('a torn log: open for write is TORN_TAIL and releases the lock; open for read shows the complete records and the tear', async () => {
    const dir = await tmp()
    const store = jsonlStore(dir)
    await store.create('s')
    const w = await store.open('s', 'write')
    await w.append(SAMPLE.slice(0, 3), { expectedSeq: 0 })
    await w.close()
    const f = store.path('s')
    await writeFile(f, '{"seq":3,"ti', { flag: 'a' })
    await expectCode(store.open('s', 'write'), 'TORN_TAIL')
    await expectCode(store.open('s', 'write'), 'TORN_TAIL') // not SESSION_OWNED: the lock was released
    const r = await store.open('s', 'read')
    expect(r.length).toBe(3)
    expect(r.torn).toMatchObject({ reason: 'unterminated', line: 5 })
    // quarantine twice (a second tear later) → two quarantine files, never overwritten
    const w2 = await store.open('s', 'write', { allowTornTail: true })
    expect((await w2.quarantineTornTail!())!.file).toMatch(/s\.quarantine-1$/)
    expect(await w2.quarantineTornTail!()).toBeNull()
    await w2.close()
    await writeFile(f, 'garbage', { flag: 'a' })
    const w3 = await store.open('s', 'write', { allowTornTail: true })
    const q = await w3.quarantineTornTail!()
    expect(q!.file).toMatch(/s\.quarantine-2$/)
    expect((await readFile(q!.file)).toString()).toBe('garbage')
    expect((await readFile(join(dir, 's.quarantine-1'))).toString()).toBe('{"seq":3,"ti')
    await w3.close()
    expect((await readLog(f)).events.length).toBe(3)
  })

  it('mid-file corruption is refused for write and read (coded, not repairable)', async () => {
    const dir = await tmp()
    const store = jsonlStore(dir)
    await store.create('s')
    const w = await store.open('s', 'write')
    await w.append(SAMPLE.slice(0, 3), { expectedSeq: 0 })
    await w.close()
    const f = store.path('s')
    const lines = (await readFile(f, 'utf8')).split('\n')
    lines[2] = lines[2]!.replace('"seq":1', '"seq":1 ')
    await writeFile(f, lines.join('\n'))
    const e = await expectCode(store.open('s', 'write'), 'CHECKSUM_MISMATCH')
    expect(e.repairable).toBeFalsy()
    await expectCode(store.open('s', 'read'), 'CHECKSUM_MISMATCH')
    // the lock was released
    expect(await store.lockOwner('s')).toBeNull()
  })

  it('create is atomic (temp file + link): no temp files left, the header is complete and fsynced', async () => {
    const dir = await tmp()
    const store = jsonlStore(dir)
    await Promise.allSettled([store.create('s'), store.create('s'), store.create('s')])
    expect(await readdir(dir)).toEqual(['s.jsonl'])
    const text = await readFile(store.path('s'), 'utf8')
    expect(text.endsWith('\n')).toBe(true)
    expect(JSON.parse(text)).toMatchObject({ type: 'session', id: 's', checksums: 'crc32' })
  })
})
