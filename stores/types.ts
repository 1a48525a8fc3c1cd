/**
 * The store contract (docs/spec/api.md "Stores"): every log store — memory, jsonl, sqlite, postgres — offers
 * the same `LogStore`, and one contract test suite (`test/stores/contract.ts`) runs against each.
 *
 * - `create(id, header?)` makes an empty session (`SESSION_EXISTS` if it is there already).
 * - `open(id, 'read')` is a snapshot: `length` and `events(from)` cover the records complete at
 *   open (a torn tail is not part of it; `torn` says so).
 * - `open(id, 'write')` takes the single writer's ownership (`SESSION_OWNED` for a second writer,
 *   in this process or another) with a fencing `token` that grows with every ownership.
 * - `append(events, { expectedSeq })` takes committed events (seq assigned by the `Session`);
 *   `expectedSeq` must equal the handle's `length` (the seq the next event gets) and the events'
 *   seqs must run from it: a mismatch is `SEQ_CONFLICT`, never a duplicate or a gap. It resolves when
 *   the events are durable; concurrent appends are committed together (group commit).
 * - A failed write or fsync rejects with `IO_ERROR` / `FSYNC_FAILED` and **stops** the handle:
 *   every later append rejects with the same error (an fsync is never retried: after a failed
 *   fsync the kernel may have dropped the dirty pages, and a retry that succeeds would lie).
 * - Session ids are checked by `assertSessionId` (`INVALID_SESSION_ID`): no id escapes the store.
 */
import type { LogEvent } from '../events/envelope.js'
import type { TurnlogError } from '../events/errors.js'
import type { LogHeader, TornTail } from '../events/jsonl.js'
import type { ApprovalBy, ApprovalDecision } from '../events/approvals.js'
import type { InputAnswer, InputBy } from '../events/inputs.js'

/**
 * A decision as a store's side channel holds it (docs/spec/lifecycle.md §9: the first decision wins, whoever
 * makes it). `time` is when it was claimed (epoch ms).
 */
export interface DecisionRecord {
  approvalId: string
  decision: ApprovalDecision
  by: ApprovalBy
  time: number
}

/**
 * An answer to an input round as a store's side channel holds it (docs/spec/lifecycle.md §11: answers travel
 * the same channels as decisions; the first answer wins). Request ids and approval ids share one
 * key space per session (both are the agent's fresh ids), so a channel keys both by id.
 */
export interface AnswerRecord {
  requestId: string
  answer: InputAnswer
  by: InputBy
  time: number
}

/**
 * How decisions reach the running owner of a session whose log has one writer (JSONL): every
 * decision, from any process and from the owner itself (`agent.decide`, expiry, steer, cancel),
 * is first **claimed** here; the claim is the arbiter of "first decision wins", and it is durable
 * when `claim` returns. The owner watches the channel and logs each claimed decision once.
 */
export interface DecisionChannel {
  /**
   * Claims the approval for `rec` (synchronous: the agent's decision paths are). Returns null when
   * this claim won, else the record that won first. Throws a coded I/O error (nothing claimed).
   */
  claim(rec: DecisionRecord): DecisionRecord | null
  /**
   * Claims the answer of an input round as `claim` does a decision (docs/spec/lifecycle.md §11): null when this
   * claim won (or the same answer was claimed before), else the answer that won.
   */
  claimAnswer?(rec: AnswerRecord): AnswerRecord | null
  /**
   * Calls `listener` once for every claimed decision: the ones there already, then new ones as
   * they appear (a file-system watch, with a bounded poll as the fallback). `onError` hears an
   * unreadable record (it is skipped). Closing the writer stops it too.
   */
  watch(listener: (rec: DecisionRecord) => void, onError?: (err: unknown) => void, onAnswer?: (rec: AnswerRecord) => void): DecisionWatch
}

/** A running watch of a decision channel. */
export interface DecisionWatch {
  stop(): void
  /**
   * Whether the watch keeps the process alive (default false). A parked agent turns it on: it
   * waits for a decision from elsewhere, so its process must not exit under it.
   */
  keepAlive(on: boolean): void
}

