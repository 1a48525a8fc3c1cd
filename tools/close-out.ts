/**
 * Closing a failed tool run (docs/spec/lifecycle.md §5, L5): after the scheduler itself failed, every call of
 * the step still gets exactly one result, in model order. Out of scheduler.ts because it only
 * reads the calls' records and writes to the log: no scheduling state is involved.
 */
import { send, type CallRec } from './call-record.js'
import { errorOutcome, errorText } from './define.js'
import type { ToolEnv } from './types.js'

/**
 * For each uncommitted call in model order: a started one gets its own outcome if it settled and
 * was never offered to the log, else `TOOL_OUTCOME_UNKNOWN` (its body is aborted: abandoned); one
 * that never started gets its synthetic pair through `notDispatched`. Returns false when the log
 * refused one of these closing appends (the caller then throws the original error).
 */
export function closeOut(
  recs: readonly CallRec[],
  err: unknown,
  env: Pick<ToolEnv, 'appendResult'>,
  notDispatched: (rec: CallRec, why: string) => void,
): boolean {
  let unclosed = false
  for (const rec of recs) {
    if (rec.committed) continue
    if (rec.callSeq !== null) {
      const own = rec.outcome !== null && !rec.commitTried
      const outcome = own
        ? rec.outcome!
        : errorOutcome('TOOL_OUTCOME_UNKNOWN', `The outcome of tool '${rec.call.name}' is unknown: the tool scheduler failed (${errorText(err)}).`)
      if (!own) {
        send(rec, { type: 'LOST' })
        rec.controller?.abort(new Error('the tool scheduler failed'))
      }
      try {
        rec.commitTried = true
        env.appendResult(rec.call, rec.callSeq, outcome)
        rec.committed = true
        if (own) send(rec, { type: 'COMMIT', error: outcome.error })
      } catch {
        unclosed = true
      }
    } else {
      try {
        notDispatched(rec, `the tool scheduler failed (${errorText(err)})`)
      } catch {
        // Its pair could not be written: the model is owed a result the log refuses.
        unclosed = true
      }
    }
  }
  return !unclosed
}
