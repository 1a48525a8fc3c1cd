/** The command shell: help, version, usage errors, colours. */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { wantsColor } from '../../cli/io.js'
import { VERSION } from '../../cli/main.js'
import { cli, ROOT, tempDir } from './helpers.js'

describe('turnlog', () => {
  it('--help lists the commands and the exit codes (exit 0)', async () => {
    const r = await cli(['--help'])
    expect(r.code).toBe(0)
    for (const c of ['replay [options] <LOG>', 'verify [options] <LOG>', 'demo [options]']) expect(r.stdout).toContain(c)
    expect(r.stdout).toContain('1 verify found violations · 2 bad input')
  })

  it('each command has its own help', async () => {
    const r = await cli(['verify', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('--max-steps <N>')
    expect(r.stdout).toContain('--max-retries <N>')
  })

  it('--help says what the CLI does beyond logs and where a new user starts; every LOG argument names every kind of log (JSONL, PostgreSQL, SQLite)', async () => {
    const r = await cli(['--help'])
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('run the demo, fuzz and eval your agent, serve sessions over HTTP')
    expect(r.stdout).toContain('Start here: turnlog demo --store demo.jsonl')
    for (const c of ['replay', 'verify', 'repair', 'fork', 'export', 'reexec', 'inspect']) {
      const h = await cli([c, '--help'])
      expect(h.stdout.replace(/\s+/g, ' '), c).toContain('LOG a JSONL log, postgres://…#session-id or sqlite:FILE#session-id')
    }
  })

  it('--version prints the package version', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
    expect(VERSION).toBe(pkg.version)
    const r = await cli(['--version'])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe(pkg.version)
  })

  it('usage errors exit 2: no command, an unknown command or option, a missing LOG', async () => {
    for (const argv of [[], ['bogus'], ['replay'], ['replay', 'examples/weather.jsonl', '--nope'], ['verify']]) {
      const r = await cli(argv)
      expect(r.code, argv.join(' ')).toBe(2)
      expect(r.stderr.length, argv.join(' ')).toBeGreaterThan(0)
    }
  })

  it('a usage error the CLI finds itself is coded like any bad input and names the help to read (exit 2)', async () => {
    const r = await cli(['replay', 'examples/weather.jsonl', '--at', 'ten'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^error INVALID_ARGUMENT: --at must be a non-negative integer, got 'ten'\n/)
    expect(r.stderr).toContain('usage: turnlog replay --help')
    const e = await cli(['export', 'examples/weather.jsonl'])
    expect(e.code).toBe(2)
    expect(e.stderr).toMatch(/^error INVALID_ARGUMENT: export needs --format/)
    expect(e.stderr).toContain('usage: turnlog export --help')
  })

  it('a torn tail names the next step: the repair command for that file (exit 2, LOG untouched)', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const log = join(dir, 'torn log.jsonl')
      const whole = readFileSync(join(ROOT, 'examples/weather.jsonl'))
      writeFileSync(log, whole.subarray(0, whole.length - 20))
      const r = await cli(['verify', log])
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('error TORN_TAIL')
      expect(r.stderr).toContain(`next: turnlog repair '${log}' -o FIXED.jsonl`)
      expect(readFileSync(log).length).toBe(whole.length - 20)
    } finally {
      cleanup()
    }
  })

  it('colours: on a TTY unless NO_COLOR; FORCE_COLOR forces them', () => {
    expect(wantsColor(true, {})).toBe(true)
    expect(wantsColor(false, {})).toBe(false)
    expect(wantsColor(undefined, {})).toBe(false)
    expect(wantsColor(true, { NO_COLOR: '1' })).toBe(false)
    expect(wantsColor(true, { NO_COLOR: '' })).toBe(true)
    expect(wantsColor(false, { FORCE_COLOR: '1' })).toBe(true)
    expect(wantsColor(true, { TERM: 'dumb' })).toBe(false)
  })
})
