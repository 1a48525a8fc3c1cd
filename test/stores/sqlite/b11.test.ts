/**
 * B11 (bench/README.md) as behaviour, not time: the question "which sessions are parked / due /
 * running" is answered from the session table through each filter's partial index (the plan
 * SQLite chooses, on both drivers), and a batch is stored with multi-row inserts that keep every
 * event byte-equal and in order across the 64-row chunks.
 */
import { describe, expect, it } from 'vitest'
import { arbValidLog } from '../../../testing/arbitraries/valid-log.js'
import fc from 'fast-check'
import { sessionsSql } from '../../../stores/sqlite/sessions.js'
import { collect } from '../contract.js'
import { DRIVERS, freshStore } from './helpers.js'

for (const driver of DRIVERS) {
  describe(`sqliteStore B11 (${driver})`, () => {
    it('B11: each filter of sessions() is one SEARCH of its partial index, never a scan of the session table; parked and due read a covering index (no lookup of the table by id)', async () => {
      const store = await freshStore({ driver })
      await store.migrate()
      const plan = (f: 'parked' | 'due' | 'running') =>
        (store.db.prepare(`EXPLAIN QUERY PLAN ${sessionsSql(f)}`).all(...(f === 'parked' ? [] : [Date.now()])) as Array<{ detail: string }>).map((r) => r.detail)
      expect(plan('parked')[0]).toMatch(/^SEARCH turnlog_sessions USING COVERING INDEX turnlog_sessions_parked /)
      expect(plan('due')[0]).toMatch(/^SEARCH turnlog_sessions USING COVERING INDEX turnlog_sessions_due /)
      // the leased index is not covering: its sessions are appended to (schema.ts LISTED_COLUMNS)
      expect(plan('running')[0]).toMatch(/^SEARCH turnlog_sessions USING INDEX turnlog_sessions_leased /)
      // the parked index is keyed (parked, id): its rows come in the listing's order, unsorted
      expect(plan('parked')).toHaveLength(1)
      for (const f of ['parked', 'due', 'running'] as const) expect(plan(f).some((d) => d.startsWith('SCAN'))).toBe(false)
      await store.close()
    })

    it('B11: one append of 150 events (chunks of 64, 64 and 22 rows) stores every event byte-equal and in seq order', async () => {
      const events = fc.sample(arbValidLog({ minTurns: 12, maxTurns: 16 }), { seed: 7, numRuns: 1 })[0]!
      expect(events.length).toBeGreaterThan(150)
      const batch = events.slice(0, 150)
      const store = await freshStore({ driver })
      await store.create('big', { createdAt: 1 })
      const w = await store.open('big', 'write')
      await w.append(batch, { expectedSeq: 0 })
      await w.append(events.slice(150, 151), { expectedSeq: 150 })
      await w.close()
      const r = await store.open('big', 'read')
      expect(r.length).toBe(151)
      const back = await collect(r.events())
      expect(back.map((e) => JSON.stringify(e))).toEqual(events.slice(0, 151).map((e) => JSON.stringify(e)))
      await store.close()
    })
  })
}
