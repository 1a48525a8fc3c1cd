/**
 * A parked step's calls restored from the log (docs/spec/lifecycle.md §9), for the scheduler (scheduler.ts):
 * committed calls stay committed, requests keep their decisions, an `ask` call that waits is
 * started (its pre-execute ran before the stop) and waits again. Nothing already done is done
 * again (R10). A call that ran beside a re-attached child (docs/spec/lifecycle.md §10) is settled with its §8
 * result and committed in its place.
 */
import type { PreVerdict } from './call-machine.js'
import type { CallRec } from './call-record.js'
import { errorOutcome, prepareCall } from './define.js'
import type { AnyTool, RestoredCall } from './types.js'

/** Sets each record from the log; returns the run's counters (calls started, committed, in flight). */
export function restoreRecs(
  recs: readonly CallRec[], calls: readonly RestoredCall[], tools: ReadonlyMap<string, AnyTool>,
): { started: number; committed: number; inFlight: number } {
  let started = 0
  let committed = 0
  let inFlight = 0
  calls.forEach((c, i) => {
    const rec = recs[i]!
    if (c.calledArguments !== null) rec.call = { ...rec.call, arguments: c.calledArguments }
    else if (c.approval?.decided?.decision.kind === 'approve' && c.approval.decided.decision.arguments !== undefined) {
      rec.call = { ...rec.call, arguments: c.approval.decided.decision.arguments }
    }
    rec.approval = c.approval === null ? null : { ...c.approval }
    rec.callSeq = c.callSeq
    if (c.committed) {
      rec.committed = true
      rec.commitTried = true
      rec.machine = { state: 'committed', mode: 'exclusive', error: null }
      committed = i + 1
      started = i + 1
    } else if (c.callSeq !== null && c.unknown !== undefined) {
      // it ran beside a re-attached child at a crash (docs/spec/lifecycle.md §8, §10): settled with its §8
      // result, committed in model order by the commit loop, never run again
      rec.outcome = errorOutcome(c.unknown.code, c.unknown.message)
      rec.restoredOutcome = true
      rec.machine = { state: 'settled', mode: 'exclusive', error: rec.outcome.error! }
      started = i + 1
    } else if (c.callSeq !== null) {
      // a call with a logged round (docs/spec/lifecycle.md §11) ran its body already: it waits in its round
      rec.machine = { state: c.input !== undefined ? 'executing' : 'pre', mode: 'exclusive', error: null }
      rec.prepared = prepareCall(rec.call, tools)
      started = i + 1
      inFlight++
    }
  })
  return { started, committed, inFlight }
}

/**
 * The restored calls that continue, each with the verdict it continues from: an `ask` call waits
 * for its decision, then runs (or is refused) as it would have; a call whose child ran at a crash
 * (docs/spec/lifecycle.md §10) runs its body again, which re-attaches the child (its pre-execute allowed it
 * before the crash: not asked again). Committed and never-started calls are not continued.
 */
export function continuing(recs: readonly CallRec[], calls: readonly RestoredCall[]): Array<{ rec: CallRec; verdict: PreVerdict }> {
  const out: Array<{ rec: CallRec; verdict: PreVerdict }> = []
  calls.forEach((c, i) => {
    const rec = recs[i]!
    if (rec.committed || rec.callSeq === null || rec.restoredOutcome || c.input !== undefined) return
    out.push({ rec, verdict: (c.child !== undefined || c.reissue === true) && rec.approval === null ? { kind: 'allow' } : { kind: 'ask' } })
  })
  return out
}
