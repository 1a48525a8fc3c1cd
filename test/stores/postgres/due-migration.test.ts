/**
 * One due column (issue 21; docs/spec/lifecycle.md §9 expiry, §10 wakeups: "the next time a worker must look at
 * the session"): a database created by schema version 2 (`due_at` for approval expiries beside
 * `wakeup_due_at` for wakeups, the old DDL frozen in fixtures/schema-v2.sql) opens with today's
 * `migrate()` and keeps every due time: `due_at` becomes the earlier of the two, the old column
 * and its append function are gone, and migrating again changes nothing.
 */
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { postgresStore, SCHEMA_VERSION } from '../../../stores/postgres/index.js'
import { dropAll, freshDb } from './db.js'

afterAll(async () => {
  await dropAll()
})

const V2 = readFileSync(new URL('./fixtures/schema-v2.sql', import.meta.url), 'utf8')
const header = (id: string) => JSON.stringify({ type: 'session', format: 1, id, createdAt: 0 })

describe('one due column: migration from schema version 2 (issue 21, docs/spec/lifecycle.md §9/§10)', () => {
  it('an old database keeps its due times: due_at = the earlier of due_at and wakeup_due_at; the old column and function are dropped; idempotent', async () => {
    const url = await freshDb('due')
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      await c.query(V2)
      const w = new Date('2026-12-01T10:00:00.000Z')
      const a = new Date('2026-12-01T11:00:00.000Z')
      const rows: Array<[string, Date | null, Date | null]> = [
        ['wake-only', null, w], ['expiry-only', a, null], ['both-wake-first', a, w], ['both-expiry-first', w, a], ['none', null, null],
      ]
      for (const [id, due, wake] of rows) {
        await c.query('INSERT INTO turnlog_sessions (id, header, due_at, wakeup_due_at) VALUES ($1, $2, $3, $4)', [id, header(id), due, wake])
      }
      expect((await c.query(`SELECT value FROM turnlog_meta WHERE key = 'schema'`)).rows).toEqual([{ value: '2' }])

      const store = postgresStore({ connectionString: url })
      try {
        await store.migrate()
        await store.migrate() // idempotent
      } finally {
        await store.close()
      }
      const after = await c.query('SELECT id, due_at FROM turnlog_sessions ORDER BY id COLLATE "C"')
      expect(after.rows.map((r: { id: string; due_at: Date | null }) => [r.id, r.due_at?.toISOString() ?? null])).toEqual([
        ['both-expiry-first', w.toISOString()],
        ['both-wake-first', w.toISOString()],
        ['expiry-only', a.toISOString()],
        ['none', null],
        ['wake-only', w.toISOString()],
      ])
      const cols = await c.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'turnlog_sessions' AND column_name LIKE '%due%'`)
      expect(cols.rows).toEqual([{ column_name: 'due_at' }])
      const fns = await c.query(`SELECT proname FROM pg_proc WHERE proname IN ('turnlog_append_due', 'turnlog_append_decided') ORDER BY proname`)
      expect(fns.rows).toEqual([{ proname: 'turnlog_append_decided' }])
      expect((await c.query(`SELECT value FROM turnlog_meta WHERE key = 'schema'`)).rows).toEqual([{ value: String(SCHEMA_VERSION) }])
      expect(SCHEMA_VERSION).toBe(3)
    } finally {
      await c.end()
    }
  }, 60_000)
})
