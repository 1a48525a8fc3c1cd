/**
 * Issue 27.2: a PostgreSQL URL's password never reaches the terminal (CI logs) nor a written file:
 * every command that names its LOG or TARGET prints it through one function (cli/pg.ts
 * `displayLog`), which masks the password. The test server trusts 127.0.0.1, so a URL carrying a
 * password connects, and the password can only come back through our own printing.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStore } from '../../../stores/postgres/index.js'
import { cli, ROOT, tempDir } from '../../cli/helpers.js'
import { dropAll, freshDb } from './db.js'

const SECRET = 's3cretpw'
const tmp = tempDir()
afterAll(async () => {
  tmp.cleanup()
  await dropAll()
})

/**
 * Every form a PostgreSQL URL carries a password in (issue 38.24): the userinfo, libpq's
 * `password` query parameter, and `sslpassword` beside it. Each must come out masked.
 */
const FORMS: { name: string; make: (base: URL) => string; shown: RegExp }[] = [
  { name: 'userinfo user:PASSWORD@', make: (u) => ((u.username = 'postgres'), (u.password = SECRET), u.toString()), shown: /postgres:\*\*\*@127\.0\.0\.1/ },
  { name: 'query ?password=', make: (u) => ((u.username = 'postgres'), `${u.toString()}?password=${SECRET}`), shown: /\?password=\*\*\*/ },
  { name: 'query ?sslpassword= beside application_name', make: (u) => ((u.username = 'postgres'), `${u.toString()}?application_name=cli&sslpassword=${SECRET}`), shown: /application_name=cli&sslpassword=\*\*\*/ },
]

describe.each(FORMS)('issue 27.2 / 38.24: PostgreSQL credentials ($name) are masked in everything the CLI prints', ({ make, shown }) => {
  let url = ''
  let log = ''
  beforeAll(async () => {
    url = make(new URL(await freshDb('mask')))
    const store = postgresStore({ connectionString: url })
    await store.migrate()
    await store.close()
    const demo = join(tmp.dir, `demo-${Math.random().toString(36).slice(2)}.jsonl`)
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

  it('verify', async () => {
    expect(await masked((l) => ['verify', l])).toMatch(shown)
  })
  it('replay (transcript, --at)', async () => {
    expect(await masked((l) => ['replay', l])).toMatch(shown)
    await masked((l) => ['replay', l, '--at', '3'])
  })
  it('export -o', async () => {
    expect(await masked((l, o) => ['export', l, '--format', 'otlp-json', '-o', o])).toMatch(shown)
  })
  it('fork', async () => {
    expect(await masked((l, o) => ['fork', l, '--at', '5', '-o', o])).toMatch(shown)
  })
  it('repair', async () => {
    expect(await masked((l, o) => ['repair', l, '-o', o])).toMatch(shown)
  })
  it('reexec (and its --report page)', async () => {
    const page = join(tmp.dir, `reexec-${Math.random().toString(36).slice(2)}.html`)
    const text = await masked((l) => ['reexec', l, '--tools', join(ROOT, 'examples', 'demo-tools.mjs'), '--report', page], [0, 1])
    expect(text).toMatch(shown)
    expect(readFileSync(page, 'utf8')).not.toContain(SECRET)
  })
  it('report (the page too)', async () => {
    const page = join(tmp.dir, `report-${Math.random().toString(36).slice(2)}.html`)
    await masked((l) => ['report', l, '-o', page])
    expect(readFileSync(page, 'utf8')).not.toContain(SECRET)
  })
  it('copy (both directions) and sessions', async () => {
    expect(await masked((l, o) => ['copy', l, o])).not.toContain(SECRET)
    expect(await masked(() => ['copy', join(tmp.dir, readdirSync(tmp.dir).find((f) => f.startsWith('demo-'))!), `${url}#copied-${Math.random().toString(36).slice(2, 8)}`])).toMatch(shown)
    await masked(() => ['sessions', url])
    await masked(() => ['sessions', url, '--json'])
  })
  it('copy into a session the database holds: SESSION_EXISTS names it (issue 38.18)', async () => {
    const r = await cli(['copy', join(tmp.dir, readdirSync(tmp.dir).find((f) => f.startsWith('demo-'))!), log])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('SESSION_EXISTS: session "demo" exists already')
    expect(r.stderr).not.toContain(SECRET)
  })
  it('approvals (human and --json) and decide of an unknown id', async () => {
    expect(await masked((l) => ['approvals', l])).toMatch(shown)
    await masked((l) => ['approvals', l, '--json'])
    await masked((l) => ['decide', l, 'nope', '--approve'], [2])
  })
  it('errors: a missing session, a bad session id, an unreachable server', async () => {
    await masked(() => ['replay', `${url}#missing`], [2])
    await masked(() => ['verify', `${url}#../x`], [2])
    const dead = new URL(url)
    dead.port = '1'
    await masked(() => ['verify', `${dead.toString()}#demo`], [1, 2, 3])
  })
})
