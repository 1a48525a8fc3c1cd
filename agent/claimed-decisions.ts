/**
 * Decisions through the store's side channel (docs/spec/lifecycle.md §9; stores/types.ts `DecisionChannel`):
 * when the agent's store has one (JSONL), every decision the agent makes is claimed there first
 * (the claim decides which decision wins, across processes), and the decisions other processes
 * claimed while this agent owns the session are picked up and logged once.
 *
 * A claimed decision is applied to the running step when a step waits for it; until then (a
 * restored parked step not yet woken) it is held and applied when the step attaches. One that the
 * log already decided (this agent's own claim, seen again by the watch) is dropped.
 *
 * Answers of input rounds (docs/spec/lifecycle.md §11) travel the same way when the channel carries them
 * (`claimAnswer`, the watch's `onAnswer`): claimed first, held until the step waits for the round,
 * then logged once, and the body's next round runs.
 */
import type { ApprovalBy, ApprovalDecision, InputAnswer, InputBy } from '../events/index.js'
import type { ApprovalsState } from '../reducers/approvals.js'
import type { InputsState } from '../reducers/inputs.js'
import type { AnswerRecord, DecisionChannel, DecisionRecord, DecisionWatch } from './persistence.js'
import type { ApprovalRun } from '../tools/types.js'

/** What the channel needs of its agent. */
export interface ClaimHost {
  readonly approvalsState: ApprovalsState
  readonly inputsState?: InputsState
  readonly approvalRun: ApprovalRun | null
  now(): number
  reportError(error: unknown, where: string): void
  /** Releases `whenSettled` waiters when the status satisfies them (after a held decision was tried). */
  settleStatus?(): void
}

/** The winning decision of a claim, and whether it was this one. */
export interface Claimed {
  won: boolean
  decision: ApprovalDecision
  by: ApprovalBy
}

export class ClaimedDecisions {
  readonly #host: ClaimHost
  #channel: DecisionChannel | null = null
  #watch: DecisionWatch | null = null
  #keepAlive = false
  /** Created by the first watched decision: an agent without a decision channel holds no map (benchmark B6). */
  #pending: Map<string, DecisionRecord> | null = null
  /** Answers claimed elsewhere that no step waits for yet (created by the first one). */
  #answers: Map<string, AnswerRecord> | null = null
  /** A held decision was logged into the parked step, which has not gone on (or parked again) yet. */
  #applied = false

  constructor(host: ClaimHost) {
    this.#host = host
  }

  /** The store's write handle has a channel: watch it (the claims there already come first). */
  attach(channel: DecisionChannel): void {
    this.#channel = channel
    this.#watch = channel.watch(
      (rec) => {
        ;(this.#pending ??= new Map()).set(rec.approvalId, rec)
        this.deliver()
      },
      (err) => this.#host.reportError(err, 'decisions'),
      (rec) => {
        ;(this.#answers ??= new Map()).set(rec.requestId, rec)
        this.deliver()
      },
    )
    this.#watch.keepAlive(this.#keepAlive)
  }

  /**
   * While parked the watch keeps the process alive: the agent waits for a decision from another
   * process (an app that does not want to wait disposes the agent; the session stays parked).
   */
  keepAlive(on: boolean): void {
    this.#applied = false // the step parked again or went on after what was applied
    this.#keepAlive = on
    this.#watch?.keepAlive(on)
  }

  /**
   * Claims a decision before it is logged. Without a channel (memory store, no store) the claim
   * wins. A claim that lost returns the winner, which the caller logs instead. Throws the
   * channel's coded I/O error (nothing is decided then).
   */
  claim(approvalId: string, decision: ApprovalDecision, by: ApprovalBy): Claimed {
    const ch = this.#channel
    if (ch === null) return { won: true, decision, by }
    const winner = ch.claim({ approvalId, decision, by, time: this.#host.now() })
    return winner === null ? { won: true, decision, by } : { won: false, decision: winner.decision, by: winner.by }
  }

  /** Claims an answer before it is logged, as `claim` does a decision. */
  claimAnswer(requestId: string, answer: InputAnswer, by: InputBy): { won: boolean; answer: InputAnswer; by: InputBy } {
    const ch = this.#channel
    if (ch === null || ch.claimAnswer === undefined) return { won: true, answer, by }
    const winner = ch.claimAnswer({ requestId, answer, by, time: this.#host.now() })
    return winner === null ? { won: true, answer, by } : { won: false, answer: winner.answer, by: winner.by }
  }

  /**
   * True when a held decision is for an approval the log holds open: the parked step logs it in a
   * moment (`deliverSoon`), so the agent does not settle `whenSettled` as parked meanwhile.
   */
  deliverable(): boolean {
    if (this.#applied) return true
    const answers = this.#answers
    const inputs = this.#host.inputsState
    if (answers !== null && answers.size > 0 && inputs !== undefined && inputs.open.some((id) => answers.has(id))) return true
    const pending = this.#pending
    if (pending === null || pending.size === 0) return false
    const s = this.#host.approvalsState
    return s.open.some((id) => pending.has(id))
  }

  /** Applies the held decisions whose step waits for them now; drops the ones the log decided. */
  deliver(): void {
    let tried = this.#deliverAnswers()
    const pending = this.#pending
    if (pending === null) {
      if (tried) this.#host.settleStatus?.()
      return
    }
    for (const [id, rec] of [...pending]) {
      const s = this.#host.approvalsState
      const r = Object.hasOwn(s.byId, id) ? s.byId[id]! : undefined
      if (r === undefined || r.decision !== null) {
        pending.delete(id)
        continue
      }
      const run = this.#host.approvalRun
      if (run === null || !run.open().some((o) => o.approvalId === id)) continue // held until a step waits for it
      pending.delete(id)
      tried = true
      try {
        const r = run.decide(id, rec.decision, rec.by) // claims again: finds this record, logs it
        // logged: the step goes on (or parks again) in a moment; until then it is not settled
        if (r === 'decided' || r === 'lost') this.#applied = true
      } catch (err) {
        this.#host.reportError(err, 'decisions')
      }
    }
    // a park that held back `whenSettled` for these: release it if the step is still parked
    if (tried) this.#host.settleStatus?.()
  }

  /** Applies the held answers whose round a step waits for now; drops the ones the log answered. True when one was tried. */
  #deliverAnswers(): boolean {
    const answers = this.#answers
    const s = this.#host.inputsState
    if (answers === null || answers.size === 0 || s === undefined) return false
    let tried = false
    for (const [id, rec] of [...answers]) {
      const r = Object.hasOwn(s.byId, id) ? s.byId[id]! : undefined
      if (r === undefined || r.answer !== null) {
        // not asked in this session (yet: a round is asked before its answer can exist), or answered
        if (r !== undefined) answers.delete(id)
        continue
      }
      const run = this.#host.approvalRun
      if (run === null || run.answer === undefined || !(run.openInputs?.() ?? []).some((o) => o.requestId === id)) continue
      answers.delete(id)
      tried = true
      try {
        const x = run.answer(id, rec.answer, rec.by) // claims again: finds this record, logs it
        if (x === 'answered' || x === 'lost') this.#applied = true
      } catch (err) {
        this.#host.reportError(err, 'decisions')
      }
    }
    return tried
  }

  /** Held decisions are delivered after the current tick (a step that just attached or parked). */
  deliverSoon(): void {
    if ((this.#pending !== null && this.#pending.size > 0) || (this.#answers !== null && this.#answers.size > 0)) queueMicrotask(() => this.deliver())
  }

  close(): void {
    this.#watch?.stop()
    this.#watch = null
    this.#channel = null
  }
}
