/**
 * The PostgreSQL store's decision side channel (stores/types.ts `DecisionChannel`) for a session
 * an **app** owns (`store.open(id, 'write')`: `resumeAgent`, `openAgent`, `createAgent` with the
 * store; not a worker's adopted writer, which pulls decisions itself: pull-decisions.ts).
 *
 * docs/spec/lifecycle.md §9: a decision made from any machine while nobody ran the session is found "when it
 * opens the session", and a running owner receives it. `turnlog_decisions` is the arbiter (its
 * primary key; `turnlog_append_decided` refuses an append that logs another decision), so:
 *
 * - `watch` hands over the session's unlogged rows when the owner attaches (the rows recorded
 *   while nobody ran it, read by `open`'s own statement, so synchronously: the agent holds them
 *   until the restored step waits, then logs each once). While the agent is parked
 *   (`keepAlive(true)`: a parked agent waits for a decision from elsewhere) the session is
 *   subscribed to the store's one LISTEN connection (listen.ts): `turnlog_decide`'s NOTIFY — the
 *   one that wakes workers — makes it read the rows at once, and a slow fallback poll (one
 *   statement for all the process's parked sessions) finds a notification that was lost. The
 *   connection and the poll keep the process alive while parked, like the JSONL watch. A
 *   running, unparked owner makes no queries here. (Round 15 polled every 500 ms per parked
 *   session instead.)
 * - `claim` is synchronous (the agent's decision paths are): it cannot ask the server, so it
 *   answers from the rows the watch has read. A row read there is the winner (the agent logs it
 *   instead of its own decision); otherwise the claim wins here and the append is the arbiter.
 */
import { TurnlogError } from '../../events/errors.js'
import type { AnswerRecord, DecisionChannel, DecisionRecord, DecisionWatch } from '../types.js'
import { sameAnswer } from '../answer-records.js'
import { unloggedDecisions } from './decisions.js'
import type { DecisionListener } from './listen.js'

type Query = (sql: string, params: unknown[]) => Promise<{ rows: unknown[] }>

/**
 * Default fallback poll of the parked owners' decisions while the LISTEN connection is up (a lost
 * notification is found within it; while the connection is down they are read every 500 ms).
 */
export const PG_DECISION_POLL_MS = 30_000

export class PgDecisionChannel implements DecisionChannel {
  /** Rows read by the watch (recorded first: they win every later claim of their approval). */
  readonly #known = new Map<string, DecisionRecord>()
  /** Answer rows read by the watch (they win every later claim of their round). */
  readonly #knownAnswers = new Map<string, AnswerRecord>()

  constructor(readonly query: Query, readonly sessionId: string, readonly listener: DecisionListener) {}

  /** The rows `open` read with the lease: `watch` delivers them at once, without a query. @internal */
  prime(rows: ReadonlyMap<string, DecisionRecord>, answers?: ReadonlyMap<string, AnswerRecord>): void {
    this.#primed = true
    for (const [id, rec] of rows) this.#known.set(id, rec)
    for (const [id, rec] of answers ?? []) this.#knownAnswers.set(id, rec)
  }

  #primed = false

  /** The reads of the watches attached now (`poll` runs them). */
  readonly #reads = new Set<() => Promise<void>>()

  /**
   * Reads the unlogged rows now, for every watch attached (a NOTIFY for this session reached the
   * process that runs it: a PostgreSQL worker's child session, docs/spec/lifecycle.md §10, whose write handle is
   * this channel's and which no worker claims on its own). Delivery is the watch's as for a poll.
   * Never throws (a failed read is the watch's `onError`, and the next poll or NOTIFY reads again).
   * @internal (workers)
   */
  poll(): void {
    for (const read of this.#reads) void read()
  }

  claim(rec: DecisionRecord): DecisionRecord | null {
    const k = this.#known.get(rec.approvalId)
    if (k === undefined) return null
    return JSON.stringify([k.decision, k.by]) === JSON.stringify([rec.decision, rec.by]) ? null : k
  }

  claimAnswer(rec: AnswerRecord): AnswerRecord | null {
    const k = this.#knownAnswers.get(rec.requestId)
    if (k === undefined) return null
    return sameAnswer(k, rec) ? null : k
  }

  watch(listener: (rec: DecisionRecord) => void, onError?: (err: unknown) => void, onAnswer?: (rec: AnswerRecord) => void): DecisionWatch {
    let stopped = false
    let unsubscribe: (() => void) | null = null
    const delivered = new Set<string>()
    const report = (err: unknown): void => {
      try {
        onError?.(err)
      } catch {
        // a listener's own failure must not stop the watch
      }
    }
    const deliver = (rows: ReadonlyMap<string, DecisionRecord | AnswerRecord>): void => {
      for (const [id, rec] of rows) {
        if ('approvalId' in rec) this.#known.set(id, rec)
        else this.#knownAnswers.set(id, rec)
        if (stopped || delivered.has(id)) continue
        delivered.add(id)
        if ('approvalId' in rec) listener(rec)
        else onAnswer?.(rec)
      }
    }
    if (this.#primed) {
      // read with the lease: delivered synchronously, so a resumed agent holds them before it wakes
      for (const [id, rec] of this.#known) {
        delivered.add(id)
        listener(rec)
      }
      for (const [id, rec] of this.#knownAnswers) {
        delivered.add(id)
        onAnswer?.(rec)
      }
    }
    const read = (): Promise<void> => {
      const answers = new Map<string, AnswerRecord>()
      return unloggedDecisions(this.query, this.sessionId, (err) => report(new TurnlogError('INVALID_EVENT',
        `a recorded decision of session ${this.sessionId} is malformed: ${err instanceof Error ? err.message : String(err)}`, { sessionId: this.sessionId })), answers)
        .then((rows) => deliver(new Map<string, DecisionRecord | AnswerRecord>([...rows, ...answers])), report) // a failed read: the parked subscription (or the next poll) reads them again
    }
    if (!this.#primed) void read()
    this.#reads.add(read)
    return {
      stop: () => {
        stopped = true
        this.#reads.delete(read)
        unsubscribe?.()
        unsubscribe = null
      },
      keepAlive: (on) => {
        if (on && unsubscribe === null && !stopped) unsubscribe = this.listener.subscribe(this.sessionId, deliver, report)
        else if (!on && unsubscribe !== null) {
          unsubscribe()
          unsubscribe = null
        }
      },
    }
  }
}
