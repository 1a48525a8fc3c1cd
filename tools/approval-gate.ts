/**
 * One step's approvals (docs/spec/lifecycle.md §9), as the tool scheduler (scheduler.ts) holds them: asking
 * (`needsApproval` for every call right after the assistant message; an `ask` verdict after its
 * call's `tool/call`), deciding (a person through the agent, the expiry timer, a steer, a cancel),
 * and parking (`step/parked` whenever only decisions are owed). The scheduler decides when a call
 * may start; this file owns the requests, their decisions, the one expiry timer and the parked
 * position. Every effect goes through `ApprovalEnv` (the driver's appends and status).
 *
 * Over ~400 lines (410), knowingly: asking, deciding and parking change the same per-step request
 * table; the expiry timer's handling is the next seam to split.
 */
import { denialCode, isProviderApproval, type ApprovalBy, type ApprovalDecision, type ToolErrorInfo } from '../events/index.js'
import type { CallHost } from './call-stages.js'
import type { CallRec } from './call-record.js'
import { errorOutcome, errorText, prepareCall } from './define.js'
import type { InputRounds } from './input-rounds.js'
import type { ApprovalEnv, ApprovalRun, OpenRound, ToolOutcome } from './types.js'
import type { InputAnswer, InputBy } from '../events/index.js'

import { EXPIRY_TIMER } from './expiry-timer.js'

/** The first retry of the gate's own decision after a claim fault (ms); it doubles per failure … */
const CLAIM_RETRY_FIRST_MS = 10
/** … up to this (ms): a store that stays broken is tried (and reported) every 2 s. */
const CLAIM_RETRY_MAX_MS = 2_000

/** What the gate needs of its scheduler run. */
export interface GateHost {
  readonly recs: readonly CallRec[]
  /** Wakes every wait of the run. */
  notify(): void
  /** The first waiting call when the step may park now (nothing runs, everything before it
   * committed, nothing commits), else null; undefined while the run cannot tell yet (its start loop
   * has not reached a wait): the parked position stays as it is. */
  parkable(): CallRec | null | undefined
}

export class ApprovalGate implements ApprovalRun {
  readonly #env: ApprovalEnv
  readonly #host: GateHost
  readonly #calls: CallHost
  #timer: unknown = undefined
  #parked = false
  /** A decision was appended since the last `step/parked` (a still parked step parks again). */
  #decidedSinceParked = false
  #closed = false
  /** Claims of the gate's own decisions (cancel, steer, expiry) that failed in a row: the backoff. */
  #claimFailures = 0
  /** A cancel's or a steer's decisions wait for this retry after a claim fault. */
  #retryTimer: unknown = undefined
  /** A steer superseded the open requests; some are still to be decided (a claim failed). */
  #superseding = false
  /** The step's input rounds (docs/spec/lifecycle.md §11), parked with the approvals; null without them. */
  rounds: InputRounds | null = null

  constructor(env: ApprovalEnv, host: GateHost, calls: CallHost) {
    this.#env = env
    this.#host = host
    this.#calls = calls
  }

  /**
   * A parked step restored from the log: it stands parked already (no second `step/parked`
   * unless a decision came since), and the expiry timer is armed from the logged `expiresAt`s (an
   * expiry passed while no process ran is decided at once).
   */
  restore(decidedSinceParked: boolean): void {
    this.#parked = true
    this.#decidedSinceParked = decidedSinceParked
    this.#env.parkedAlready()
    this.#arm()
  }

  get parked(): boolean {
    return this.#parked
  }

