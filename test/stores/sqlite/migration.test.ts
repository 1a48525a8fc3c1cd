/**
 * The SQLite schema is versioned by `PRAGMA user_version` and migrated when a store first opens a
 * file (stores/sqlite/schema.ts). Version 2 replaced version 1's listing indexes with covering
 * ones (B11): a file written by version 1 keeps every session, event, lease and flag, answers
 * `sessions()` the same way afterwards, and a file of a newer version is refused, not touched.
 * Version 3 moved resume's give-ups (L13 §8) from a partial index of the events, which every
 * append wrote, to a table of their own: a version 2 file's give-ups stay listed.
 */
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { arbValidLog } from '../../../testing/arbitraries/valid-log.js'
import { sqliteStore } from '../../../stores/sqlite/index.js'
import { openDb } from '../../../stores/sqlite/driver.js'
import { MIGRATIONS, SQLITE_SCHEMA_VERSION } from '../../../stores/sqlite/schema.js'
import { sessionsSql } from '../../../stores/sqlite/sessions.js'
import { givenUpLog } from '../../replay/given-up-log.js'
import { collect } from '../contract.js'
import { DRIVERS, tempDir } from './helpers.js'

const LOG = fc.sample(arbValidLog({ minTurns: 1, maxTurns: 1 }), { seed: 3, numRuns: 1 })[0]!

/** A file as version 1 wrote it: its tables and indexes, two sessions, one parked, one leased, one due. */
function versionOneFile(file: string): void {
  const db = openDb(file, 'node:sqlite')
  db.exec('PRAGMA journal_mode = WAL')
  db.exec(MIGRATIONS[0]!)
  db.exec('PRAGMA user_version = 1')
  const header = (id: string) => JSON.stringify({ type: 'session', format: 1, id, createdAt: 1 })
  const ins = db.prepare(`INSERT INTO turnlog_sessions (id, header, length, token, lease_owner, lease_until, created_at, last_activity, due_at, parked, title)
    VALUES (?, ?, ?, ?, ?, ?, 1, 2, ?, ?, ?)`)
  ins.run('a', header('a'), 2, 1, null, null, 5, 1, 'hello')
  ins.run('b', header('b'), 1, 3, 'host:1:x', 9_999_999_999_999, null, 0, null)
  const evIns = db.prepare('INSERT INTO turnlog_events (session_id, seq, type, event) VALUES (?, ?, ?, ?)')
  for (const e of LOG.slice(0, 2)) evIns.run('a', e.seq, e.type, JSON.stringify(e))
  evIns.run('b', 0, LOG[0]!.type, JSON.stringify(LOG[0]))
  db.close()
}

for (const driver of DRIVERS) {
  describe(`sqliteStore schema migration (${driver})`, () => {
    it(`a version 1 file is migrated to version ${SQLITE_SCHEMA_VERSION} in place: sessions, events, leases and flags kept; the listing reads covering indexes`, async () => {
      const file = join(await tempDir(), 'v1.db')
      versionOneFile(file)
      // two stores on the file at once: one migrates, the other waits for the lock and finds it current
      const [s1, s2] = [sqliteStore(file, { driver }), sqliteStore(file, { driver })]
      await Promise.all([s1.migrate(), s2.migrate()])
      expect(s1.db.prepare('PRAGMA user_version').get()).toEqual({ user_version: SQLITE_SCHEMA_VERSION })
      const rows = await s2.sessions()
      expect(rows.map((r) => [r.id, r.events, r.status, r.parked, r.title, r.token, r.dueAt])).toEqual([
        ['a', 2, 'due', true, 'hello', 1, '1970-01-01T00:00:00.005Z'],
        ['b', 1, 'running', false, null, 3, null],
      ])
      expect((await s1.sessions('parked')).map((r) => r.id)).toEqual(['a'])
      expect((await s1.sessions('due')).map((r) => r.id)).toEqual(['a'])
      expect((await s1.sessions('running')).map((r) => r.id)).toEqual(['b'])
      const plan = (s1.db.prepare(`EXPLAIN QUERY PLAN ${sessionsSql('parked')}`).all() as Array<{ detail: string }>)[0]!.detail
      expect(plan).toMatch(/COVERING INDEX turnlog_sessions_parked/)
      const back = await collect((await s1.open('a', 'read')).events())
      expect(back.map((e) => JSON.stringify(e))).toEqual(LOG.slice(0, 2).map((e) => JSON.stringify(e)))
      await s1.close()
      await s2.close()
    })

    it('L13: a version 2 file\'s give-up stays listed after the migration to version 3; the events table keeps no index but its key', async () => {
      const { events, id } = await givenUpLog()
      const given = events.find((e) => e.type === 'resume/given-up')!
      const file = join(await tempDir(), 'v2.db')
      const db = openDb(file, 'node:sqlite')
      db.exec('PRAGMA journal_mode = WAL')
      for (const m of MIGRATIONS.slice(0, 2)) db.exec(m)
      db.exec('PRAGMA user_version = 2')
      db.prepare(`INSERT INTO turnlog_sessions (id, header, length, created_at, last_activity) VALUES ('g', '{}', ?, 1, 2)`).run(events.length)
      const evIns = db.prepare('INSERT INTO turnlog_events (session_id, seq, type, event) VALUES (?, ?, ?, ?)')
      for (const e of events) evIns.run('g', e.seq, e.type, JSON.stringify(e))
      db.close()
      const store = sqliteStore(file, { driver })
      const [row] = await store.sessions()
      expect(row!.givenUp).toEqual([{ seq: given.seq, turn: 4, runs: 3, messages: [id] }])
      const indexes = store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'turnlog_events' AND sql IS NOT NULL").all()
      expect(indexes).toEqual([])
      await store.close()
    })

    it('L13: a give-up appended through the store is listed (its own table, written by the append that logs it)', async () => {
      const { events, id } = await givenUpLog()
      const store = sqliteStore(join(await tempDir(), 'g.db'), { driver })
      await store.create('g', { createdAt: 1 })
      const w = await store.open('g', 'write')
      await w.append(events, { expectedSeq: 0 })
      await w.close()
      const given = events.find((e) => e.type === 'resume/given-up')!
      expect((await store.sessions())[0]!.givenUp).toEqual([{ seq: given.seq, turn: 4, runs: 3, messages: [id] }])
      // byte-equal to the logged event
      expect(store.db.prepare('SELECT event FROM turnlog_given_up').all()).toEqual([{ event: JSON.stringify(given) }])
      await store.close()
    })

    it('a file of a newer schema version is refused with FUTURE_FORMAT naming both versions, and left as it was', async () => {
      const file = join(await tempDir(), 'future.db')
      const db = openDb(file, 'node:sqlite')
      db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION + 1}`)
      db.close()
      const store = sqliteStore(file, { driver })
      await expect(store.sessions()).rejects.toMatchObject({
        code: 'FUTURE_FORMAT',
        message: expect.stringContaining(`schema version ${SQLITE_SCHEMA_VERSION + 1}; this turnlog writes version ${SQLITE_SCHEMA_VERSION}`),
      })
      const again = openDb(file, 'node:sqlite')
      expect(again.prepare('PRAGMA user_version').get()).toEqual({ user_version: SQLITE_SCHEMA_VERSION + 1 })
      expect(again.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get()).toEqual({ n: 0 })
      again.close()
    })
  })
}
