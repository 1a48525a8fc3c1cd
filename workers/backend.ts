/**
 * What `runWorkers` needs of its store, once per store kind (pg-backend.ts: PostgreSQL, with
 * LISTEN/NOTIFY; sqlite-backend.ts: one SQLite file, polled). The pool (pool.ts), a session's run
 * (session-run.ts) and the cancel handler (cancel-worker.ts) are written once against this: the
 * protocol (claim, resume, pull, hand back, heartbeat, takeover) is the same on both stores, only
 * the statements differ.
 */
import type { LogStore, LogWriter, OpenMode, OpenWriteOptions, LogReader } from '../stores/types.js'

/** A worker's write handle: a `LogWriter` under a lease the pool heartbeats. */
export interface WorkerWriter extends LogWriter {
  readonly token: number
  /** True while the handle may still append. */
  readonly live: boolean
  /** The append that logs this sent message's splice marks it moved. */
  expectMove(messageId: string): void
  /** The pool's heartbeat found the lease gone: stop (`LEASE_LOST`). */
  leaseLost(): void
  /** Releases the lease when nothing is owed; false (and keeps it) otherwise. */
  handBack(): Promise<boolean>
  /** Expires the lease at once without releasing it (another worker resumes the session). */
  abandon(): Promise<void>
  /** The session's next due time in the log's time base, or null. */
  nextDue(): Promise<number | null>
}

/** The store as the workers' runs use it (open, create, …) plus its lease length. */
export interface WorkerStore extends LogStore {
  readonly leaseMs: number
  open(id: string, mode: 'read'): Promise<LogReader>
  open(id: string, mode: 'write', opts?: OpenWriteOptions): Promise<WorkerWriter>
  open(id: string, mode: OpenMode, opts?: OpenWriteOptions): Promise<LogReader | LogWriter>
}

/** One unmoved sent message, as the pull reads it. */
export interface InboxRow { message_id: string; target: string; wake: boolean; message: string }

/** One session a claim took: its writer is adopted on demand (a bad header throws there). */
export interface Claimed {
  id: string
  adopt(): WorkerWriter
  /** Whether a stop request is open, a decision unlogged; the unmoved sent messages (null: read them). */
  cancels: boolean
  decisions: boolean
  inbox: InboxRow[] | null
  /** How long ago (ms, the store's clock) its due time passed, or null when it was not due. */
  overdueMs: number | null
}

/** What one claim round took, and when another worker's lease that stopped beating runs out. */
export interface ClaimRound {
  claimed: Claimed[]
  /**
   * Milliseconds (the store's clock) until the first lease of another worker that missed its last
   * heartbeat expires, or null (none, or the store does not say): the pool claims again then, so a
   * dead worker's sessions are taken over within one lease period, not a lease plus a poll.
   */
  staleLeaseExpiresInMs: number | null
}

/** An open stop request (`turnlog_cancels`). */
export interface CancelRequestRow { n: string; cause: string; sent_before: string; length_at: number }
/** A sent message a stop request may cover. */
export interface CancelInboxRow { message_id: string; moved_seq: number | null; target: string; message: string }

/** Early wakes a store can give (PostgreSQL: NOTIFY). */
export interface WakeHandlers {
  input(sessionId: string): void
  cancel(sessionId: string): void
  /** (Re)connected: catch up on what was committed while nobody listened. */
  connected(): void
}

export interface WorkerBackend {
  readonly store: WorkerStore
  /** True while early wakes are delivered (the fallback check may then run less often). */
  readonly listening: boolean
  /** Starts the early wakes (no-op where the store has none). */
  listen(handlers: WakeHandlers): void
  /** Takes up to `room` claimable sessions (expired leases first), bumping each token. */
  claim(workerId: string, leaseMs: number, room: number, skip: readonly string[]): Promise<ClaimRound>
  /** Extends the leases of `live`; returns the ids it extended (the others lost their lease). */
  beat(leaseMs: number, live: ReadonlyArray<{ id: string; token: number }>): Promise<Set<string>>
  /** Which of `ids` have unmoved input, unlogged decisions (also of `children`) or open stop requests. */
  check(ids: readonly string[], children: readonly string[]): Promise<Array<{ session_id: string; cancel: boolean }>>
  /** The session's unmoved sent messages, in send order. */
  inbox(sessionId: string): Promise<InboxRow[]>
  /** The session's recorded, unlogged decisions (raw rows), in decision order. */
  decisionRows(sessionId: string): Promise<Array<{ approval_id: string; record: string }>>
  /** The session's open stop requests, oldest first. */
  cancelRequests(sessionId: string): Promise<CancelRequestRow[]>
  /** The sent messages up to `sentBefore` that are unmoved, moved at or after `lengthAt`, or named. */
  cancelInbox(sessionId: string, sentBefore: string, lengthAt: number, named: readonly string[]): Promise<CancelInboxRow[]>
  /** Marks a stop request handled. */
  cancelHandled(n: string, outcome: string, endSeq: number | null): Promise<void>
  /** Ends the early wakes. */
  close(): void
}
