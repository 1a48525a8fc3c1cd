/**
 * What a SQLite writer derives from its log for the session row, in the transaction that appends
 * the batch (so the row never disagrees with a committed log): the decisions the batch logs (they
 * settle `turnlog_decisions` rows, docs/spec/lifecycle.md §9), the session's one next due time (the earlier of
 * the next due wakeup, docs/spec/lifecycle.md §10, and the earliest open approval expiry), whether the log
 * stands parked (open requests, nothing owed but decisions), and the title (the first user
 * message's text).
 *
 * Folded from the stored events the first time a batch needs it (one read of the session's
 * events, inside the append's transaction), then from each batch.
 */
import type { EventOf, LogEvent } from '../../events/index.js'
import { approvalsReducer, type ApprovalsState } from '../../reducers/approvals.js'
import { inputsReducer, type InputsState } from '../../reducers/inputs.js'
import { nextDue, schedulesReducer, type SchedulesState } from '../../reducers/schedules.js'

/**
 * A decision a batch logs, as `turnlog_decisions.record` holds it; or an answer of an input round
 * (docs/spec/lifecycle.md §11: a row of the same table keyed by the request id, `record.answer`).
 */
export interface LoggedDecision {
  approvalId: string
  seq: number
  record: { decision?: unknown; answer?: unknown; by: { kind?: string }; time: number }
}

export interface FoldResult {
  decided: LoggedDecision[]
  /** The next due time in the log's own time base (epoch ms of the agents' clocks), or null. */
  dueMs: number | null
  parked: boolean
}

/** Title length kept in the row (the first user message's text, whitespace collapsed). */
export const TITLE_MAX = 120

export class SessionFold {
  #approvals: ApprovalsState | null = null
  #schedules: SchedulesState | null = null
  #inputs: InputsState | null = null

  /** Whether a batch can move the due time or the parked flag. */
  static holds(batch: readonly LogEvent[]): boolean {
    return batch.some((e) => e.type === 'tool/approval-requested' || e.type === 'tool/approval-decided' ||
      e.type === 'tool/input-requested' || e.type === 'tool/input-provided' ||
      e.type === 'step/parked' || e.type.startsWith('schedule/'))
  }

  get loaded(): boolean {
    return this.#approvals !== null
  }

  /** Folds the stored events (seq order) once. */
  load(stored: Iterable<LogEvent>): void {
    const a = approvalsReducer.initial()
    const s = schedulesReducer.initial()
    const i = inputsReducer.initial()
    for (const e of stored) {
      approvalsReducer.apply(a, e)
      schedulesReducer.apply(s, e)
      inputsReducer.apply(i, e)
    }
    this.#approvals = a
    this.#schedules = s
    this.#inputs = i
  }

  /** Applies a batch (after `load`). */
  apply(batch: readonly LogEvent[]): FoldResult {
    const a = this.#approvals!
    const s = this.#schedules!
    const i = this.#inputs!
    const decided: LoggedDecision[] = []
    for (const e of batch) {
      approvalsReducer.apply(a, e)
      schedulesReducer.apply(s, e)
      inputsReducer.apply(i, e)
      if (e.type === 'tool/approval-decided') {
        const d = (e as EventOf<'tool/approval-decided'>).data
        decided.push({ approvalId: d.approvalId, seq: e.seq, record: { decision: d.decision, by: d.by, time: e.time } })
      } else if (e.type === 'tool/input-provided') {
        const d = (e as EventOf<'tool/input-provided'>).data
        decided.push({ approvalId: d.requestId, seq: e.seq, record: { answer: d.answer, by: d.by, time: e.time } })
      }
    }
    let due: number | null = null
    for (const id of a.open) {
      const x = a.byId[id]?.expiresAt
      if (x !== undefined && (due === null || x < due)) due = x
    }
    for (const id of i.open) {
      const x = i.byId[id]?.expiresAt
      if (x !== undefined && (due === null || x < due)) due = x
    }
    const w = nextDue(s)
    const dueMs = due === null ? w : w === null ? due : Math.min(due, w)
    // parked: open requests (approvals or rounds) and the step parked (or waiting on them)
    return { decided, dueMs, parked: (a.open.length > 0 || i.open.length > 0) && (a.parked !== null || a.waiting !== null) }
  }
}

/** The title a batch gives a session that has none: its first user message's text, or null. */
export function titleOf(batch: readonly LogEvent[]): string | null {
  for (const e of batch) {
    if (e.type !== 'user/message') continue
    const content = (e.data as { message?: { content?: unknown } }).message?.content
    if (!Array.isArray(content)) continue
    const text = content.map((b) => (b && typeof b === 'object' && (b as { type?: unknown }).type === 'text' ? String((b as { text?: unknown }).text ?? '') : '')).join(' ')
    const t = text.replace(/\s+/g, ' ').trim()
    if (t) return t.length > TITLE_MAX ? t.slice(0, TITLE_MAX - 1) + '…' : t
  }
  return null
}
