/**
 * Group commit of the SQLite store's sends (stores/sqlite/group-tx.ts): sends asked for in one
 * tick share one `BEGIN IMMEDIATE` transaction; each runs in its own savepoint, so one that fails
 * is rolled back and rejected alone; every promise settles after the COMMIT.
 */
import { describe, expect, it } from 'vitest'
import type { SqliteStore } from '../../../stores/sqlite/store.js'
import { DRIVERS, freshStore } from './helpers.js'

/** A body that inserts a bare session row `id`. */
const insert = (store: SqliteStore, id: string) => () =>
  store.db.prepare('INSERT INTO turnlog_sessions (id, header, created_at, last_activity) VALUES (?, ?, 1, 1)').run(id, '{}')

/** The ids of the session table, in order. */
const sessionIds = (store: SqliteStore) =>
  (store.db.prepare('SELECT id FROM turnlog_sessions ORDER BY id').all() as Array<{ id: string }>).map((r) => r.id)

for (const driver of DRIVERS) {
  describe(`sqliteStore group commit (${driver})`, () => {
    it('sends of one tick are one transaction; each is durable and moved once by a worker later', async () => {
      const store = await freshStore({ driver })
      await store.migrate()
      const db = store.db
      const begins: string[] = []
      const exec = db.exec.bind(db)
      ;(db as { exec: (sql: string) => void }).exec = (sql: string) => {
        if (sql.startsWith('BEGIN')) begins.push(sql)
        exec(sql)
      }
      const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => store.send(`s-${i % 5}`, `hello ${i}`)))
      expect(new Set(ids).size).toBe(50)
      expect(begins).toEqual(['BEGIN IMMEDIATE'])
      const rows = await store.sessions()
      expect(rows.map((r) => [r.id, r.pending])).toEqual([0, 1, 2, 3, 4].map((k) => [`s-${k}`, 10]))
      for (let k = 0; k < 5; k++) expect(await store.pendingSends(`s-${k}`)).toHaveLength(10)
      // a later tick: its own transaction
      await store.send('s-0', 'later')
      expect(begins).toHaveLength(2)
      await store.close()
    })

    it('one grouped transaction body that throws is rolled back and rejected alone; the others commit', async () => {
      const store = await freshStore({ driver })
      await store.migrate()
      const ins = (id: string) => insert(store, id)
      const boom = new Error('boom')
      const results = await Promise.allSettled([
        store.txGrouped(ins('a')),
        store.txGrouped(() => {
          ins('b')() // written, then rolled back with its savepoint
          throw boom
        }),
        store.txGrouped(ins('c')),
      ])
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
      expect((results[1] as PromiseRejectedResult).reason).toBe(boom)
      expect(sessionIds(store)).toEqual(['a', 'c'])
      await store.close()
    })

    it('a body asked for while a group commits (after its bodies ran, before it settled) runs in the next group: none is lost', async () => {
      const store = await freshStore({ driver })
      await store.migrate()
      const ins = (id: string) => insert(store, id)
      let late: Promise<unknown> | null = null
      let lateSettled = false
      await store.txGrouped(() => {
        // runs once this group's body returns, before the group's own promise settles
        queueMicrotask(() => {
          late = store.txGrouped(ins('b')).finally(() => (lateSettled = true))
        })
        ins('a')()
      })
      await new Promise((r) => setTimeout(r, 20))
      expect(late).not.toBeNull()
      expect(lateSettled).toBe(true) // it was lost before: its queue was closed by the group before it
      await late
      expect(sessionIds(store)).toEqual(['a', 'b'])
      await store.close()
    })

    it('a closed store rejects every queued body with SESSION_CLOSED and writes nothing', async () => {
      const store = await freshStore({ driver })
      await store.migrate()
      const p = Promise.allSettled([store.send('x', 'one'), store.send('y', 'two')])
      await store.close()
      const r = await p
      expect(r.map((x) => x.status)).toEqual(['rejected', 'rejected'])
      expect((r[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'SESSION_CLOSED' })
    })
  })
}
