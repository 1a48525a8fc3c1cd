/**
 * The tool scheduler (docs/spec/lifecycle.md §5): runs one step's tool calls in model order.
 *
 * - An `exclusive` call is a barrier: it starts when every earlier call has committed, and nothing
 *   after it starts before it commits.
 * - `parallel` calls fill a rolling pool of `maxParallelToolCalls` slots; a slot is held from the
 *   call's start (its `tool/call`) until it settles, and frees for the next call at once.
 * - Each call is classified again right before it starts; one that is no longer parallel stops
 *   the filling, the pool drains, and it becomes the next barrier.
 * - At start: `tool/call`; then `tools/pre-execute`, serially in model order; then the body,
 *   wrapped by `tools/execute`, concurrently (with its timeout).
 * - Whenever the next call in model order has settled: `tools/post-execute`, `tool/result`, its
 *   additional contexts queued. Results and contexts are therefore in model order.
 *
 * Every outcome is a result; nothing is thrown out of the step except a refused option or a log
 * that refuses even the closing results (see `failOut`). The per-call machine
 * (`call-machine.ts`) decides; this file schedules and commits; the stages that run user code
 * (pre-execute, the body, post-execute) are in `call-stages.ts`, a call's record in `call-record.ts`,
 * the approval gate in approval-gate.ts, the restore in restore-calls.ts, the commit loop in
 * commit-loop.ts (sharing the run's counters), a failed run's closing results in close-out.ts.
 * Over ~400 lines (492), knowingly for now: what is left is the one `ToolRun` whose fill, start
 * and cancel paths read the same private counters and pool (the approvals and the input rounds
 * are already apart, approval-gate.ts and input-rounds.ts); the next seam is the cancel path.
 */
import type { ToolCallBlock, ToolErrorInfo } from '../events/index.js'
import { ApprovalGate, denialError } from './approval-gate.js'
import { closeOut } from './close-out.js'
import { CLIENT_KEY, InputRounds, afterRound, throughRounds, type RoundRun } from './input-rounds.js'
import { continuing, restoreRecs } from './restore-calls.js'
import type { PreVerdict } from './call-machine.js'
import { newCallRec, send, type CallRec } from './call-record.js'
import { CommitLoop, type RunCounts } from './commit-loop.js'
import { callHost, preExecute, runBody, type CallHost } from './call-stages.js'
import { classifyPrepared } from './classify.js'
import { errorOutcome, errorText, prepareCall, type PreparedCall } from './define.js'
import { assertMaxParallelToolCalls } from './pool-size.js'
import type { ToolEnv, ToolOutcome, ToolRunResult } from './types.js'
import { refusedOutcome } from './refused.js'

/**
 * Runs the step's tool calls (in model order) to completion: every call that gets a `tool/call`
 * gets exactly one `tool/result` (L5), both in model order (L6). Resolves when every result is
 * committed. Rejects only with `INVALID_OPTION` (a bad `maxParallelToolCalls`, before anything is
 * appended) or, after a scheduler failure, when the log refuses even the closing results.
 */
export async function runToolCalls(calls: readonly ToolCallBlock[], env: ToolEnv): Promise<ToolRunResult> {
  assertMaxParallelToolCalls(env.maxParallelToolCalls)
  return new ToolRun(calls, env).run()
}

/** A client tool's one round (its `input.timeoutMs` read inside a guard: an unreadable one is none). */
function clientRound(rec: CallRec): unknown {
  let ms: unknown
  try {
    ms = rec.prepared!.tool!.input?.timeoutMs
  } catch {
    ms = undefined
  }
  return { requests: { [CLIENT_KEY]: { kind: 'client' } }, ...(typeof ms === 'number' && ms > 0 && Number.isFinite(ms) ? { expiresInMs: ms } : {}) }
}

class ToolRun {
  readonly #env: ToolEnv
  readonly #recs: CallRec[]
  readonly #cap: number
  /** The counters the start loop and the commit loop share (commit-loop.ts). */
  readonly #n: RunCounts = { started: 0, committed: 0, inFlight: 0, concluded: false }
  /** Commits settled calls in model order (commit-loop.ts). */
  readonly #commits: CommitLoop
  #failure: { error: unknown } | null = null
  /** After a scheduler failure: late settlements and commits are ignored. */
  #dead = false
  /** The tail of the serial pre-execute chain. */
  #preChain: Promise<void> = Promise.resolve()
  #waiters: Array<() => void> = []
  /** The env's guards and the signals of the bodies running now (call-stages.ts). */
  readonly #host: CallHost
  /** The step's approvals (approval-gate.ts); null without `env.approvals`. */
  readonly #gate: ApprovalGate | null
  /** What a call's input rounds need of the run (input-rounds.ts). */
  readonly #roundRun: RoundRun
  /**
   * While the start loop waits: the condition it waits on (true while it still cannot start the
   * next call). The step parks only when this holds (docs/spec/lifecycle.md §9, §11): a start loop
   * about to start a call never stands parked.
   */
  #startBlocked: (() => boolean) | null = null

