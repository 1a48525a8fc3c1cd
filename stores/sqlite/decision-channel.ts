/**
 * The SQLite store's decision side channel (stores/types.ts `DecisionChannel`) for a session an
 * app owns (`store.open(id, 'write')`; a worker's adopted writer pulls decisions itself).
 * `turnlog_decisions` is the arbiter, as in PostgreSQL (the append refuses a batch that logs a
 * decision other than the row's), and the driver is synchronous, so:
 *
 * - `claim` reads the approval's row now: a row recorded first by another process wins (the agent
 *   logs it instead of its own decision); no row, and the claim wins here with the append as the
 *   arbiter.
 * - `watch` hands over the rows recorded while nobody ran the session (read by `open` with the
 *   lease, delivered synchronously), and while the agent is parked (`keepAlive(true)`: it waits for
 *   a decision from elsewhere) it reads the unlogged rows every `decisionPollMs` (one indexed
 *   statement; the timer keeps the process alive, as the JSONL watch does). A running, unparked
 *   owner makes no reads here.
 * - Answers of input rounds (docs/spec/lifecycle.md §11) are rows of the same table keyed by request id:
 *   `claimAnswer` and the watch's `onAnswer` treat them as `claim` and the listener do decisions.
 */
import type { AnswerRecord, DecisionChannel, DecisionRecord, DecisionWatch } from '../types.js'
import { parseAnswerRecord, sameAnswer } from '../answer-records.js'
import { parseRecord, unloggedDecisions } from './rows.js'
import type { SqliteHost } from './host.js'

export class SqliteDecisionChannel implements DecisionChannel {
  readonly #known = new Map<string, DecisionRecord>()
  readonly #knownAnswers = new Map<string, AnswerRecord>()
  #primed = false
  readonly #stops = new Set<() => void>()

  constructor(readonly store: SqliteHost, readonly sessionId: string) {}

  /** @internal the rows `open` read with the lease */
  prime(rows: ReadonlyMap<string, DecisionRecord>, answers?: ReadonlyMap<string, AnswerRecord>): void {
    this.#primed = true
    for (const [id, rec] of rows) this.#known.set(id, rec)
    for (const [id, rec] of answers ?? []) this.#knownAnswers.set(id, rec)
  }

  claimAnswer(rec: AnswerRecord): AnswerRecord | null {
    let k = this.#knownAnswers.get(rec.requestId)
    if (k === undefined) {
      const row = this.store.db.prepare('SELECT record FROM turnlog_decisions WHERE session_id = ? AND approval_id = ?')
        .get(this.sessionId, rec.requestId) as { record: string } | undefined
      if (row === undefined) return null
      k = parseAnswerRecord(this.sessionId, rec.requestId, row.record)
      this.#knownAnswers.set(rec.requestId, k)
    }
    return sameAnswer(k, rec) ? null : k
  }

  claim(rec: DecisionRecord): DecisionRecord | null {
    let k = this.#known.get(rec.approvalId)
    if (k === undefined) {
      const row = this.store.db.prepare('SELECT record FROM turnlog_decisions WHERE session_id = ? AND approval_id = ?')
        .get(this.sessionId, rec.approvalId) as { record: string } | undefined
      if (row === undefined) return null
      k = parseRecord(this.sessionId, rec.approvalId, row.record)
      this.#known.set(rec.approvalId, k)
    }
    return JSON.stringify([k.decision, k.by]) === JSON.stringify([rec.decision, rec.by]) ? null : k
  }

  /** Stops every watch (the writer closed). @internal */
  stopAll(): void {
    for (const s of [...this.#stops]) s()
  }

  watch(listener: (rec: DecisionRecord) => void, onError?: (err: unknown) => void, onAnswer?: (rec: AnswerRecord) => void): DecisionWatch {
    let stopped = false
    let timer: unknown = null
    const delivered = new Set<string>()
    const report = (err: unknown): void => {
      try {
        onError?.(err)
      } catch {
        // a listener's own failure must not stop the watch
      }
    }
    const read = (): void => {
      if (stopped) return
      let rows: Map<string, DecisionRecord>
      const answers = new Map<string, AnswerRecord>()
      try {
        rows = unloggedDecisions(this.store.db, this.sessionId, report, answers)
      } catch (err) {
        report(err) // busy past the timeout: the next poll reads again
        return
      }
      for (const [id, rec] of rows) {
        this.#known.set(id, rec)
        if (stopped || delivered.has(id)) continue
        delivered.add(id)
        listener(rec)
      }
      for (const [id, rec] of answers) {
        this.#knownAnswers.set(id, rec)
        if (stopped || delivered.has(id)) continue
        delivered.add(id)
        onAnswer?.(rec)
      }
    }
    if (this.#primed) {
      for (const [id, rec] of this.#known) {
        delivered.add(id)
        listener(rec)
      }
      for (const [id, rec] of this.#knownAnswers) {
        delivered.add(id)
        onAnswer?.(rec)
      }
    } else read()
    const stopTimer = (): void => {
      if (timer !== null) clearInterval(timer as NodeJS.Timeout)
      timer = null
    }
    const stop = (): void => {
      stopped = true
      stopTimer()
      this.#stops.delete(stop)
    }
    this.#stops.add(stop)
    return {
      stop,
      keepAlive: (on) => {
        if (on && timer === null && !stopped) {
          read()
          timer = setInterval(read, this.store.decisionPollMs)
        } else if (!on) stopTimer()
      },
    }
  }
}
