/**
 * The kill loop's person (issue 24 item 8 "with decisions"; docs/spec/lifecycle.md §9): another process than
 * every worker, deciding the open approvals of the loop's sessions through `store.decide` while
 * workers are killed and the server restarts. It reads each session's new events only (by seq,
 * the events table's key), so a round costs one indexed statement however long the logs grow.
 *
 * Each request is decided after a random wait (half within 200 ms, often before the step parks;
 * half within 3 s, after the worker handed the parked session back), approve 3 in 4, deny 1 in 4,
 * `by: {kind: 'user', id}` with an id of its own, so the accounting (decisions.ts) can find
 * exactly this decision in the log. A decision that throws (a restart) is tried again with the
 * same id; `APPROVAL_DECIDED` (someone else was first: a repair's `canceled`, or this decider's
 * own unacknowledged try) ends it.
 */
import { TurnlogError } from '../../events/index.js'
import type { PostgresStore } from '../../stores/postgres/index.js'
import type { MadeDecision } from './decisions.js'
import type { MadeAnswer } from './rounds.js'

/** One event read by a scan: its session, seq, type, approval id and input request id (null when none). */
export interface ScanRow { session_id: string; seq: number; type: string; approval: string | null; request?: string | null }

/** What the decider needs of a store: `decide` (and `answer`, for input rounds), and the events of each session after a seq. */
export interface DeciderStore {
  decide(sessionId: string, approvalId: string, decision: { kind: 'approve' } | { kind: 'deny'; reason: string }, opts: { by: { kind: 'user'; id: string }; waitMs: number }): Promise<unknown>
  answer?(sessionId: string, requestId: string, answer: { action: 'accept'; responses: Record<string, unknown> } | { action: 'decline' }, opts: { by: { kind: 'user'; id: string } }): Promise<unknown>
}

/** PostgreSQL: one indexed statement for every session's new events. */
export const pgScan = (store: PostgresStore) => async (seen: ReadonlyMap<string, number>): Promise<ScanRow[]> => {
  const ids = [...seen.keys()]
  const r = await store.pool.query(
    `SELECT e.session_id, e.seq, e.event->>'type' AS type, e.event->'data'->>'approvalId' AS approval, e.event->'data'->>'requestId' AS request
     FROM turnlog_events e JOIN unnest($1::text[], $2::int[]) AS h(sid, seen) ON e.session_id = h.sid AND e.seq > h.seen
     ORDER BY e.session_id, e.seq`, [ids, ids.map((s) => seen.get(s)!)])
  return r.rows as ScanRow[]
}

interface Open {
  sessionId: string
  approvalId: string
  dueAt: number
  decision: MadeDecision
}

interface OpenRound {
  sessionId: string
  requestId: string
  dueAt: number
  answer: MadeAnswer
}

export class Decider {
  /** Every decision tried, one entry per `by.id` (acknowledged once `store.decide` resolved). */
  readonly made: MadeDecision[] = []
  readonly figures = { tries: 0, refused: 0, failed: 0, lastError: '' }
  readonly #seen = new Map<string, number>()
  readonly #open = new Map<string, Open>()
  /** Every answer tried (input rounds), one entry per `by.id`. */
  readonly answers: MadeAnswer[] = []
  readonly answerFigures = { tries: 0, refused: 0, failed: 0 }
  readonly #rounds = new Map<string, OpenRound>()
  #n = 0

  constructor(private readonly store: DeciderStore, sessions: readonly string[], private readonly rand: () => number,
    private readonly newEvents: (seen: ReadonlyMap<string, number>) => Promise<ScanRow[]>) {
    for (const s of sessions) this.#seen.set(s, 0)
  }

  /** Requests seen and not yet decided (by anyone, as far as the log read so far says). */
  get open(): number {
    return this.#open.size + this.#rounds.size
  }

  /** The last seq read of a session (0 before any). */
  seenUpTo(sessionId: string): number {
    return this.#seen.get(sessionId) ?? 0
  }

