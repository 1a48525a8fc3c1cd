/**
 * Issue 27.1: one output rule for every command that writes a file (cli/outputs.ts `writeOutput`):
 * an existing OUT is refused with `FILE_EXISTS` naming `--force`; OUT is never an input (by name,
 * symlink or hard link: the same inode); the file is written atomically (a temp file in OUT's
 * directory renamed over the name: an existing inode at OUT is never written into, no temp file
 * is left behind).
 */
import { linkSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { sha256 } from '../replay/hostile-logs.js'
import { cli, ROOT, tempDir } from './helpers.js'

const { dir, cleanup } = tempDir()
afterAll(cleanup)
let n = 0
const WEATHER = join(ROOT, 'examples', 'weather.jsonl')

/** A fresh directory holding a copy of examples/weather.jsonl as `x.jsonl`. */
function setup(): { d: string; log: string } {
  const d = join(dir, `case${n++}`)
  mkdirSync(d)
  const log = join(d, 'x.jsonl')
  writeFileSync(log, readFileSync(WEATHER))
  return { d, log }
}

/** The writing commands, each as a function of LOG and OUT (without --force). */
const WRITERS: Record<string, (log: string, out: string) => string[]> = {
  'report -o': (log, out) => ['report', log, '-o', out],
  'reexec --report': (log, out) => ['reexec', log, '--tools', join(ROOT, 'examples', 'demo-tools.mjs'), '--report', out],
  'export -o': (log, out) => ['export', log, '--format', 'chrome-trace', '-o', out],
  'fork -o': (log, out) => ['fork', log, '--at', '3', '-o', out],
  'repair -o': (log, out) => ['repair', log, '-o', out],
  copy: (log, out) => ['copy', log, out],
}

describe('issue 27.1: one output rule for every command that writes', () => {
  for (const [name, argv] of Object.entries(WRITERS)) {
    it(`${name}: an existing OUT is refused with FILE_EXISTS naming --force; its bytes are unchanged`, async () => {
      const { d, log } = setup()
      const out = join(d, 'taken')
      writeFileSync(out, 'another session\n')
      const r = await cli(argv(log, out))
      expect(r.code, r.stdout + r.stderr).toBe(2)
      expect(r.stderr).toContain('FILE_EXISTS')
      expect(r.stderr).toContain('--force')
      expect(r.stderr).not.toContain('overwrite: true')
      expect(readFileSync(out, 'utf8')).toBe('another session\n')
    })

    it(`${name} --force: OUT a hard link of LOG is LOG (same inode): refused, LOG unchanged`, async () => {
      const { d, log } = setup()
      const hard = join(d, 'hard')
      linkSync(log, hard)
      const before = sha256(log)
      const r = await cli([...argv(log, hard), '--force'])
      expect(r.code, r.stdout + r.stderr).toBe(2)
      expect(r.stderr).toMatch(/INVALID_ARGUMENT: refusing to write .*: it is LOG \(.*\); a log is never rewritten in place/)
      expect(sha256(log)).toBe(before)
      expect(sha256(hard)).toBe(before)
    })

    it(`${name} --force: OUT a symlink to LOG is refused too`, async () => {
      const { d, log } = setup()
      const sym = join(d, 'sym')
      symlinkSync(log, sym)
      const before = sha256(log)
      const r = await cli([...argv(log, sym), '--force'])
      expect(r.code, r.stdout + r.stderr).toBe(2)
      expect(r.stderr).toContain('INVALID_ARGUMENT')
      expect(sha256(log)).toBe(before)
    })

    it(`${name} --force: replaces an existing OUT by a new file (its old inode, seen through a hard link, keeps its bytes; no temp file left)`, async () => {
      const { d, log } = setup()
      const out = join(d, 'out')
      writeFileSync(out, 'old bytes\n')
      const other = join(d, 'other-name-of-old-out')
      linkSync(out, other)
      const oldIno = statSync(out).ino
      const r = await cli([...argv(log, out), '--force'])
      expect(r.code === 0 || (name === 'reexec --report' && r.code === 1), r.stdout + r.stderr).toBe(true)
      expect(readFileSync(out, 'utf8')).not.toBe('old bytes\n')
      expect(statSync(out).ino).not.toBe(oldIno)
      expect(readFileSync(other, 'utf8')).toBe('old bytes\n')
      expect(readdirSync(d).filter((f) => f.endsWith('.tmp'))).toEqual([])
    })
  }

  it('fuzz --out: an existing FILE is refused with FILE_EXISTS naming --force before any run', async () => {
    const { d } = setup()
    const out = join(d, 'taken.jsonl')
    writeFileSync(out, 'x')
    const r = await cli(['fuzz', '--runs', '1', '--out', out])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('FILE_EXISTS')
    expect(r.stderr).toContain('--force')
    expect(readFileSync(out, 'utf8')).toBe('x')
  })
})
