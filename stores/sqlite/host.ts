/**
 * What the SQLite store's handles (writer, reader, decision channel) need of their store: its own
 * file so that the handles and the store import it without importing each other.
 */
import type { LogEvent } from '../../events/envelope.js'
import type { EventRegistry } from '../../events/registry.js'
import type { SqlDb, SqlStatement } from './driver.js'

/** What the handles need of their store (`SqliteStore` provides it). */
export interface SqliteHost {
  readonly db: SqlDb
  readonly registry: EventRegistry
  readonly leaseMs: number
  /** Polling period of a parked app owner's decision watch. */
  readonly decisionPollMs: number
  readonly timers: { set: (fn: () => void, ms: number) => unknown; clear: (t: unknown) => void }
  /** The lease clock (epoch ms; one machine: every process on the file shares it). */
  now(): number
  /** A cached prepared statement. */
  prep(sql: string): SqlStatement
  /** Runs `fn` in one `BEGIN IMMEDIATE` transaction (rolled back when it throws). */
  tx<T>(fn: () => T): Promise<T>
  /** `tx`, grouped with the other calls of the tick (group-tx.ts). */
  txGrouped<T>(fn: () => T): Promise<T>
  decodeEvent(id: string, text: string, seq: number): LogEvent
}