/** What a caller may set in a new session's header; `type`, `format`, `id`, `checksums` are the store's. */
export interface HeaderInit {
  createdAt?: number
  /** A fork's parent session and seq; a child session's also names the parent's call (L19). */
  parent?: { session: string; seq: number; callId?: string }
  inheritedEventCount?: number
}

export type OpenMode = 'read' | 'write'

export interface OpenWriteOptions {
  /**
   * Open a log whose last line is torn instead of refusing it with `TORN_TAIL`. The handle then
   * has `torn`, and refuses appends until `quarantineTornTail()` has moved the torn bytes aside
   * (what `repair` does under the write lock). Stores that cannot tear ignore it.
   */
  allowTornTail?: boolean
}

export interface AppendOptions {
  /** The seq the first event must have: the handle's `length` when the append is called. */
  expectedSeq: number
  /**
   * The events were committed by a `Session` (validated, lossless, frozen: what the agent's
   * persistence passes): the store skips re-validating them (the seq checks still run). Default
   * false: every event is validated and checked lossless before anything is written.
   */
  trusted?: boolean
}

export interface AppendResult {
  /** The seq of the first appended event and the length after the append. */
  firstSeq: number
  length: number
}

/** A read-only view of one session. */
export interface LogReader {
  readonly sessionId: string
  readonly mode: OpenMode
  readonly header: LogHeader
  /**
   * Number of events: for a read handle, the complete records at open; for a write handle, the
   * events accepted so far (`durableLength` of them are durable).
   */
  readonly length: number
  /** Streams the events with `seq >= fromSeq` (default 0), in seq order, up to `length` (read
   * handle) or `durableLength` (write handle). */
  events(fromSeq?: number): AsyncIterable<LogEvent>
  /** Set when the log's last line is torn (read handles, and write handles opened with `allowTornTail`). */
  readonly torn?: TornTail
  close(): Promise<void>
}

/** The single owner's handle. */
export interface LogWriter extends LogReader {
  readonly mode: 'write'
  /** The fencing token of this ownership: larger than every earlier owner's. */
  readonly token: number
  /** Events known durable (their append resolved, or they were there at open). */
  readonly durableLength: number
  /** The error that stopped the handle, or null while it is healthy. */
  readonly failed: TurnlogError | null
  append(events: readonly LogEvent[], opts: AppendOptions): Promise<AppendResult>
  /**
   * Moves a torn tail aside (copies the bytes to a quarantine file beside the log, fsyncs it, then
   * cuts the log back to its last complete record). Resolves with where the bytes went; `null`
   * when there was no torn tail. Only for handles opened with `allowTornTail`.
   */
  quarantineTornTail?(): Promise<{ file: string; bytes: number; offset: number } | null>
  /**
   * The session's decision side channel (JSONL: `<id>.decisions/`), when the store has one: other
   * processes decide while this handle owns the session (docs/spec/lifecycle.md §9).
   */
  readonly decisions?: DecisionChannel
  /**
   * Every decision the store accepted for this session that the log may not hold yet (JSONL: the
   * claim files; PostgreSQL: the unlogged `turnlog_decisions` rows), by approval id. Repair reads
   * them so that it logs a decision a person was told about instead of `by: canceled`. Stores
   * without a side channel omit it.
   */
  acceptedDecisions?(): Promise<ReadonlyMap<string, DecisionRecord>>
}

export interface LogStore {
  /** `'memory'`, `'jsonl'`, … */
  readonly kind: string
  /** Creates an empty session; resolves with its header. `SESSION_EXISTS`, `INVALID_SESSION_ID`. */
  create(id: string, header?: HeaderInit): Promise<LogHeader>
  /** A read snapshot of the session (the records complete when it opened). `SESSION_NOT_FOUND`. */
  open(id: string, mode: 'read'): Promise<LogReader>
  /** The single writer's handle (`SESSION_OWNED` while another holds it; `SESSION_NOT_FOUND`). */
  open(id: string, mode: 'write', opts?: OpenWriteOptions): Promise<LogWriter>
  /** Either of the above, by `mode`. */
  open(id: string, mode: OpenMode, opts?: OpenWriteOptions): Promise<LogReader | LogWriter>
  /** Every session id in the store, sorted. */
  list(): Promise<string[]>
  /** True when the session exists. */
  has(id: string): Promise<boolean>
}