  /** Reads the sessions' events after the last seq read; notes requests and decisions. */
  async scan(): Promise<void> {
    for (const row of await this.newEvents(this.#seen)) {
      this.#seen.set(row.session_id, Math.max(this.#seen.get(row.session_id)!, row.seq))
      if (row.request != null) {
        // an input round (§11): answered like a decision, after a wait; accept 7 in 8, else decline
        const key = `${row.session_id} ${row.request}`
        if (row.type === 'tool/input-requested' && !this.#rounds.has(key)) {
          const wait = this.rand() < 0.5 ? this.rand() * 200 : 200 + this.rand() * 2800
          const n = ++this.#n
          this.#rounds.set(key, {
            sessionId: row.session_id, requestId: row.request, dueAt: Date.now() + wait,
            answer: { sessionId: row.session_id, requestId: row.request, kind: this.rand() < 0.875 ? 'accept' : 'decline', text: `a${n}`, byId: `i${n}`, acknowledged: false },
          })
        } else if (row.type === 'tool/input-provided') this.#rounds.delete(key)
        continue
      }
      if (row.approval === null) continue
      const key = `${row.session_id} ${row.approval}`
      if (row.type === 'tool/approval-requested' && !this.#open.has(key)) {
        const wait = this.rand() < 0.5 ? this.rand() * 200 : 200 + this.rand() * 2800
        const decision: MadeDecision = {
          sessionId: row.session_id, approvalId: row.approval, kind: this.rand() < 0.75 ? 'approve' : 'deny', byId: `d${++this.#n}`, acknowledged: false,
        }
        this.#open.set(key, { sessionId: row.session_id, approvalId: row.approval, dueAt: Date.now() + wait, decision })
      } else if (row.type === 'tool/approval-decided') this.#open.delete(key)
    }
  }

  /** Decides every request whose wait is over. */
  async decideDue(): Promise<void> {
    const now = Date.now()
    for (const [key, o] of this.#open) {
      if (o.dueAt > now) continue
      const d = o.decision
      if (!this.made.includes(d)) this.made.push(d)
      this.figures.tries++
      try {
        await this.store.decide(d.sessionId, d.approvalId, d.kind === 'approve' ? { kind: 'approve' } : { kind: 'deny', reason: 'kill loop' },
          { by: { kind: 'user', id: d.byId }, waitMs: 0 })
        d.acknowledged = true
        this.#open.delete(key)
      } catch (err) {
        if (TurnlogError.is(err, 'APPROVAL_DECIDED')) {
          this.figures.refused++
          this.#open.delete(key)
        } else {
          // a connection cut by a restart: the same decision again, later (it may have committed)
          this.figures.failed++
          this.figures.lastError = String((err as Error)?.message ?? err).slice(0, 200)
          o.dueAt = Date.now() + 200
        }
      }
    }
  }

  /** Answers every input round whose wait is over (`store.answer`; `INPUT_ANSWERED` ends it). */
  async answerDue(): Promise<void> {
    const now = Date.now()
    for (const [key, o] of this.#rounds) {
      if (o.dueAt > now || this.store.answer === undefined) continue
      const a = o.answer
      if (!this.answers.includes(a)) this.answers.push(a)
      this.answerFigures.tries++
      try {
        await this.store.answer(a.sessionId, a.requestId, a.kind === 'accept' ? { action: 'accept', responses: { q: a.text } } : { action: 'decline' },
          { by: { kind: 'user', id: a.byId } })
        a.acknowledged = true
        this.#rounds.delete(key)
      } catch (err) {
        if (TurnlogError.is(err, 'INPUT_ANSWERED')) {
          this.answerFigures.refused++
          this.#rounds.delete(key)
        } else {
          this.answerFigures.failed++
          o.dueAt = Date.now() + 200
        }
      }
    }
  }

  /** Scans and decides until `stop()`; a failed scan (a restart) is tried again next round. */
  run(): { stop: () => Promise<void> } {
    let going = true
    const loop = (async () => {
      while (going) {
        try {
          await this.scan()
        } catch {
          // the server is restarting: the next round reads from the same seqs
        }
        await this.decideDue()
        await this.answerDue()
        await new Promise((r) => setTimeout(r, 50 + Math.floor(this.rand() * 50)))
      }
    })()
    return {
      stop: async () => {
        going = false
        await loop
      },
    }
  }
}
