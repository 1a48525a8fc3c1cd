/**
 * The CLI on SQLite (docs/spec/api.md "CLI": LOG may be `sqlite:FILE#session-id`): `copy` between JSONL,
 * SQLite and PostgreSQL in every direction, lossless (P3: the JSONL that comes back has the same
 * event lines, byte for byte); replay, verify, fork, repair read the file; `sessions sqlite:FILE`
 * lists and filters (parked, due, running).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readLog } from '../../replay/read-log.js'
import { sqliteStore } from '../../stores/sqlite/index.js'
import { postgresStore } from '../../stores/postgres/index.js'
import { cli, tempDir } from './helpers.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'

const tmp = tempDir()
afterAll(async () => {
  tmp.cleanup()
  if (process.env.TURNLOG_PG_URL) await dropAll()
})

/** The event lines of a JSONL log (the header line differs only by the session id). */
const eventLines = (file: string) => readFileSync(file, 'utf8').split('\n').slice(1)

describe('turnlog CLI with sqlite:FILE#session-id', () => {
  it('P3: copy JSONL → SQLite → PostgreSQL → SQLite → JSONL keeps every event byte for byte; replay, verify, fork, repair, sessions read the file', async () => {
    const demo = join(tmp.dir, 'demo.jsonl')
    expect((await cli(['demo', '--store', demo])).code).toBe(0)
    const original = await readLog(demo)
    const db = join(tmp.dir, 'sessions.db')

    const c1 = await cli(['copy', demo, `sqlite:${db}#demo-1`])
    expect(c1.code, c1.stderr).toBe(0)
    expect(c1.stdout).toContain(`copied ${original.events.length} events`)
    expect((await cli(['copy', demo, `sqlite:${db}#demo-1`])).stderr).toContain('SESSION_EXISTS')
    let from = `sqlite:${db}#demo-1`
    if (process.env.TURNLOG_PG_URL) {
      const url = await freshDb('clisq')
      const pg = postgresStore({ connectionString: url })
      await pg.migrate()
      await pg.close()
      expect((await cli(['copy', from, `${url}#demo-pg`])).code).toBe(0)
      expect((await cli(['copy', `${url}#demo-pg`, `sqlite:${db}#demo-2`])).code).toBe(0)
      from = `sqlite:${db}#demo-2`
    }
    const back = join(tmp.dir, 'back.jsonl')
    const c2 = await cli(['copy', from, back])
    expect(c2.code, c2.stderr).toBe(0)
    const copied = await readLog(back)
    expect(copied.events).toEqual(original.events)
    expect(eventLines(back)).toEqual(eventLines(demo))
    expect(copied.header).toMatchObject({ createdAt: original.header.createdAt })

    const r = await cli(['replay', `sqlite:${db}#demo-1`])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`session demo-1 · ${original.events.length} events`)
    // the same transcript as the file's (the first line names the session and where it was read)
    expect(r.stdout.split('\n').slice(1)).toEqual((await cli(['replay', demo])).stdout.split('\n').slice(1))
    const v = await cli(['verify', `sqlite:${db}#demo-1`])
    expect(v.code, v.stdout + v.stderr).toBe(0)
    const forked = join(tmp.dir, 'fork.jsonl')
    expect((await cli(['fork', `sqlite:${db}#demo-1`, '--at', '5', '-o', forked])).code).toBe(0)
    expect((await readLog(forked)).events.slice(0, 6)).toEqual(original.events.slice(0, 6))

    const s = await cli(['sessions', `sqlite:${db}`, '--json'])
    expect(s.code, s.stderr).toBe(0)
    const rows = JSON.parse(s.stdout) as Array<{ id: string; events: number; status: string }>
    expect(rows.find((x) => x.id === 'demo-1')).toMatchObject({ events: original.events.length, status: 'idle' })
    const table = await cli(['sessions', `sqlite:${db}`])
    expect(table.stdout).toMatch(/SESSION\s+STATUS\s+EVENTS/)
    expect(table.stdout).toContain('demo-1')
    expect(JSON.parse((await cli(['sessions', `sqlite:${db}`, '--running', '--json'])).stdout)).toEqual([])
    expect((await cli(['sessions', `sqlite:${db}`, '--running', '--parked'])).code).toBe(2)
  })

  it('sessions --parked / --due / --running list what the index says; a missing file or session is a coded error', async () => {
    const db = join(tmp.dir, 'filters.db')
    const store = sqliteStore(db)
    await store.create('idle-1')
    await store.create('run-1')
    const w = await store.open('run-1', 'write')
    await store.send('wait-1', 'hello')
    const ids = async (flag: string) => (JSON.parse((await cli(['sessions', `sqlite:${db}`, flag, '--json'])).stdout) as Array<{ id: string }>).map((x) => x.id)
    expect(await ids('--running')).toEqual(['run-1'])
    expect(await ids('--parked')).toEqual([])
    expect(await ids('--due')).toEqual([])
    const all = JSON.parse((await cli(['sessions', `sqlite:${db}`, '--json'])).stdout) as Array<{ id: string; status: string }>
    expect(all.map((x) => [x.id, x.status])).toEqual([['idle-1', 'idle'], ['run-1', 'running'], ['wait-1', 'waiting']])
    await w.close()
    await store.close()
    const missing = await cli(['replay', `sqlite:${join(tmp.dir, 'nope.db')}#x`])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('no such SQLite file')
    const none = await cli(['replay', `sqlite:${db}#nope`])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('SESSION_NOT_FOUND')
    expect((await cli(['replay', `sqlite:${db}`])).stderr).toContain('sqlite:FILE#session-id')
  })
})
