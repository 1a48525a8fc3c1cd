/**
 * Real processes against jsonlStore (docs/spec/reliability.md "Faults"): two writers in two processes
 * (exactly one wins, the other gets SESSION_OWNED; a SIGKILLed owner's lock is stale and taken
 * over). The SIGKILL crash loop is a fault loop: test/faults/jsonl-crash-loop.test.ts.
 *
 * The children run the compiled library (test/stores/child-lib.ts: `dist/` when fresh, else a
 * tsc build of the sources they import).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { LineChild } from '../support/line-child.js'
import { childLib, ROOT } from './child-lib.js'

const LOCK_CHILD = fileURLToPath(new URL('./children/lock-child.mjs', import.meta.url))

let lib = ''
const dirs: string[] = []
beforeAll(() => {
  lib = childLib()
}, 120_000)
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'turnlog-proc-'))
  dirs.push(d)
  return d
}

describe('two processes, one session (reliability: two writers)', () => {
  it('exactly one of two processes opening for write wins; the other gets SESSION_OWNED; after the owner is SIGKILLed its lock is stale and the other takes over with a larger token; no duplicate or lost seq', async () => {
    const dir = await tmp()
    const store = jsonlStore(dir)
    const rounds = 12
    for (let r = 0; r < rounds; r++) await store.create(`r${r}`)
    const a = new LineChild(spawn, LOCK_CHILD, [lib, dir], ROOT)
    const b = new LineChild(spawn, LOCK_CHILD, [lib, dir], ROOT)
    await Promise.all([a.line((l) => l === 'READY'), b.line((l) => l === 'READY')])
    const wins = { a: 0, b: 0 }
    for (let r = 0; r < rounds; r++) {
      const id = `r${r}`
      const [fa, fb] = [a.lines.length, b.lines.length]
      a.send(`open ${id}`)
      b.send(`open ${id}`)
      const [la, lb] = await Promise.all([
        a.line((l) => l.endsWith(` ${id}`) || l.includes(` ${id} `), fa),
        b.line((l) => l.endsWith(` ${id}`) || l.includes(` ${id} `), fb),
      ])
      const results = [la, lb]
      expect(results.filter((l) => l.startsWith('WON')).length, results.join(' / ')).toBe(1)
      expect(results.filter((l) => l === `LOST ${id} SESSION_OWNED`).length, results.join(' / ')).toBe(1)
      const [winner, loser] = la.startsWith('WON') ? [a, b] : [b, a]
      wins[winner === a ? 'a' : 'b']++
      // the winner appends; the loser, after the winner closes, continues at the right seq
      let f = winner.lines.length
      winner.send(`append ${id} 3`)
      expect(await winner.line((l) => l.startsWith(`APPENDED ${id}`), f)).toBe(`APPENDED ${id} 3`)
      f = loser.lines.length
      loser.send(`open ${id}`)
      expect(await loser.line((l) => l.includes(` ${id}`), f)).toBe(`LOST ${id} SESSION_OWNED`)
      f = winner.lines.length
      winner.send(`close ${id}`)
      await winner.line((l) => l === `CLOSED ${id}`, f)
      f = loser.lines.length
      loser.send(`open ${id}`)
      expect(await loser.line((l) => l.includes(` ${id}`), f)).toMatch(new RegExp(`^WON ${id} \\d+$`))
      f = loser.lines.length
      loser.send(`append ${id} 2`)
      expect(await loser.line((l) => l.startsWith(`APPENDED ${id}`), f)).toBe(`APPENDED ${id} 5`)
      f = loser.lines.length
      loser.send(`close ${id}`)
      await loser.line((l) => l === `CLOSED ${id}`, f)
      const log = await readLog(store.path(id))
      expect(log.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4])
      expect(verify(log.events).violations).toEqual([])
    }
    // both processes won some rounds (the race is real), or at least the protocol held every time
    expect(wins.a + wins.b).toBe(rounds)

    // a SIGKILLed owner: its lock names a dead pid on this host → stale → taken over
    let f = a.lines.length
    a.send('open r0')
    const won = await a.line((l) => l.startsWith('WON r0') || l.startsWith('LOST r0'), f)
    expect(won).toMatch(/^WON r0 /)
    const token = Number(won.split(' ')[2])
    a.proc.kill('SIGKILL')
    await a.exited
    f = b.lines.length
    b.send('open r0')
    const took = await b.line((l) => l.includes(' r0'), f)
    expect(took).toMatch(/^WON r0 /)
    expect(Number(took.split(' ')[2])).toBeGreaterThan(token)
    b.proc.stdin.end()
    await b.exited
  })
})

/** The inbox fate of every inserted message id: pending, claimed or canceled (L11). */
