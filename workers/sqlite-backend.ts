/**
 * The workers' statements on one SQLite file (backend.ts; the protocol is in pool.ts), for several
 * worker processes on one machine:
 *
 * - **Claim**: a read without the write lock asks whether anything is claimable (most polls find
 *   nothing and take no lock); if so, one `BEGIN IMMEDIATE` transaction picks up to `room`
 *   sessions (expired leases first, then sent input, recorded decisions or a passed due time;
 *   oldest activity first), bumps each token and reads what the run starts with. The write lock
 *   orders it against every other claim, append and hand-back: two workers never take one session.
 * - **Heartbeat**: one transaction for every session served here; a session it does not extend
 *   lost its lease (its writer stops before it could append).
 * - No NOTIFY: input, decisions and stop requests are found by the pool's poll (`pollMs`, 100 ms by
 *   default on SQLite; each poll is a few indexed reads of a local file).
 */
import { isBusy } from '../stores/sqlite/driver.js'
import { unmovedInbox } from '../stores/sqlite/rows.js'
import type { SqliteStore } from '../stores/sqlite/store.js'
import type { CancelInboxRow, CancelRequestRow, ClaimRound, InboxRow, WorkerBackend, WorkerStore } from './backend.js'

/** The claimable sessions, best first: expired leases (k = 0), then owed input or a due time. */
const CLAIMABLE = `
  SELECT id, last_activity, 0 AS k FROM turnlog_sessions WHERE lease_owner IS NOT NULL AND lease_until <= ?
  UNION SELECT id, last_activity, 1 FROM turnlog_sessions WHERE pending > 0 AND lease_owner IS NULL
  UNION SELECT id, last_activity, 1 FROM turnlog_sessions WHERE due_at <= ? AND lease_owner IS NULL`

export class SqliteBackend implements WorkerBackend {
  readonly listening = false

  constructor(readonly sqlite: SqliteStore) {}

  get store(): WorkerStore {
    return this.sqlite as unknown as WorkerStore
  }

  listen(): void {}

  close(): void {}

  /**
   * Says nothing of stale leases (`staleLeaseExpiresInMs` null): the pool polls a SQLite file every
   * 100 ms at most, so a dead worker's lease is found within that of its expiry anyway.
   */
  async claim(workerId: string, leaseMs: number, room: number, skip: readonly string[]): Promise<ClaimRound> {
    return { claimed: await this.#claim(workerId, leaseMs, room, skip), staleLeaseExpiresInMs: null }
  }

  async #claim(workerId: string, leaseMs: number, room: number, skip: readonly string[]): Promise<ClaimRound['claimed']> {
    const db = this.sqlite.db
    const skipJson = JSON.stringify(skip)
    const pick = `SELECT c.id FROM (${CLAIMABLE}) AS c JOIN turnlog_sessions s ON s.id = c.id
      WHERE s.child = 0 AND c.id NOT IN (SELECT value FROM json_each(?))
      ORDER BY c.k, c.last_activity LIMIT ?`
    const now0 = this.sqlite.now()
    if (db.prepare(pick).get(now0, now0, skipJson, 1) === undefined) return []
    let rows: Array<{ id: string; token: number; length: number; header: string; parked: number; title: string | null; due_at: number | null; now: number }>
    try {
      rows = await this.sqlite.tx(() => {
        const now = this.sqlite.now()
        const ids = (db.prepare(pick).all(now, now, skipJson, room) as Array<{ id: string }>).map((x) => x.id)
        const take = db.prepare('UPDATE turnlog_sessions SET token = token + 1, lease_owner = ?, lease_until = ? WHERE id = ?')
        const read = db.prepare('SELECT id, token, length, header, parked, title, due_at FROM turnlog_sessions WHERE id = ?')
        return ids.map((id) => {
          take.run(workerId, now + Math.round(leaseMs), id)
          return { ...(read.get(id) as Omit<(typeof rows)[number], 'now'>), now }
        })
      })
    } catch (err) {
      if (isBusy(err)) return [] // the file was busy past the timeout: the next poll claims
      throw err
    }
    const cancels = db.prepare('SELECT 1 AS x FROM turnlog_cancels WHERE session_id = ? AND handled_at IS NULL LIMIT 1')
    const decisions = db.prepare('SELECT 1 AS x FROM turnlog_decisions WHERE session_id = ? AND logged_seq IS NULL LIMIT 1')
    return rows.map((row) => ({
      id: row.id,
      adopt: () => this.sqlite.adopt(row.id, Number(row.token), Number(row.length), row.header, leaseMs, false, row),
      cancels: cancels.get(row.id) !== undefined,
      decisions: decisions.get(row.id) !== undefined,
      inbox: unmovedInbox(db, row.id),
      overdueMs: row.due_at !== null && Number(row.due_at) <= row.now ? row.now - Number(row.due_at) : null,
    }))
  }

