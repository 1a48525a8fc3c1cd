/**
 * The scheduler's commit loop (docs/spec/lifecycle.md §5): whenever the next call in model order has settled,
 * its `tools/post-execute`, its `tool/result` and its additional contexts, so that results and
 * contexts are in model order. One loop at a time (`pump` starts it unless it runs); split from
 * scheduler.ts, which starts the calls and shares the run's counters with it.
 */
import { send, type CallRec } from './call-record.js'
import { postExecute, type CallHost } from './call-stages.js'
import type { ToolEnv } from './types.js'

/** The run's counters, shared by the start loop and the commit loop. */
export interface RunCounts {
  /** Calls `[0, started)` have started (in model order); `[0, committed)` have committed. */
  started: number
  committed: number
  /** Started and not yet settled: the pool's occupied slots. */
  inFlight: number
  /** A committed call asked to conclude the step. */
  concluded: boolean
}

/** What the commit loop reads of its run. */
export interface CommitHost {
  readonly recs: readonly CallRec[]
  readonly env: ToolEnv
  readonly host: CallHost
  readonly counts: RunCounts
  /** The run failed: commit nothing more. */
  failed(): boolean
  fail(err: unknown): void
  notify(): void
}

export class CommitLoop {
  #committing = false

  constructor(private readonly run: CommitHost) {}

  /** A commit is under way (a parked step is only parkable between commits). */
  get committing(): boolean {
    return this.#committing
  }

  /** Starts the loop unless it is running (a running loop sees the new settlement itself). */
  pump(): void {
    if (this.#committing) return
    this.#committing = true
    void this.#loop()
  }

  async #loop(): Promise<void> {
    const run = this.run
    const n = run.counts
    try {
      while (!run.failed() && n.committed < n.started) {
        const rec = run.recs[n.committed]!
        if (rec.outcome === null) break
        await this.#commit(rec)
        if (run.failed()) break
        n.committed++
        run.notify()
      }
    } catch (err) {
      run.fail(err)
    } finally {
      this.#committing = false
    }
  }

  async #commit(rec: CallRec): Promise<void> {
    const run = this.run
    // A call a decision denied (docs/spec/lifecycle.md §9, L17) has the decision's result (DENIED,
    // APPROVAL_EXPIRED, ABORTED_BEFORE_DISPATCH): no hook may turn it into BLOCKED, nor into ABORTED
    // when the hook is abandoned in the grace period (its body never ran, there is nothing to
    // redact). So it is not offered to tools/post-execute, like the denied pair of a needsApproval
    // call (scheduler.ts `#refusedPair`), which never was.
    // A call settled from a crash's log (restore-calls.ts: it ran beside a re-attached child) is not
    // offered either: nothing ran in this process, and the closers' results never were.
    const { outcome, contexts } = deniedByDecision(rec) || rec.restoredOutcome ? { outcome: rec.outcome!, contexts: [] } : await postExecute(rec, run.host)
    if (run.failed()) return
    rec.commitTried = true
    run.env.appendResult(rec.call, rec.callSeq!, outcome)
    rec.committed = true
    send(rec, { type: 'COMMIT', error: outcome.error })
    if (rec.concludeRequested) run.counts.concluded = true
    for (const m of contexts) {
      try {
        run.env.queueContext(m)
      } catch (err) {
        // A context the inbox refuses (a duplicate pending id, say) is the hook's bug, not the step's.
        run.host.report(err, 'tools/post-execute')
      }
    }
  }
}

/** The call's approval was decided `deny` (by a person, the clock, new input or a cancel). */
function deniedByDecision(rec: CallRec): boolean {
  return rec.approval?.decided?.decision.kind === 'deny'
}
