/**
 * Issue 27.6: no exit 3 left on a user's mistake. `turnlog inspect` on a missing file or a
 * directory is `IO_ERROR` (exit 2) before any server starts; a `postgres://` LOG where the optional
 * peer `pg` is not installed is `MISSING_DEPENDENCY` (exit 2) saying what to install. The missing
 * `pg` is real: the compiled CLI runs in a child process from a copy whose node_modules holds
 * the package's dependencies but not `pg`, so the import fails as it does in a user's app.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inspectCommand } from '../../cli/commands/inspect.js'
import { cliMain } from './cli-child.js'
import { cli, ROOT, tempDir } from './helpers.js'

const { dir, cleanup } = tempDir()
afterAll(cleanup)

describe('issue 27.6: inspect on a path that is not a log', () => {
  it('a missing file: IO_ERROR naming the file, exit 2 (not an internal error)', async () => {
    const r = await cli(['inspect', join(dir, 'missing.jsonl'), '--port', '0'])
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain('IO_ERROR')
    expect(r.stderr).toContain('missing.jsonl')
    expect(r.stderr).not.toContain('internal error')
  })

  it('a directory: IO_ERROR "a directory", and no server is started', async () => {
    let listened = false
    const io = { stdout: () => {}, stderr: () => {}, color: false, progress: false, cwd: ROOT }
    await expect(inspectCommand(dir, { port: '0', onListening: async () => void (listened = true) }, io))
      .rejects.toMatchObject({ code: 'IO_ERROR', message: expect.stringContaining('a directory') })
    expect(listened).toBe(false)
    const r = await cli(['inspect', dir, '--port', '0'])
    expect(r.code).toBe(2)
  })
})

describe('issue 27.6: a postgres:// LOG without pg installed', () => {
  /** The compiled CLI copied beside a node_modules with the package's dependencies but no `pg`. */
  let compiled = ''
  // cliMain compiles the CLI when dist/ is older than the sources (once; CI's dist is fresh)
  beforeAll(() => void (compiled = cliMain()), 300_000)

  function cliWithoutPg(): string {
    const main = compiled
    const tree = dirname(dirname(main)) // the folder holding cli/, stores/, events/…
    const app = join(dir, 'no-pg')
    cpSync(tree, join(app, 'lib'), { recursive: true, filter: (src) => !src.includes(`${join(tree, 'bench')}`) && !src.endsWith('.map') })
    mkdirSync(join(app, 'node_modules'))
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    for (const name of Object.keys(pkg.dependencies)) {
      mkdirSync(dirname(join(app, 'node_modules', name)), { recursive: true })
      symlinkSync(join(ROOT, 'node_modules', name), join(app, 'node_modules', name))
    }
    return join(app, 'lib', 'cli', 'main.js')
  }

  it('every postgres command: MISSING_DEPENDENCY, exit 2, naming `npm install pg`; the password masked', () => {
    const main = cliWithoutPg()
    const url = 'postgres://me:s3cretpw@127.0.0.1:1/db'
    const out = join(dir, 'out')
    for (const argv of [
      ['verify', `${url}#s`], ['replay', `${url}#s`], ['report', `${url}#s`, '-o', `${out}.html`], ['sessions', url],
      ['copy', `${url}#s`, `${out}.jsonl`], ['inspect', `${url}#s`, '--port', '0'], ['repair', `${url}#s`, '-o', `${out}.r.jsonl`],
    ]) {
      const r = spawnSync(process.execPath, [main, ...argv], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 30_000 })
      expect(r.status, `${argv[0]}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toContain('MISSING_DEPENDENCY')
      expect(r.stderr).toContain('npm install pg')
      expect(r.stderr).not.toContain('internal error')
      expect(r.stderr).not.toContain('s3cretpw')
    }
  }, 60_000)
})
