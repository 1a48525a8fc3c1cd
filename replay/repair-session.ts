/**
 * `repairSession(store, id)`: repair in place, the store way (decision record "stores" (docs/decisions/ in the repository)
 * , torn tails): under the session's write lock, the torn bytes are **copied** aside by the
 * store (`quarantineTornTail`: quarantine file fsynced first, then the log cut back to its last
 * complete record), a torn record missing only its `\n` is appended again, and the closers are
 * appended through the same handle. Nothing else in the log is rewritten. A subagent call that
 * was running gets its child's outcome when the child's log (same store) shows it ended.
 */
import type { LogEvent } from '../events/envelope.js'
import type { LogHeader } from '../events/jsonl.js'
import type { LogStore, LogWriter } from '../stores/types.js'
import { readChildOutcomes } from './child-outcome.js'
import { repairEvents, type RepairOptions } from './repair.js'

export interface RepairSessionResult {
  header: LogHeader
  /** The repaired log as it now stands in the store (kept records, then the closers). */
  events: LogEvent[]
  closers: LogEvent[]
  keptEventCount: number
  /** Where the store moved the torn bytes, or null. */
  quarantined: { file: string; bytes: number; offset: number } | null
  /** The write handle, still open, when `keepOpen` (resumeAgent hands it to the agent). */
  writer?: LogWriter
}

export async function repairSession(
  store: LogStore,
  sessionId: string,
  opts: RepairOptions & { keepOpen?: boolean } = {},
): Promise<RepairSessionResult> {
  const w = await store.open(sessionId, 'write', { allowTornTail: true })
  try {
    const events: LogEvent[] = []
    for await (const e of w.events(0)) events.push(e)
    const torn = w.torn
    let quarantined: RepairSessionResult['quarantined'] = null
    if (torn && w.quarantineTornTail) quarantined = await w.quarantineTornTail()
    if (torn?.record) {
      await w.append([torn.record], { expectedSeq: w.length })
      events.push(torn.record)
    }
    // decisions the store accepted and the dead owner never logged (closers.ts): logged as decided
    // (read only when a request is open: a session without one costs no decisions read)
    const decisions = opts.decisions ?? (w.acceptedDecisions && hasOpenRequest(events) ? await w.acceptedDecisions() : undefined)
    // children that ended before their parent logged the call's result (docs/spec/lifecycle.md §10): their outcome
    const children = opts.children ?? await readChildOutcomes(store, { header: w.header, events })
    const r = repairEvents({ header: w.header, events }, { ...opts, children, ...(decisions !== undefined ? { decisions } : {}) })
    if (r.closers.length) await w.append(r.closers, { expectedSeq: w.length })
    const out: RepairSessionResult = { header: w.header, events: r.log.events, closers: r.closers, keptEventCount: r.keptEventCount, quarantined }
    if (opts.keepOpen) out.writer = w
    else await w.close()
    return out
  } catch (err) {
    await w.close().catch(() => {})
    throw err
  }
}

/** Some `tool/approval-requested` of the log has no `tool/approval-decided` yet. */
function hasOpenRequest(events: readonly LogEvent[]): boolean {
  const open = new Set<string>()
  for (const e of events) {
    const id = (e.data as { approvalId?: unknown } | undefined)?.approvalId
    if (typeof id !== 'string') continue
    if (e.type === 'tool/approval-requested') open.add(id)
    else if (e.type === 'tool/approval-decided') open.delete(id)
  }
  return open.size > 0
}