  constructor(calls: readonly ToolCallBlock[], env: ToolEnv) {
    this.#env = env
    this.#host = callHost(env)
    this.#cap = env.maxParallelToolCalls
    this.#recs = calls.map((call, index) => newCallRec(call, index))
    const run = this
    this.#commits = new CommitLoop({
      recs: this.#recs, env, host: this.#host, counts: this.#n,
      failed: () => run.#failure !== null,
      fail: (err) => run.#fail(err),
      notify: () => run.#notify(),
    })
    this.#gate = env.approvals
      ? new ApprovalGate(env.approvals, { recs: this.#recs, notify: () => this.#notify(), parkable: () => this.#parkable() }, this.#host)
      : null
    const gate = this.#gate
    if (gate !== null && env.approvals!.inputs !== undefined) {
      gate.rounds = new InputRounds(env.approvals!.inputs, {
        recs: this.#recs, notify: () => this.#notify(), changed: () => gate.noteChange(), now: () => env.approvals!.now(),
      }, this.#host)
    }
    this.#roundRun = {
      rounds: gate?.rounds ?? null,
      calls: this.#host,
      wait: () => this.#wait(),
      dead: () => this.#dead,
      durable: () => env.approvals?.durable() ?? Promise.resolve(),
    }
    if (env.restored !== undefined) {
      const at = restoreRecs(this.#recs, env.restored.calls, env.tools)
      this.#n.started = at.started
      this.#n.committed = at.committed
      this.#n.inFlight = at.inFlight
    }
  }


  async run(): Promise<ToolRunResult> {
    const env = this.#env
    // One listener on the turn's signal for the whole run (not one per body): the cancel aborts
    // every running body's own signal with the cause.
    const onAbort = (): void => {
      for (const c of this.#host.active) c.abort(env.signal.reason)
      this.#notify()
    }
    env.signal.addEventListener('abort', onAbort)
    try {
      if (this.#gate !== null) {
        env.approvals!.attach(this.#gate)
        if (env.restored !== undefined) {
          if (env.restored.parked !== false) this.#gate.restore(env.restored.decidedSinceParked)
        } else {
          // docs/spec/lifecycle.md §9: every needsApproval question of the step is asked before any call starts
          await this.#gate.askAll()
        }
      }
      // restored calls continue from their verdict (restore-calls.ts)
      for (const { rec, verdict } of env.restored !== undefined ? continuing(this.#recs, env.restored.calls) : []) {
        let known!: () => void
        rec.verdict = new Promise<void>((resolve) => (known = resolve))
        void this.#continueCall(rec, verdict, known).catch((err: unknown) => this.#fail(err)).finally(known)
      }
      // restored rounds (docs/spec/lifecycle.md §11): wait for their answer, or go on with the logged one
      if (env.restored !== undefined) {
        env.restored.calls.forEach((c, i) => {
          const rec = this.#recs[i]!
          if (c.input === undefined || rec.committed || rec.callSeq === null) return
          const client = rec.prepared?.tool?.client === true
          if (this.#roundRun.rounds === null) return
          this.#roundRun.rounds.restore(rec, c.input, client)
          void afterRound(rec, this.#roundRun)
            .then((o) => throughRounds(rec, o, this.#roundRun, client))
            .then((o) => this.#settle(rec, o))
            .catch((err: unknown) => this.#fail(err))
        })
        this.#commits.pump() // restored §8 results commit in their place
      }
      await this.#schedule()
      if (this.#failure) throw this.#failure.error
    } catch (err) {
      this.#failOut(err)
    } finally {
      env.signal.removeEventListener('abort', onAbort)
      if (this.#gate !== null) {
        this.#gate.close()
        try {
          env.approvals!.attach(null)
        } catch (err) {
          this.#host.report(err, 'tools/scheduler')
        }
      }
    }
    return this.#result()
  }

  #result(): ToolRunResult {
    const { signal } = this.#env
    return signal.aborted ? { concluded: this.#n.concluded, aborted: true, cause: signal.reason as ToolRunResult['cause'] } : { concluded: this.#n.concluded, aborted: false }
  }

  // ---------------------------------------------------------------- change notification

  #notify(): void {
    const w = this.#waiters
    this.#waiters = []
    for (const f of w) f()
  }

  /** Resolves at the next settlement, commit, cancel or failure. */
  #changed(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  #stopped(): boolean {
    return this.#failure !== null || this.#env.signal.aborted
  }

  /**
   * Waits for the next change, keeping the approvals' parked position up to date (parked when
   * only decisions are owed; running again when the step can go on). After a cancel, every open
   * request is decided `by: canceled` first, so nothing waits for a decision that will not come.
   */
  async #wait(): Promise<void> {
    const gate = this.#gate
    if (gate === null) return this.#changed()
    // Listen before deciding: a decision made here (a cancel's) is itself the change some caller
    // waits for (an `ask` call's decision). Registered after it, this wait missed its own
    // notification and nothing else would come: the call never got its result (fuzzer STUCK).
    const changed = this.#changed()
    if (this.#env.signal.aborted && !this.#dead) gate.cancelOpen()
    gate.refresh()
    await changed
    if (this.#env.signal.aborted && !this.#dead) gate.cancelOpen()
    gate.refresh()
  }

  /**
   * The first call waiting for a person, when only people are owed (docs/spec/lifecycle.md §9 "Parked", §11):
   * the start loop cannot start its next call, every running call waits for a decision or an
   * answer, and the next call in model order cannot commit.
   */
  #parkable(): CallRec | null | undefined {
    if (this.#commits.committing || this.#failure !== null || this.#dead || this.#env.signal.aborted) return null
    const blocked = this.#startBlocked
    // the start loop is starting a call or waiting on its verdict: no change of the parked position
    if (blocked === null) return undefined
    if (!blocked()) return null
    let first: CallRec | null = null
    let waiting = 0
    for (const r of this.#recs) {
      const open = (r.approval !== null && r.approval.decided === null) || (r.input !== null && r.input.answered === null)
      if (!open) continue
      first ??= r
      if (r.callSeq !== null && !r.committed && r.outcome === null) waiting++
    }
    if (first === null || this.#n.inFlight !== waiting) return null
    const next = this.#recs[this.#n.committed]
    if (this.#n.committed < this.#n.started && next !== undefined && next.outcome !== null) return null
    return first
  }

  /**
   * A wait of the start loop while `blocked` holds (the step may park then). The condition stays
   * in place after the wait (it reads the current state, so it stays true exactly while the loop
   * would wait again) until the loop starts a call (`#start`).
   */
  async #startWait(blocked: () => boolean): Promise<void> {
    this.#startBlocked = blocked
    await this.#wait()
  }

  // ---------------------------------------------------------------- the start loop

  async #schedule(): Promise<void> {
    const recs = this.#recs
    // A restored asking call is the barrier it was when it asked: nothing after it starts before
    // its decision is committed (L17; found by re-executing a parked log resumed by a new process).
    // A restored call re-attaching its child is a barrier too (a subagent call is exclusive).
    for (const rec of recs) {
      if (rec.committed || rec.callSeq === null) continue
      while (this.#n.committed <= rec.index && !this.#failure) await this.#startWait(() => this.#n.committed <= rec.index)
    }
    while (this.#n.started < recs.length && !this.#stopped()) {
      const rec = recs[this.#n.started]!
      if (rec.approval !== null) {
        // A needsApproval call holds its place as a barrier: the calls before it commit, then it
        // waits for its decision (parked when nothing else is owed; docs/spec/lifecycle.md §9 "Order").
        const approval = rec.approval
        const undecided = (): boolean => this.#n.committed < this.#n.started || approval.decided === null
        while (undecided() && !this.#stopped()) await this.#startWait(undecided)
        if (this.#stopped()) break
        // decided: the step goes on (a decision made right after the park woke no wait to unpark it)
        this.#gate?.refresh()
        const d = rec.approval.decided!
        if (d.decision.kind === 'deny') {
          this.#refusedPair(rec, denialError(rec.call.name, d.decision, d.by))
          this.#n.started++
          this.#n.committed++
          this.#notify()
          continue
        }
        // approved: it runs alone, with the approved arguments
        send(rec, { type: 'CLASSIFY', mode: 'exclusive' })
        this.#start(rec, prepareCall(rec.call, this.#env.tools))
        while (this.#n.committed <= rec.index && !this.#failure) await this.#startWait(() => this.#n.committed <= rec.index)
        continue
      }
      // Classified right before it starts: the registry and the classifier are read now.
      const prepared = prepareCall(rec.call, this.#env.tools)
      const mode = classifyPrepared(prepared)
      send(rec, { type: 'CLASSIFY', mode })
      if (mode === 'parallel') {
        if (this.#n.inFlight >= this.#cap) {
          // Pool full: wait for a slot, then classify again.
          send(rec, { type: 'DEFER' })
          await this.#startWait(() => this.#n.inFlight >= this.#cap)
          continue
        }
        this.#start(rec, prepared)
        if (this.#gate !== null && this.#env.approvals!.askable) {
          // Its verdict may be `ask`: no later call starts before it is known (L17), and an asking
          // call is a barrier until its decision is committed.
          await rec.verdict
          if (rec.approval !== null) while (this.#n.committed <= rec.index && !this.#failure) await this.#startWait(() => this.#n.committed <= rec.index)
        }
        continue
      }
      // A barrier: the pool stops filling and drains (every earlier call commits) …
      while (this.#n.committed < this.#n.started && !this.#failure) await this.#startWait(() => this.#n.committed < this.#n.started)
      if (this.#stopped()) {
        send(rec, { type: 'DEFER' })
        break
      }
      // … then it runs alone (resolved again: the registry may have changed during the drain) …
      this.#start(rec, prepareCall(rec.call, this.#env.tools))
      // … and nothing starts before it commits.
      while (this.#n.committed <= rec.index && !this.#failure) await this.#startWait(() => this.#n.committed <= rec.index)
    }
    // Cancelled (or all started): open requests are decided `by: canceled`, the started calls
    // drain and commit in model order …
    if (this.#env.signal.aborted && this.#failure === null) this.#gate?.cancelOpen()
    // … a claim that failed is retried by the gate (after a backoff): the step waits for every
    // decision (L17: no result, no `step/end` while a request is open) …
    while (this.#env.signal.aborted && this.#gate?.hasOpen() === true && !this.#failure) await this.#wait()
    while (this.#n.committed < this.#n.started && !this.#failure) await this.#startWait(() => this.#n.committed < this.#n.started)
    if (this.#failure) return
    // … and the rest get a synthetic pair.
    for (let i = this.#n.started; i < recs.length; i++) this.#notDispatched(recs[i]!, 'the turn was cancelled before it started')
  }

  #start(rec: CallRec, prepared: PreparedCall): void {
    this.#startBlocked = null
    // a call past a toolCalls budget is refused like a failed needsApproval: its tool/call, then its
    // BUDGET result in model order, no pre-execute and no body (docs/spec/lifecycle.md §10)
    if (rec.approvalProblem === null) rec.approvalProblem = this.#env.budgetRefusal?.(rec.call.name) ?? null
    const ev = this.#env.appendCall(rec.call) // a throw: not started, the scheduler fails
    rec.callSeq = ev.seq
    rec.prepared = prepared
    send(rec, { type: 'START' })
    this.#n.started++
    this.#n.inFlight++
    let known!: () => void
    rec.verdict = new Promise<void>((resolve) => (known = resolve))
    void this.#runCall(rec, known).catch((err: unknown) => this.#fail(err)).finally(known)
  }

  /** A call denied before it started: its `tool/call` (the requested arguments) and its result (L17). */
  #refusedPair(rec: CallRec, error: ToolErrorInfo): void {
    send(rec, { type: 'REFUSED', error })
    const ev = this.#env.appendCall(rec.requested)
    rec.callSeq = ev.seq
    rec.commitTried = true
    this.#env.appendResult(rec.requested, ev.seq, refusedOutcome(rec, error))
    rec.committed = true
  }

  #notDispatched(rec: CallRec, why: string): void {
    const d = rec.approval?.decided
    if (d != null && d.decision.kind === 'deny') {
      this.#refusedPair(rec, denialError(rec.call.name, d.decision, d.by))
      return
    }
    send(rec, { type: 'NOT_DISPATCHED' })
    const ev = this.#env.appendCall(rec.call)
    rec.callSeq = ev.seq
    rec.commitTried = true
    this.#env.appendResult(rec.call, ev.seq, errorOutcome('ABORTED_BEFORE_DISPATCH', `Tool '${rec.call.name}' was not started: ${why}.`))
    rec.committed = true
  }

  // ---------------------------------------------------------------- one call

  async #runCall(rec: CallRec, verdictKnown: () => void): Promise<void> {
    let verdict: PreVerdict
    if (rec.approvalProblem !== null) {
      // its needsApproval policy failed: no pre-execute, no body (docs/spec/lifecycle.md §9)
      verdict = { kind: 'refused', error: rec.approvalProblem }
    } else {
      // tools/pre-execute, serially in model order: wait for the previous call's pre stage.
      const previous = this.#preChain
      let release!: () => void
      this.#preChain = new Promise<void>((resolve) => (release = resolve))
      try {
        await previous
        verdict = await preExecute(rec, this.#host)
      } finally {
        release()
      }
    }
    if (this.#dead) return
    await this.#continueCall(rec, verdict, verdictKnown)
  }

  /** After the pre-execute verdict: the approval an `ask` waits for, then the body or the refusal. */
  async #continueCall(rec: CallRec, verdict: PreVerdict, verdictKnown: () => void): Promise<void> {
    if (verdict.kind === 'ask' && this.#gate !== null) verdict = await this.#asked(rec, verdict.question, verdictKnown)
    verdictKnown()
    if (this.#dead) return
    send(rec, { type: 'PRE_DONE', verdict, problem: rec.prepared!.problem })
    if (rec.machine.state !== 'executing') {
      const e = rec.machine.error!
      this.#settle(rec, errorOutcome(e.code, e.message))
      return
    }
    // a client tool has no body here: its one round is the client's (docs/spec/lifecycle.md §11)
    const client = rec.prepared!.tool!.client === true
    const durable = !client && this.#env.approvals !== undefined ? this.#env.approvals.durable() : null
    if (durable !== null) {
      // R10, §8: a body runs only once its tool/call is durable, so a crash from here on leaves a
      // started call (repair: TOOL_OUTCOME_UNKNOWN) and never an approval that a resume runs again;
      // a crash before it leaves no tool/call, and repair's TOOL_NOT_STARTED is then true (a body
      // that started before its call was durable made it a lie the model would act on)
      try {
        await durable
      } catch (err) {
        this.#settle(rec, errorOutcome('ABORTED', `Tool '${rec.call.name}' was not run: its tool/call could not be made durable (${errorText(err)}).`))
        return
      }
      if (this.#dead) return
    }
    const first = client ? { content: [], required: clientRound(rec) } : await runBody(rec, this.#host)
    const outcome = await throughRounds(rec, first, this.#roundRun, client)
    this.#settle(rec, outcome)
  }

  /**
   * An `ask` verdict (docs/spec/lifecycle.md §9): the request right after the call's `tool/call`, then the body
   * waits for the decision. A call a person already approved is not asked again.
   */
  async #asked(rec: CallRec, question: string | undefined, verdictKnown: () => void): Promise<PreVerdict> {
    if (rec.approval !== null && !rec.approval.ask) {
      // a needsApproval call runs only once approved: its pre-execute's `ask` is answered already
      return rec.approval.decided?.decision.kind === 'approve' ? { kind: 'allow' } : { kind: 'cancelled' }
    }
    if (rec.approval === null) this.#gate!.ask(rec, question)
    verdictKnown()
    const a = rec.approval!
    while (a.decided === null && !this.#dead) await this.#wait()
    if (a.decided === null) return { kind: 'cancelled' }
    const d = a.decided
    if (d.decision.kind === 'deny') return { kind: 'refused', error: denialError(rec.call.name, d.decision, d.by) }
    return this.#env.signal.aborted ? { kind: 'cancelled' } : { kind: 'allow' }
  }

  #settle(rec: CallRec, outcome: ToolOutcome): void {
    if (this.#dead) return
    rec.outcome = outcome
    send(rec, { type: 'SETTLE', error: outcome.error })
    this.#n.inFlight--
    this.#notify()
    this.#commits.pump()
  }

  // ---------------------------------------------------------------- failure

  #fail(err: unknown): void {
    if (this.#failure === null) this.#failure = { error: err }
    this.#notify()
  }

  /**
   * The scheduler itself failed (an append threw, or a bug). No call starts any more; in model
   * order, every started call without a result gets one — its own outcome if it settled and was
   * never offered to the log, else `TOOL_OUTCOME_UNKNOWN` (its signal aborts: it is abandoned) —
   * and every call that never started gets a synthetic `ABORTED_BEFORE_DISPATCH` pair. The
   * failure is reported; the step goes on. Only if the log refuses these closing appends too is
   * the original error thrown (there is nothing left to write the results to).
   */
  #failOut(err: unknown): void {
    // L17: no result for a call whose request is open (best effort: the log may refuse it too)
    try {
      this.#gate?.cancelOpen()
    } catch {
      // closed below as well as the log allows
    }
    this.#dead = true
    // A failure thrown out of the start loop (a refused `tool/call`) did not go through #fail: note
    // it, so that a commit waiting for its post-execute stops instead of appending a second result
    // for the call closed below (L5).
    if (this.#failure === null) this.#failure = { error: err }
    this.#host.report(err, 'tools/scheduler')
    if (!closeOut(this.#recs, err, this.#env, (rec, why) => this.#notDispatched(rec, why))) throw err
  }
}
