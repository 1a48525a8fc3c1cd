/**
 * Issue 10, "done when": a hostile-log fuzz test. 10,000 generated cases (`TURNLOG_HOSTILE_CASES`)
 * of the weather example mutated by random nesting depth (rarely up to 1M levels), big arrays and
 * splices, control characters in text, ids and names, -0 and overflowing numbers, CRLF and BOM
 * variants, crcs kept valid or broken, truncations and flipped bytes, and LOG paths that are FIFOs,
 * directories, devices or (dangling, looping) symlinks — each through one command run in-process
 * (`run` of cli/main.ts: replay, replay --json, replay --at, verify, repair -o, fork -o), plus a
 * few real child processes. Invariants (docs/spec/reliability.md "Bad input"; docs/spec/api.md "CLI"): the exit code is
 * 0, 1 or 2, never 3 (an internal error); an error names its code; human output holds no raw
 * control character; repair and fork never change an input's bytes. A hang would fail the test
 * by its timeout. The seed is `TURNLOG_FUZZ_SEED` (printed on failure).
 */
import { execFile, execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { forkCommand } from '../../cli/commands/fork.js'
import { repairCommand } from '../../cli/commands/repair.js'
import { replayCommand } from '../../cli/commands/replay.js'
import { verifyCommand } from '../../cli/commands/verify.js'
import { reportError } from '../../cli/errors.js'
import { colorsFor, type CliIo } from '../../cli/io.js'
import { joinLines, nested, sha256, WEATHER, weatherWith, withCrc } from '../replay/hostile-logs.js'
import { cliMain } from './cli-child.js'
import { ROOT, tempDir } from './helpers.js'

const CASES = Number(process.env.TURNLOG_HOSTILE_CASES ?? 10_000)
const SEED = Number(process.env.TURNLOG_FUZZ_SEED ?? 20261130)

/** A seeded PRNG (mulberry32): the same cases on every run with the same seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/
const CONTROLS = ['\u001b]0;title\u0007', '\u001b[2J', '\r', '\u0007', '\u009b31m', '\u0000', '\u202e', '\u001b[31m']
const NUMBERS = ['-0', '-0.0', '-0e3', '1e400', '-1e-400', '0', '-0.5', '1e-5']

/**
 * The command function for `argv`, called directly (what `run` does after commander parsed the
 * arguments; commander itself is covered by test/cli/main.test.ts), errors reported by `reportError`
 * as `run` reports them.
 */
async function command(argv: string[], io: CliIo): Promise<number> {
  const [cmd, log, ...rest] = argv as [string, string, ...string[]]
  const opt = (name: string) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined)
  try {
    if (cmd === 'replay') return await replayCommand(log, { at: opt('--at'), json: rest.includes('--json') }, io)
    if (cmd === 'verify') return await verifyCommand(log, {}, io)
    if (cmd === 'repair') return await repairCommand(log, { output: opt('-o'), force: rest.includes('--force') }, io)
    return await forkCommand(log, { at: opt('--at'), output: opt('-o'), force: rest.includes('--force') }, io)
  } catch (err) {
    return reportError(err, io, colorsFor(io))
  }
}

interface Case {
  argv: string[]
  /** Input files whose bytes must not change. */
  inputs: string[]
  json: boolean
  what: string
}