  /**
   * Evaluates `needsApproval` for every call in model order (each policy read inside a guard and
   * awaited within the cancel grace period) and requests the approvals, all before any call starts.
   * Stops at a cancel: the calls not yet asked about are then never started anyway.
   */
  async askAll(): Promise<void> {
    const env = this.#calls.env
    for (const rec of this.#host.recs) {
      if (env.signal.aborted) return
      // a tool that never asks costs no parse here (the call stage parses its arguments once, B5)
      const named = isProviderApproval(rec.call) ? undefined : env.tools.get(rec.call.name)
      if (named !== undefined && (named.needsApproval === undefined || named.needsApproval === false)) continue
      const prepared = prepareCall(rec.call, env.tools)
      if (prepared.problem !== undefined || prepared.tool === undefined) continue // fails anyway, asks nobody
      const tool = prepared.tool
      let needs: boolean
      try {
        const policy = tool.needsApproval
        if (policy === undefined || policy === false) continue
        if (policy === true) needs = true
        else if (typeof policy === 'function') {
          const ctx = { callId: rec.call.id, turn: env.turn, step: env.step, signal: env.signal }
          let answer: unknown
          try {
            answer = await this.#calls.within(Promise.resolve(policy(prepared.args, ctx)), 'needsApproval')
          } catch (err) {
            if (this.#calls.abandoned(err)) return
            throw err
          }
          if (typeof answer !== 'boolean') throw new TypeError(`needsApproval answered ${typeof answer}, not a boolean`)
          needs = answer
        } else throw new TypeError(`needsApproval is a ${typeof policy}, not a boolean or a function`)
      } catch (err) {
        this.#calls.report(err, 'needsApproval')
        rec.approvalProblem = { code: 'HOOK_ERROR', message: `Tool '${rec.call.name}' was not run: its needsApproval policy failed: ${errorText(err)}` }
        continue
      }
      if (!needs || env.signal.aborted) continue
      this.#request(rec, undefined)
    }
  }

  /** An `ask` verdict for a started call: the request comes right after its `tool/call`. */
  ask(rec: CallRec, question: string | undefined): void {
    this.#request(rec, question)
  }

  #request(rec: CallRec, question: string | undefined): void {
    let timeoutMs: number | undefined
    try {
      const t = rec.prepared?.tool ?? this.#calls.env.tools.get(rec.call.name)
      const ms = t?.approval?.timeoutMs
      timeoutMs = typeof ms === 'number' && ms > 0 && Number.isFinite(ms) ? ms : undefined
    } catch (err) {
      // an unreadable timeout: the request waits without one (reported)
      this.#calls.report(err, 'approval.timeoutMs')
    }
    const ask = rec.callSeq !== null
    const r = this.#env.request(rec.call, question, timeoutMs)
    rec.approval = { id: r.approvalId, ask, ...(r.expiresAt !== undefined ? { expiresAt: r.expiresAt } : {}), decided: null }
    this.#arm()
  }

  // ---------------------------------------------------------------- deciding