  async beat(leaseMs: number, live: ReadonlyArray<{ id: string; token: number }>): Promise<Set<string>> {
    return await this.sqlite.tx(() => {
      const now = this.sqlite.now()
      const up = this.sqlite.db.prepare(`UPDATE turnlog_sessions SET lease_until = ?
        WHERE id = ? AND token = ? AND lease_owner IS NOT NULL AND lease_until > ?`)
      const kept = new Set<string>()
      for (const x of live) if (Number(up.run(now + Math.round(leaseMs), x.id, x.token, now).changes) === 1) kept.add(x.id)
      return kept
    })
  }

  async check(ids: readonly string[], children: readonly string[]): Promise<Array<{ session_id: string; cancel: boolean }>> {
    const rows = this.sqlite.db.prepare(`
      SELECT session_id, 0 AS cancel FROM turnlog_inbox WHERE moved_seq IS NULL AND session_id IN (SELECT value FROM json_each(?))
      UNION SELECT session_id, 0 FROM turnlog_decisions WHERE logged_seq IS NULL AND session_id IN (SELECT value FROM json_each(?))
      UNION SELECT session_id, 1 FROM turnlog_cancels WHERE handled_at IS NULL AND session_id IN (SELECT value FROM json_each(?))`)
      .all(JSON.stringify(ids), JSON.stringify([...ids, ...children]), JSON.stringify(ids)) as Array<{ session_id: string; cancel: number }>
    return rows.map((r) => ({ session_id: r.session_id, cancel: r.cancel === 1 }))
  }

  async inbox(sessionId: string): Promise<InboxRow[]> {
    return unmovedInbox(this.sqlite.db, sessionId)
  }

  async decisionRows(sessionId: string): Promise<Array<{ approval_id: string; record: string }>> {
    return this.sqlite.db.prepare('SELECT approval_id, record FROM turnlog_decisions WHERE session_id = ? AND logged_seq IS NULL ORDER BY decided_at, rowid')
      .all(sessionId) as Array<{ approval_id: string; record: string }>
  }

  async cancelRequests(sessionId: string): Promise<CancelRequestRow[]> {
    const rows = this.sqlite.db.prepare('SELECT n, cause, sent_before, length_at FROM turnlog_cancels WHERE session_id = ? AND handled_at IS NULL ORDER BY n')
      .all(sessionId) as Array<{ n: number; cause: string; sent_before: number; length_at: number }>
    return rows.map((r) => ({ n: String(r.n), cause: r.cause, sent_before: String(r.sent_before), length_at: Number(r.length_at) }))
  }

  async cancelInbox(sessionId: string, sentBefore: string, lengthAt: number, named: readonly string[]): Promise<CancelInboxRow[]> {
    return this.sqlite.db.prepare(`SELECT message_id, moved_seq, target, message FROM turnlog_inbox
      WHERE session_id = ? AND n <= ? AND (moved_seq IS NULL OR moved_seq >= ? OR message_id IN (SELECT value FROM json_each(?)))
      ORDER BY n`).all(sessionId, Number(sentBefore), lengthAt, JSON.stringify(named)) as unknown as CancelInboxRow[]
  }

  async cancelHandled(n: string, outcome: string, endSeq: number | null): Promise<void> {
    await this.sqlite.tx(() => this.sqlite.db.prepare('UPDATE turnlog_cancels SET handled_at = ?, outcome = ?, end_seq = ? WHERE n = ? AND handled_at IS NULL')
      .run(this.sqlite.now(), outcome, endSeq, Number(n)))
  }
}