describe('hostile-log fuzz (issue 10; docs/spec/reliability.md "Bad input"; docs/spec/api.md "CLI")', () => {
  const { dir, cleanup } = tempDir()
  afterAll(cleanup)
  const fifo = join(dir, 'fifo.jsonl')
  execFileSync('mkfifo', [fifo])
  const subdir = join(dir, 'dir.jsonl')
  mkdirSync(subdir)
  symlinkSync(fifo, join(dir, 'fifo-link.jsonl'))
  symlinkSync(join(dir, 'nowhere.jsonl'), join(dir, 'dangling.jsonl'))
  symlinkSync(join(dir, 'loop-b.jsonl'), join(dir, 'loop-a.jsonl'))
  symlinkSync(join(dir, 'loop-a.jsonl'), join(dir, 'loop-b.jsonl'))
  const SPECIAL = [fifo, subdir, join(dir, 'fifo-link.jsonl'), join(dir, 'dangling.jsonl'), join(dir, 'loop-a.jsonl'), '/dev/null']

  function generate(rnd: () => number, i: number): Case {
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
    const chance = (p: number) => rnd() < p
    const what: string[] = []
    let lines = [...WEATHER]
    // 1. content mutations
    if (chance(0.35)) {
      const r = rnd()
      const depth = r < 0.001 ? 1_000_000 : r < 0.005 ? 1 + Math.floor(rnd() * 100_000) : 1 + Math.floor(rnd() * 700)
      const place = pick(['config', 'parameters', 'ignorable'] as const)
      lines = weatherWith(place, nested(depth, chance(0.5) ? 'array' : 'object', chance(0.2) ? '"\\ud800"' : '0'))
      what.push(`nest ${depth} in ${place}`)
    }
    if (chance(0.1)) {
      const size = Math.floor(rnd() * (chance(0.05) ? 20_000 : 300))
      const arr = `[${Array.from({ length: size }, (_, k) => k).join(',')}]`
      lines = lines.map((l) => l.replace('"config":{"model":"scripted"', `"config":{"model":"scripted","big":${arr}`))
      what.push(`array ${size}`)
    }
    if (chance(0.1)) {
      const size = 1 + Math.floor(rnd() * (chance(0.05) ? 5000 : 200))
      const ms = Array.from({ length: size }, (_, k) => `{"id":"z${k}","role":"user","content":[{"type":"text","text":"x"}],"source":{"kind":"user"}}`)
      lines.push(`{"seq":${lines.length - 1},"time":1764450000100,"type":"agent/inbox/spliced","data":{"target":"${pick(['next-turn', 'next-step'])}","start":0,"inserted":[${ms.join(',')}]}}`)
      what.push(`splice ${size}`)
    }
    for (let k = 0; k < 3 && chance(0.3); k++) {
      const c = JSON.stringify(pick(CONTROLS)).slice(1, -1)
      const at = 1 + Math.floor(rnd() * (lines.length - 1))
      const target = pick(['Paris', 'call_1', '"m1"', 'weather', 'scripted', 'example-weather'])
      lines[at] = lines[at]!.replace(target, (t) => (t.startsWith('"') ? `"${t.slice(1, -1)}${c}"` : `${t}${c}`))
      if (target === 'example-weather') lines[0] = lines[0]!.replace(target, `${target}${c}`)
      what.push(`control ${JSON.stringify(c)} at ${at}`)
    }
    if (chance(0.1)) {
      const num = pick(NUMBERS)
      const at = 1 + Math.floor(rnd() * (lines.length - 1))
      lines[at] = chance(0.5) ? lines[at]!.replace(/"turn":1/, `"turn":${num === '0' ? 1 : num}`) : lines[at]!.replace('"config":{"model":"scripted"', `"config":{"model":"scripted","n":${num}`)
      what.push(`number ${num} at ${at}`)
    }
    if (chance(0.05)) {
      const at = 1 + Math.floor(rnd() * (lines.length - 1))
      lines[at] = lines[at]!.replace(/"seq":\d+/, `"seq":${Math.floor(rnd() * 40)}`)
      what.push(`seq at ${at}`)
    }
    // 2. encoding
    if (chance(0.5)) {
      lines = withCrc(lines)
      what.push('crc')
      if (chance(0.1)) {
        const at = 1 + Math.floor(rnd() * (lines.length - 1))
        lines[at] = lines[at]!.replace(/"crc":"[0-9a-f]{2}/, '"crc":"zz')
        what.push(`bad crc at ${at}`)
      }
    }
    const crlf = chance(0.15)
    const bom = chance(0.1)
    let text = joinLines(lines, { crlf, bom })
    if (crlf) what.push('crlf')
    if (bom) what.push('bom')
    if (chance(0.05)) {
      const at = Math.floor(rnd() * lines.length)
      text = text.replace(lines[at]!, `${lines[at]!}\n`)
      what.push(`blank after ${at}`)
    }
    let bytes = Buffer.from(text, 'utf8')
    if (chance(0.1)) {
      bytes = bytes.subarray(0, Math.floor(rnd() * bytes.length))
      what.push(`cut at ${bytes.length}`)
    }
    if (chance(0.05) && bytes.length > 0) {
      bytes = Buffer.from(bytes)
      const at = Math.floor(rnd() * bytes.length)
      bytes[at] = Math.floor(rnd() * 256)
      what.push(`byte ${at}`)
    }
    let log = join(dir, `c${i}.jsonl`)
    writeFileSync(log, bytes)
    if (chance(0.03)) {
      log = pick(SPECIAL)
      what.push(`path ${log}`)
    } else if (chance(0.05)) {
      const link = join(dir, `c${i}-link.jsonl`)
      symlinkSync(log, link)
      log = link
      what.push('via symlink')
    }
    // 3. the command
    const r = rnd()
    const at = String(Math.floor(rnd() * 30))
    const out = join(dir, `c${i}.out.jsonl`)
    const inputs = SPECIAL.includes(log) ? [] : [log]
    let argv: string[]
    if (r < 0.3) argv = ['replay', log]
    else if (r < 0.45) argv = ['replay', log, '--json']
    else if (r < 0.6) argv = ['replay', log, '--at', at]
    else if (r < 0.96) argv = ['verify', log]
    else if (r < 0.98) argv = ['repair', log, '-o', chance(0.2) ? log : out, '--force']
    else argv = ['fork', log, '--at', at, '-o', chance(0.2) ? log : out, '--force']
    return { argv, inputs, json: argv.includes('--json'), what: what.join(', ') }
  }

  it(`${CASES} cases in-process: exit 0/1/2 (never 3), coded errors, no raw control characters, inputs unchanged`, async () => {
    const rnd = prng(SEED)
    const codes = [0, 0, 0, 0]
    const slow: Array<[number, string]> = []
    for (let i = 0; i < CASES; i++) {
      const c = generate(rnd, i)
      const t0 = performance.now()
      const before = c.argv[0] === 'repair' || c.argv[0] === 'fork' ? c.inputs.map(sha256) : []
      let stdout = ''
      let stderr = ''
      const code = await command(c.argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), color: false, progress: false, cwd: ROOT })
      const ctx = `seed ${SEED} case ${i} [${c.what}] ${c.argv.join(' ')}\n${stderr.slice(0, 500)}`
      expect([0, 1, 2], ctx).toContain(code)
      codes[code]!++
      if (code === 2) expect(stderr, ctx).toMatch(/^error [A-Z0-9_]+: /)
      if (!c.json) expect(RAW.test(stdout), ctx).toBe(false)
      expect(RAW.test(stderr), ctx).toBe(false)
      if (before.length) expect(c.inputs.map(sha256), ctx).toEqual(before)
      if (process.env.TURNLOG_HOSTILE_PROFILE) slow.push([performance.now() - t0, `${c.argv[0]} ${c.what}`])
      if (i % 500 === 499) {
        rmSync(dir, { recursive: true, force: true })
        recreate()
      }
    }
    if (process.env.TURNLOG_HOSTILE_PROFILE) console.log(slow.sort((a, b) => b[0] - a[0]).slice(0, 15), slow.reduce((a, b) => a + b[0], 0))
    // every exit code but 3 actually happens
    expect(codes[0]).toBeGreaterThan(0)
    expect(codes[1]).toBeGreaterThan(0)
    expect(codes[2]).toBeGreaterThan(0)
  }, 600_000)

  /** Files of earlier cases are removed every 500 cases; the special paths are made again. */
  function recreate(): void {
    mkdirSync(dir, { recursive: true })
    execFileSync('mkfifo', [fifo])
    mkdirSync(subdir)
    symlinkSync(fifo, join(dir, 'fifo-link.jsonl'))
    symlinkSync(join(dir, 'nowhere.jsonl'), join(dir, 'dangling.jsonl'))
    symlinkSync(join(dir, 'loop-b.jsonl'), join(dir, 'loop-a.jsonl'))
    symlinkSync(join(dir, 'loop-a.jsonl'), join(dir, 'loop-b.jsonl'))
  }

  it('real processes: a FIFO (direct and through a symlink), a million levels of nesting, -0: exit 2 naming the path or place, no hang', async () => {
    const main = cliMain()
    const exec = promisify(execFile)
    const deep = join(dir, 'deep.jsonl')
    writeFileSync(deep, joinLines(weatherWith('config', nested(1_000_000))))
    const negZero = join(dir, 'neg-zero.jsonl')
    writeFileSync(negZero, joinLines(WEATHER.map((l) => l.replace('"config":{"model":"scripted"}', '"config":{"model":"scripted","t":-0}'))))
    const runs: Array<[string[], RegExp]> = [
      [['replay', fifo], /IO_ERROR: the log is a FIFO/],
      [['verify', join(dir, 'fifo-link.jsonl')], /IO_ERROR: the log is a FIFO/],
      [['replay', deep, '--json'], /NOT_LOSSLESS: the record nests deeper than 512 levels .*:7, seq 5, field data\.config\.x/],
      [['repair', negZero, '-o', join(dir, 'nz.out')], /NOT_LOSSLESS: -0 .*:7, seq 5, field data\.config\.t/],
    ]
    for (const [argv, want] of runs) {
      const r = await exec(process.execPath, [main, ...argv], { cwd: ROOT }).then(
        (ok) => ({ code: 0, stderr: ok.stderr }),
        (e: { code?: number; stderr?: string }) => ({ code: e.code ?? -1, stderr: e.stderr ?? '' }),
      )
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toMatch(want)
    }
  }, 300_000)
})