  decide(approvalId: string, decision: ApprovalDecision, by: ApprovalBy): 'decided' | 'lost' | 'unknown' | 'already-decided' {
    if (this.#closed) return 'unknown'
    const rec = this.#host.recs.find((r) => r.approval?.id === approvalId)
    if (rec === undefined) return 'unknown'
    if (rec.approval!.decided !== null) return 'already-decided'
    return this.#decide(rec, decision, by) ? 'decided' : 'lost'
  }

  /**
   * A steer: every open request is decided `deny` `by: superseded`. A claim that fails is reported
   * and retried after a backoff (the steer is already in the inbox: it must not be lost, and the
   * requests must not stay open). Returns how many requests it supersedes.
   */
  supersede(): number {
    // detached (a disposed parked agent): the session stays parked and its log is closed; nothing is decided here
    if (this.#closed) return 0
    const n = this.open().length
    if (n === 0) return 0
    this.#superseding = true
    if (this.#retryTimer === undefined) this.#ownDecisions('superseded')
    return n
  }

  /**
   * A cancel: every open request is decided `by: canceled`, in model order (L17: no `step/end`
   * while one is open). A claim that fails is reported and retried after a backoff; the
   * scheduler waits for the decisions before it closes the step. Never throws a claim error
   * (an append the log refuses still throws: the scheduler fails then).
   */
  cancelOpen(): void {
    // detached: a disposed parked agent's run may still wake (its signal aborts as the agent winds
    // down); the session stays parked (docs/spec/lifecycle.md §9) and its log is closed, so nothing is decided
    if (this.#closed) return
    this.#superseding = false // the cancel decides them instead
    this.rounds?.cancelOpen()
    if (this.#retryTimer !== undefined) return // a retry is due: it keeps the backoff
    this.#ownDecisions('canceled')
  }

  /** True while a request of the step is undecided or a round unanswered (never once detached: nothing decides them then). */
  hasOpen(): boolean {
    return !this.#closed && (this.#host.recs.some((r) => r.approval !== null && r.approval.decided === null) || this.rounds?.hasOpen() === true)
  }

  /** A round was asked or answered: a still parked step parks again, listing what is open now. */
  noteChange(): void {
    this.#decidedSinceParked = true
  }

  answer(requestId: string, answer: InputAnswer, by: InputBy): 'answered' | 'lost' | 'unknown' | 'already-answered' {
    return this.#closed || this.rounds === null ? 'unknown' : this.rounds.answer(requestId, answer, by)
  }

  openInputs(): OpenRound[] {
    return this.#closed || this.rounds === null ? [] : this.rounds.open()
  }

  /** A steer: every open round is answered `cancel` `by: superseded` (unless the rounds queue steers). */
  supersedeInputs(): number {
    if (this.#closed || this.rounds === null || this.rounds.onSteer === 'queue') return 0
    return this.rounds.supersede()
  }

  /** Decides the open requests for a cancel or a steer; at the first claim fault, stops and retries later. */
  #ownDecisions(kind: 'canceled' | 'superseded'): void {
    for (const rec of this.#host.recs) {
      if (rec.approval === null || rec.approval.decided !== null) continue
      const ok = kind === 'canceled'
        ? this.#decideOwn(rec, { kind: 'deny' }, { kind: 'canceled' }, 'approval cancel')
        : this.#decideOwn(rec, { kind: 'deny', reason: 'superseded by new input' }, { kind: 'superseded' }, 'approval supersede')
      if (!ok) {
        this.#retryLater()
        return
      }
    }
    if (kind === 'superseded') this.#superseding = false
  }

  /** The next try of a cancel's or a steer's decisions, after the backoff. */
  #retryLater(): void {
    const env = this.#calls.env
    if (this.#closed || this.#retryTimer !== undefined) return
    this.#retryTimer = env.setTimeout(() => {
      this.#retryTimer = undefined
      if (this.#closed) return
      try {
        if (env.signal.aborted) this.cancelOpen()
        else if (this.#superseding) this.#ownDecisions('superseded')
      } catch (err) {
        // the log refused the decision (a failed session): the scheduler's waits find out
        this.#calls.report(err, 'approval retry')
        this.#host.notify()
      }
    }, this.#retryDelay())
  }

  /** Backoff after `#claimFailures` failed claims: 10 ms doubling, capped at 2 s. */
  #retryDelay(): number {
    return Math.min(CLAIM_RETRY_MAX_MS, CLAIM_RETRY_FIRST_MS * 2 ** Math.min(16, Math.max(0, this.#claimFailures - 1)))
  }

  open(): Array<{ approvalId: string; callId: string; name: string; ask: boolean; provider?: true }> {
    const out: Array<{ approvalId: string; callId: string; name: string; ask: boolean; provider?: true }> = []
    for (const rec of this.#host.recs) {
      const a = rec.approval
      if (a !== null && a.decided === null) {
        out.push({ approvalId: a.id, callId: rec.call.id, name: rec.call.name, ask: a.ask, ...(isProviderApproval(rec.call) ? { provider: true as const } : {}) })
      }
    }
    return out
  }

  /** Claims, logs and applies a decision; the winner of the claim is what is logged. Returns whether ours won. */
  #decide(rec: CallRec, wanted: ApprovalDecision, wantedBy: ApprovalBy): boolean {
    // a throw from either: nothing changed
    return this.#log(rec, this.#env.claim(rec.approval!.id, wanted, wantedBy))
  }

  /**
   * The gate's own decision (a cancel's, a steer's, an expiry's): a claim that fails (a store
   * fault) is reported — nobody else would hear of it — and the request stays open for a retry;
   * false then. An append the log refuses throws.
   */
  #decideOwn(rec: CallRec, wanted: ApprovalDecision, wantedBy: ApprovalBy, where: string): boolean {
    let claimed: ReturnType<ApprovalEnv['claim']>
    try {
      claimed = this.#env.claim(rec.approval!.id, wanted, wantedBy)
    } catch (err) {
      this.#claimFailures++
      this.#calls.report(err, where)
      return false
    }
    this.#claimFailures = 0
    this.#log(rec, claimed)
    return true
  }

  #log(rec: CallRec, claimed: ReturnType<ApprovalEnv['claim']>): boolean {
    const { won, decision, by } = claimed
    this.#env.appendDecision(rec.requested, rec.approval!.id, decision, by)
    rec.approval!.decided = { decision, by }
    if (decision.kind === 'approve' && decision.arguments !== undefined && !rec.approval!.ask) {
      rec.call = { ...rec.call, arguments: decision.arguments }
    }
    this.#decidedSinceParked = true
    this.#arm()
    this.#host.notify()
    return won
  }

  // ---------------------------------------------------------------- expiry: one timer

  /** Arms the one timer for the earliest expiry among the open requests (or none). */
  #arm(): void {
    const env = this.#calls.env
    if (this.#timer !== undefined) {
      env.clearTimeout(this.#timer)
      this.#timer = undefined
    }
    if (this.#closed) return
    let first = Infinity
    for (const rec of this.#host.recs) {
      const a = rec.approval
      if (a !== null && a.decided === null && a.expiresAt !== undefined && a.expiresAt < first) first = a.expiresAt
    }
    if (first === Infinity) return
    // after a failed claim the expiry is tried again no sooner than the backoff (a due expiry
    // would otherwise fire at once, again and again)
    const due = Math.max(0, first - this.#env.now())
    const delay = this.#claimFailures > 0 ? Math.max(due, this.#retryDelay()) : due
    const fire = Object.assign(() => {
      this.#timer = undefined
      this.#expire()
    }, { [EXPIRY_TIMER]: true as const })
    this.#timer = env.setTimeout(fire, delay)
  }

  #expire(): void {
    if (this.#closed) return
    const now = this.#env.now()
    let any = false
    for (const rec of this.#host.recs) {
      const a = rec.approval
      if (a !== null && a.decided === null && a.expiresAt !== undefined && a.expiresAt <= now) {
        try {
          if (!this.#decideOwn(rec, { kind: 'deny', reason: 'the approval expired' }, { kind: 'expired' }, 'approval expiry')) {
            this.#arm() // the claim failed (reported): tried again after the backoff
            return
          }
          any = true
        } catch (err) {
          // the log refused it (a closed session): nothing was decided
          this.#calls.report(err, 'approval expiry')
          return
        }
      }
    }
    if (!any) this.#arm() // the timer fired before the clock reached the expiry
  }

  // ---------------------------------------------------------------- parking

  /**
   * Brings the parked position up to date: parks when only decisions are owed (again after a
   * decision that left the step waiting, so the log's last `step/parked` lists what is open),
   * unparks when the step can go on. Idempotent; every wait of the run calls it.
   */
  refresh(): void {
    if (this.#closed) return
    const w = this.#host.parkable()
    if (w === undefined) return
    if (w === null) {
      if (this.#parked) {
        this.#parked = false
        this.#env.unpark()
      }
      return
    }
    if (this.#parked && !this.#decidedSinceParked) return
    const ids = [...this.open().map((o) => o.approvalId), ...(this.rounds?.openIds() ?? [])]
    this.#env.park(ids)
    this.#parked = true
    this.#decidedSinceParked = false
  }

  /** The run ends: no timer, not parked. */
  close(): void {
    if (this.#parked) {
      this.#parked = false
      this.#env.unpark()
    }
    this.detach()
  }

  detach(): void {
    this.#closed = true
    this.rounds?.detach()
    if (this.#timer !== undefined) {
      this.#calls.env.clearTimeout(this.#timer)
      this.#timer = undefined
    }
    if (this.#retryTimer !== undefined) {
      this.#calls.env.clearTimeout(this.#retryTimer)
      this.#retryTimer = undefined
    }
  }
}

/** The result of a denied call (by a person, the clock, new input, or a cancel). */
export function denialOutcome(name: string, decision: ApprovalDecision, by: ApprovalBy): ToolOutcome {
  const e = denialError(name, decision, by)
  return errorOutcome(e.code, e.message)
}

export function denialError(name: string, decision: ApprovalDecision, by: ApprovalBy): ToolErrorInfo {
  const code = denialCode(by)
  const reason = decision.kind === 'deny' && decision.reason !== undefined && decision.reason !== '' ? decision.reason : null
  switch (by.kind) {
    case 'expired':
      return { code, message: `Tool '${name}' was not run: its approval expired before anyone decided.` }
    case 'canceled':
      return { code, message: `Tool '${name}' was not started: the turn was cancelled while it waited for approval.` }
    case 'superseded':
      return { code, message: `Tool '${name}' was denied: superseded by new input.` }
    case 'user':
      return { code, message: `Tool '${name}' was denied${reason ? `: ${reason}` : ' by a person.'}` }
  }
}
