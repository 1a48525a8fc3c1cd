/**
 * Issue 10.4: `-o` never changes an input's bytes (docs/spec/events.md "The JSONL file": never rewrite a user's log in
 * place). Every input is hashed before and after; OUT is compared to LOG by device and inode,
 * through symlinks, hard links and symlinked directories, and OUT.quarantine must not be LOG or
 * LOG's quarantine. `--force` replaces only files that are not inputs.
 */
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { joinLines, sha256, WEATHER, withCrc } from '../replay/hostile-logs.js'
import { cli, tempDir } from './helpers.js'

const { dir, cleanup } = tempDir()
afterAll(cleanup)
let n = 0

/** A fresh directory with a torn log `x.jsonl` (its last record cut) and `x.jsonl.quarantine`. */
function setup(): { d: string; log: string; q: string } {
  const d = join(dir, `case${n++}`)
  mkdirSync(d)
  const log = join(d, 'x.jsonl')
  const text = joinLines(withCrc(WEATHER))
  writeFileSync(log, text.slice(0, -25))
  const q = `${log}.quarantine`
  writeFileSync(q, text.slice(0, -40)) // a log too (a quarantine may hold anything)
  return { d, log, q }
}

async function refusedKeepingInputs(argv: string[], inputs: string[]): Promise<void> {
  const before = inputs.map(sha256)
  const r = await cli(argv)
  expect(r.code, `${argv.join(' ')}: ${r.stdout}${r.stderr}`).toBe(2)
  expect(r.stderr).toMatch(/INVALID_ARGUMENT: refusing to write .*: it is (LOG|LOG.s quarantine file) \(.*\); a log is never rewritten in place/)
  expect(inputs.map(sha256)).toEqual(before)
}

describe('issue 10.4: -o never changes an input (Bad input; docs/spec/events.md: a log is never rewritten in place)', () => {
  it('repair X.quarantine -o X --force: OUT.quarantine would be LOG itself: refused, both files unchanged', async () => {
    const { log, q } = setup()
    await refusedKeepingInputs(['repair', q, '-o', log, '--force'], [log, q])
  })

  it('repair link -o target --force (and target -o link): the symlink is LOG by inode: refused', async () => {
    const { d, log, q } = setup()
    const link = join(d, 'link.jsonl')
    symlinkSync(log, link)
    await refusedKeepingInputs(['repair', link, '-o', log, '--force'], [log, q])
    await refusedKeepingInputs(['repair', log, '-o', link, '--force'], [log, q])
  })

  it('a hard link, a symlinked directory and a ../ spelling of LOG are LOG too', async () => {
    const { d, log, q } = setup()
    const hard = join(d, 'hard.jsonl')
    linkSync(log, hard)
    const alias = join(dir, `alias${n++}`)
    symlinkSync(d, alias)
    for (const out of [hard, join(alias, 'x.jsonl'), join(d, '..', `${d.split('/').at(-1)}`, 'x.jsonl')]) {
      await refusedKeepingInputs(['repair', log, '-o', out, '--force'], [log, q, hard])
      await refusedKeepingInputs(['fork', log, '--at', '3', '-o', out, '--force'], [log, q, hard])
    }
  })

  it('OUT = LOG\'s quarantine, or OUT.quarantine a symlink to LOG: refused', async () => {
    const { d, log, q } = setup()
    await refusedKeepingInputs(['repair', log, '-o', q, '--force'], [log, q])
    await refusedKeepingInputs(['fork', log, '--at', '3', '-o', q, '--force'], [log, q])
    const out = join(d, 'out.jsonl')
    symlinkSync(log, `${out}.quarantine`)
    await refusedKeepingInputs(['repair', log, '-o', out, '--force'], [log, q])
  })

  it('fork LOG --at 3 -o LOG --force: refused, LOG unchanged', async () => {
    const { log, q } = setup()
    await refusedKeepingInputs(['fork', log, '--at', '3', '-o', log, '--force'], [log, q])
  })

  it('--force replaces a file that is not an input, by a new file: a symlink at OUT is replaced, its target untouched', async () => {
    const { d, log, q } = setup()
    const other = join(d, 'other.txt')
    writeFileSync(other, 'not an input')
    const out = join(d, 'out.jsonl')
    symlinkSync(other, out)
    const before = [log, q, other].map(sha256)
    const r = await cli(['repair', log, '-o', out, '--force'])
    expect(r.code, r.stderr).toBe(0)
    expect([log, q, other].map(sha256)).toEqual(before)
    expect(readFileSync(out, 'utf8')).toContain('"type":"session"')
    expect((await cli(['verify', out])).code).toBe(0)
    expect(existsSync(`${out}.quarantine`)).toBe(true)
    const f = await cli(['fork', log.replace('x.jsonl', 'out.jsonl'), '--at', '3', '-o', join(d, 'fork.jsonl')])
    expect(f.code, f.stderr).toBe(0)
  })

  it('issue 10.10: fork onto an existing file names --force, not { overwrite: true }', async () => {
    const { d, log } = setup()
    const out = join(d, 'taken.jsonl')
    writeFileSync(out, 'x')
    for (const argv of [['fork', log, '--at', '3', '-o', out], ['repair', log, '-o', out]]) {
      const r = await cli(argv)
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('FILE_EXISTS')
      expect(r.stderr).toContain('--force')
      expect(r.stderr).not.toContain('overwrite: true')
    }
  })
})
