/**
 * Real processes on one SQLite file (bench/README.md: two processes on one SQLite file;
 * docs/decisions/sqlite-durability.md):
 *
 * - Two processes racing for one session: exactly one holds the lease at a time; the other takes
 *   over after the holder is SIGKILLed (a larger fencing token), or after it is SIGSTOPped past its
 *   lease, in which case the stopped writer's next append is refused (`LEASE_LOST`) when it wakes.
 *   No duplicate or lost seq.
 *
 * The SIGKILL loop of writer processes is a fault loop: test/faults/sqlite-writer-kill-loop.test.ts.
 */
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { childLib } from '../child-lib.js'
import { durable, reread, why, writer } from './writer-children.js'
import { tempDir } from './helpers.js'

let lib = ''
beforeAll(() => {
  lib = childLib()
}, 180_000)

describe('SQLite: two processes racing for one session (one owner, no duplicate or lost seq)', () => {
  it('one holds the lease, the other waits; the holder SIGKILLed: the other takes over with a larger token from the durable length', async () => {
    const file = join(await tempDir(), 'race.db')
    const a = writer(lib, file, 'node:sqlite', 1, 2000)
    const b = writer(lib, file, 'better-sqlite3', 2, 2000)
    const first = await Promise.race([a, b].map((c) => c.waitFor((l) => l.startsWith('WON '), 0, 60_000).then((l) => ({ c, l }))))
    const holder = first.c
    const other = holder === a ? b : a
    await holder.waitFor((l) => l.startsWith('D '), 0, 60_000)
    holder.proc.kill('SIGKILL')
    await holder.exited
    const acked = durable(holder)
    const won = await other.waitFor((l) => l.startsWith('WON '), 0, 60_000)
    const [, token, length] = won!.split(' ').map(Number)
    // one owner at a time: the second ownership has a larger token; if the holder's lease ran out
    // while it lived (a stalled heartbeat on a loaded machine), its later appends were refused
    expect(token).toBeGreaterThan(Number(first.l!.split(' ')[1]))
    if (holder.lines.some((l) => l.startsWith('ERR '))) expect(holder.lines.filter((l) => l.startsWith('ERR '))).toEqual(['ERR LEASE_LOST'])
    else expect(length).toBeGreaterThanOrEqual(acked)
    await other.waitFor((l) => l.startsWith('D '), other.lines.indexOf(won!) + 1, 60_000)
    other.proc.kill('SIGKILL')
    await other.exited
    const back = await reread(file)
    expect(back.length).toBeGreaterThanOrEqual(Math.max(acked, durable(other)))
    expect(back.seqs).toEqual(Array.from({ length: back.length }, (_, i) => i))
  }, 120_000)

  it('LEASE_LOST: the holder SIGSTOPped past its lease, the other takes over; woken, the stopped writer\'s append is refused and nothing it writes lands', async () => {
    const file = join(await tempDir(), 'stop.db')
    const a = writer(lib, file, 'better-sqlite3', 3)
    await a.waitFor((l) => l.startsWith('D '), 0, 60_000)
    // frozen between transactions (a process frozen inside one holds the file's write lock: see
    // docs/decisions/sqlite-durability.md), then stopped
    a.send('PAUSE')
    expect(await a.waitFor((l) => l === 'PAUSED', 0, 60_000)).toBe('PAUSED')
    a.proc.kill('SIGSTOP')
    const b = writer(lib, file, 'node:sqlite', 4)
    const won = await b.waitFor((l) => l.startsWith('WON '), 0, 60_000)
    await b.waitFor((l) => l.startsWith('D '), b.lines.indexOf(won!) + 1, 60_000)
    // freeze the log: what a writes after waking must not land. b is killed between transactions:
    // a commit it had in flight could be in the WAL but not yet in its index (killed during the
    // WAL sync), invisible to the read below, and appear once the file is next opened by a first
    // connection, after a exits (docs/decisions/sqlite-durability.md): unacknowledged, b's, and not
    // what this test is about
    b.send('PAUSE')
    expect(await b.waitFor((l) => l === 'PAUSED', 0, 60_000)).toBe('PAUSED')
    b.proc.kill('SIGKILL')
    await b.exited
    const before = await reread(file)
    expect(before.length).toBe(durable(b))
    a.proc.kill('SIGCONT')
    a.send('RESUME')
    const err = await a.waitFor((l) => l.startsWith('ERR '), 0, 60_000)
    expect(err).toBe('ERR LEASE_LOST')
    await a.exited
    expect(await reread(file)).toEqual(before)
    expect(before.seqs).toEqual(Array.from({ length: before.length }, (_, i) => i))
  }, 120_000)
})
