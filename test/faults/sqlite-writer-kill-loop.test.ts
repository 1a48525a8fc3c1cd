/**
 * A SIGKILL loop of writer processes on one SQLite file (bench/README.md;
 * docs/decisions/sqlite-durability.md), run by `npm run test:faults` (CI runs it once, beside the
 * suite): a writer process appends batches (several in flight: group commit) and is SIGKILLed at a
 * random moment; after each kill the file is reopened and every append that RESOLVED in the dead
 * process is there, the seqs run without a gap (L1), and the next writer (the drivers alternate:
 * both write one file) takes the lease over once the dead one's ran out.
 *
 * `TURNLOG_SQLITE_KILLS` sets the number of kills (default 30).
 */
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { childLib } from '../stores/child-lib.js'
import { durable, reread, why, writer } from '../stores/sqlite/writer-children.js'
import { DRIVERS, tempDir } from '../stores/sqlite/helpers.js'

const KILLS = Number(process.env.TURNLOG_SQLITE_KILLS ?? 30)

let lib = ''
beforeAll(() => {
  lib = childLib()
}, 180_000)

describe('SQLite: writer processes under SIGKILL (every resolved append is there after reopen)', () => {
  it(`L1: ${KILLS} SIGKILLs of a writer process at random moments, the drivers alternating: every resolved append is there, no gap or duplicate seq, each new writer holds a larger token`, async () => {
    const file = join(await tempDir(), 'crash.db')
    const stats = { kills: 0, resolved: 0, beyondResolved: 0 }
    let lastToken = 0
    let lastLength = 0
    for (let k = 0; k < KILLS; k++) {
      const c = writer(lib, file, DRIVERS[k % 2]!, 500 + k)
      const won = await c.waitFor((l) => l.startsWith('WON ') || l.startsWith('ERR'), 0, 60_000)
      expect(won, why(c)).toMatch(/^WON /)
      const [, token, length] = won!.split(' ').map(Number)
      expect(token).toBeGreaterThan(lastToken)
      expect(length).toBe(lastLength) // nothing lost between owners
      lastToken = token!
      // the kill must hit appends in flight: wait for 1–4 resolved appends, then a random moment
      const want = 1 + (k % 4)
      while (c.lines.filter((l) => l.startsWith('D ')).length < want) {
        const got = await c.waitFor((l) => l.startsWith('D ') || l.startsWith('ERR'), c.lines.length, 60_000)
        expect(got, why(c)).toMatch(/^D /)
      }
      await new Promise((r) => setTimeout(r, (k * 7919) % 60))
      c.proc.kill('SIGKILL')
      const exit = await c.exited
      expect(exit.signal, why(c)).toBe('SIGKILL')
      stats.kills++
      expect(c.lines.filter((l) => l.startsWith('ERR'))).toEqual([])
      const acked = durable(c)
      const back = await reread(file)
      expect(back.length).toBeGreaterThanOrEqual(acked)
      expect(back.seqs).toEqual(Array.from({ length: back.length }, (_, i) => i))
      stats.resolved += c.lines.filter((l) => l.startsWith('D ')).length
      if (back.length > acked) stats.beyondResolved++
      lastLength = back.length
    }
    expect(stats.kills).toBe(KILLS)
    expect(stats.resolved).toBeGreaterThanOrEqual(KILLS)
    console.log(`[sqlite crash loop] ${JSON.stringify({ ...stats, events: lastLength })}`)
  }, 600_000)
})
