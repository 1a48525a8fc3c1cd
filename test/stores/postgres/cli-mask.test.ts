/**
 * Issue 27.2: a PostgreSQL URL's password never reaches the terminal (CI logs) nor a written file:
 * every command that names its LOG or TARGET prints it through one function (cli/pg.ts
 * `displayLog`), which masks the password. The test server trusts 127.0.0.1, so a URL carrying a
 * password connects, and the password can only come back through our own printing.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStore } from '../../../stores/postgres/index.js'
import { cli, ROOT, tempDir } from '../../cli/helpers.js'
import { dropAll, freshDb } from './db.js'

const SECRET = 's3cretpw'
const tmp = tempDir()
let url = ''
let log = ''
afterAll(async () => {
  tmp.cleanup()
  await dropAll()
})

beforeAll(async () => {
  const u = new URL(await freshDb('mask'))
  u.username = 'postgres'
  u.password = SECRET
  url = u.toString()
  const store = postgresStore({ connectionString: url })
  await store.migrate()
  await store.close()
  const demo = join(tmp.dir, 'demo.jsonl')
  expect((await cli(['demo', '--store', demo])).code).toBe(0)
  expect((await cli(['copy', demo, `${url}#demo`])).code).toBe(0)
  log = `${url}#demo`
})

/** Runs the command; asserts it printed the masked URL and never the password. */
async function masked(argv: (log: string, out: string) => string[], expectCode: number[] = [0]): Promise<string> {
  const out = join(tmp.dir, `out-${Math.random().toString(36).slice(2)}`)
  const r = await cli(argv(log, out))
  expect(expectCode, r.stdout + r.stderr).toContain(r.code)
  expect(r.stdout + r.stderr).not.toContain(SECRET)
  return r.stdout + r.stderr
}

describe('issue 27.2: PostgreSQL passwords are masked in everything the CLI prints', () => {
  it('verify', async () => {
    expect(await masked((l) => ['verify', l])).toMatch(/OK postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+#demo/)
  })
  it('replay (transcript, --at)', async () => {
    expect(await masked((l) => ['replay', l])).toContain(':***@')
    await masked((l) => ['replay', l, '--at', '3'])
  })
  it('export -o', async () => {
    expect(await masked((l, o) => ['export', l, '--format', 'otlp-json', '-o', o])).toContain(':***@')
  })
  it('fork', async () => {
    expect(await masked((l, o) => ['fork', l, '--at', '5', '-o', o])).toContain(':***@')
  })
  it('repair', async () => {
    expect(await masked((l, o) => ['repair', l, '-o', o])).toContain(':***@')
  })
  it('reexec (and its --report page)', async () => {
    const page = join(tmp.dir, 'reexec.html')
    const text = await masked((l) => ['reexec', l, '--tools', join(ROOT, 'examples', 'demo-tools.mjs'), '--report', page], [0, 1])
    expect(text).toContain(':***@')
    expect(readFileSync(page, 'utf8')).not.toContain(SECRET)
  })
  it('report (the page too)', async () => {
    const page = join(tmp.dir, 'report.html')
    await masked((l) => ['report', l, '-o', page])
    expect(readFileSync(page, 'utf8')).not.toContain(SECRET)
  })
  it('copy (both directions) and sessions', async () => {
    expect(await masked((l, o) => ['copy', l, o])).not.toContain(SECRET)
    expect(await masked(() => ['copy', join(tmp.dir, 'demo.jsonl'), `${url}#copied`])).toContain(':***@')
    await masked(() => ['sessions', url])
  })
  it('errors: a missing session, a bad session id', async () => {
    await masked(() => ['replay', `${url}#missing`], [2])
    await masked(() => ['verify', `${url}#../x`], [2])
  })
})
