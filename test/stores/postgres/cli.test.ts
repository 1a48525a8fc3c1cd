/**
 * The CLI on PostgreSQL (docs/spec/api.md "CLI"): `copy` JSONL → postgres → JSONL round-trips (P3), a
 * `postgres://…#id` LOG for replay, verify, fork, repair; `sessions` (table and --json); a torn
 * turn left by a dead writer is closed by `repair` from the database.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readLog } from '../../../replay/read-log.js'
import { postgresStore } from '../../../stores/postgres/index.js'
import { cli, tempDir } from '../../cli/helpers.js'
import { SAMPLE } from '../contract.js'
import { dropAll, freshDb } from './db.js'

const tmp = tempDir()
afterAll(async () => {
  tmp.cleanup()
  await dropAll()
})

describe('turnlog CLI with postgres://…#session-id', () => {
  it('copy JSONL → postgres → JSONL keeps every event (P3); replay, verify, fork, repair and sessions read the database', async () => {
    const url = await freshDb('cli')
    const store = postgresStore({ connectionString: url })
    await store.migrate()
    const demo = join(tmp.dir, 'demo.jsonl')
    expect((await cli(['demo', '--store', demo])).code).toBe(0)
    const original = await readLog(demo)

    const c1 = await cli(['copy', demo, `${url}#demo-1`])
    expect(c1.code, c1.stderr).toBe(0)
    expect(c1.stdout).toContain(`copied ${original.events.length} events`)
    expect((await cli(['copy', demo, `${url}#demo-1`])).stderr).toContain('SESSION_EXISTS')

    const back = join(tmp.dir, 'back.jsonl')
    expect((await cli(['copy', `${url}#demo-1`, back])).code).toBe(0)
    const copied = await readLog(back)
    expect(copied.events).toEqual(original.events)
    expect(copied.header).toMatchObject({ id: 'demo-1', createdAt: original.header.createdAt })

    const r = await cli(['replay', `${url}#demo-1`])
    expect(r.code, r.stderr).toBe(0)
    // the same transcript and summary as the file's (the first line names the session and its source)
    const body = (t: string) => t.split('\n').slice(1).join('\n')
    expect(body(r.stdout)).toBe(body((await cli(['replay', demo])).stdout))
    expect(r.stdout.split('\n')[0]).toContain('#demo-1')
    expect((await cli(['verify', `${url}#demo-1`])).code).toBe(0)
    const f = await cli(['fork', `${url}#demo-1`, '--at', '5', '-o', join(tmp.dir, 'fork.jsonl')])
    expect(f.code, f.stderr).toBe(0)
    expect((await readLog(join(tmp.dir, 'fork.jsonl'))).events.length).toBeGreaterThan(5)

    // a session a writer left mid-turn: repair from the database writes the closers into OUT
    await store.create('torn')
    const cut = SAMPLE.findIndex((e) => e.type === 'turn/end')
    const w = await store.open('torn', 'write')
    await w.append(SAMPLE.slice(0, cut), { expectedSeq: 0 })
    await w.close()
    // a log that ends inside a turn is a valid prefix (verify exit 0); repair closes it
    expect((await cli(['verify', `${url}#torn`])).code).toBe(0)
    const rep = await cli(['repair', `${url}#torn`, '-o', join(tmp.dir, 'torn.jsonl')])
    expect(rep.code, rep.stderr).toBe(0)
    expect(rep.stdout).toContain('synthetic closer')
    expect((await cli(['verify', join(tmp.dir, 'torn.jsonl')])).code).toBe(0)

    await store.send('waiting-1', 'hello')
    const s = await cli(['sessions', url, '--json'])
    expect(s.code, s.stderr).toBe(0)
    const rows = JSON.parse(s.stdout) as Array<{ id: string; status: string; events: number; pending: number }>
    expect(rows.map((x) => [x.id, x.status, x.events, x.pending])).toEqual([
      ['demo-1', 'idle', original.events.length, 0], ['torn', 'idle', cut, 0], ['waiting-1', 'waiting', 0, 1],
    ])
    const table = await cli(['sessions', url])
    expect(table.stdout).toMatch(/SESSION\s+STATUS\s+EVENTS/)
    expect(table.stdout).toContain('3 sessions')
    // the URL's password never appears in output
    expect(readFileSync(back, 'utf8')).not.toContain('postgres://')
    await store.close()
  })

  it('bad input: no session id, an invalid id, a database without the tables (exit 2, coded)', async () => {
    const url = await freshDb('cli')
    expect((await cli(['replay', `${url}#`])).stderr).toContain('INVALID_ARGUMENT')
    expect((await cli(['replay', `${url}#../x`])).stderr).toContain('INVALID_SESSION_ID')
    const r = await cli(['sessions', url])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('migrate')
  })
})
