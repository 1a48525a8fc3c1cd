/**
 * Issue 38.15 / 38.28: `turnlog eval` on goldens a re-run cannot match says why at once:
 * a golden that ends inside a turn is refused naming the turn (it used to wait out timeoutMs per
 * trial), a golden recorded through a crash names the interrupted turn, and a goldens directory
 * holding a symlink loop or a link back to itself is walked without crashing (it exited 3).
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cli, tempDir } from './helpers.js'

const t = tempDir()
afterAll(() => t.cleanup())
const WEATHER = readFileSync('examples/weather.jsonl', 'utf8')
const midTurn = WEATHER.split('\n').slice(0, 12).join('\n') + '\n'

describe('turnlog eval: goldens a re-run cannot reproduce', () => {
  it('a golden ending inside a turn fails its trial at once, naming the turn and the way out', async () => {
    const g = join(t.dir, 'mid.jsonl')
    writeFileSync(g, midTurn)
    const r = await cli(['eval', g, '--model', 'recorded'])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('the golden ends inside turn 1 (turn/start at seq 1, no turn/end)')
    expect(r.stdout).toContain('turnlog fork --at 1')
  })

  it('L13: a golden recorded through a crash (repair closed turn 1 interrupted) names the interrupted turn', async () => {
    const torn = join(t.dir, 'torn.jsonl')
    writeFileSync(torn, midTurn)
    const rep = join(t.dir, 'repaired.jsonl')
    expect((await cli(['repair', torn, '-o', rep])).code).toBe(0)
    const r = await cli(['eval', rep, '--model', 'recorded', '--tools', 'examples/demo-tools.mjs'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/the golden's turn 1 \(turn\/end at seq \d+\) was cut by a crash and closed by repair/)
  })

  it('a directory with a symlink loop and a link to itself: every golden found once, the loop named, no exit 3', async () => {
    const d = join(t.dir, 'goldens')
    mkdirSync(join(d, 'sub'), { recursive: true })
    writeFileSync(join(d, 'weather.jsonl'), WEATHER)
    writeFileSync(join(d, 'sub', 'again.jsonl'), WEATHER)
    symlinkSync('..', join(d, 'sub', 'up'))
    symlinkSync('b.jsonl', join(d, 'a.jsonl'))
    symlinkSync('a.jsonl', join(d, 'b.jsonl'))
    const r = await cli(['eval', d, '--model', 'recorded', '--tools', 'examples/demo-tools.mjs'])
    expect(r.code, r.stderr).not.toBe(3)
    expect(r.stderr).toContain(`skipped ${join(d, 'a.jsonl')}: ELOOP`)
    expect(r.stdout).toMatch(/weather\.jsonl: \d\/1 trials passed/)
    expect(r.stdout).toMatch(/sub\/again\.jsonl: \d\/1 trials passed/)
    expect(r.stdout).toMatch(/\d\/2 goldens passed/)
  })
})
