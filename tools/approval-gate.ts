/**
 * One step's approvals (lifecycle §9), as the tool scheduler (scheduler.ts) holds them: asking
 * (`needsApproval` for every call right after the assistant message; an `ask` verdict after its
 * call's `tool/call`), deciding (a person through the agent, the expiry timer, a steer, a cancel),
 * and parking (`step/parked` whenever only decisions are owed). The scheduler decides when a call
 * may start; this file owns the requests, their decisions, the one expiry timer and the parked
 * position. Every effect goes through `ApprovalEnv` (the driver's appends and status).
 */
import { denialCode, isProviderApproval, type ApprovalBy, type ApprovalDecision, type ToolErrorInfo } from '../events/index.js'
import type { CallHost } from './call-stages.js'
import type { CallRec } from './call-record.js'
import { errorOutcome, errorText, prepareCall } from './define.js'
import type { ApprovalEnv, ApprovalRun, ToolOutcome } from './types.js'

/**
 * Marks the function of the gate's expiry timer, so that timers that stand in for the clock
 * (re-execution fires the expiry when the recording has a `by: expired` decision next) can tell
 * it from a tool's timeout or a cancel's grace period.
 * @internal
 */
export const EXPIRY_TIMER: unique symbol = Symbol('turnlog.approvalExpiry')

/** What the gate needs of its scheduler run. */
export interface GateHost {
  readonly recs: readonly CallRec[]
  /** Wakes every wait of the run. */
  notify(): void
  /** The first waiting call when the step may park now (nothing runs, everything before it
   * committed, nothing commits), else null. */
  parkable(): CallRec | null
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

  supersede(): number {
    // detached (a disposed parked agent): the session stays parked and its log is closed; nothing is decided here
    if (this.#closed) return 0
    let n = 0
    for (const rec of this.#host.recs) {
      if (rec.approval !== null && rec.approval.decided === null) {
        this.#decide(rec, { kind: 'deny', reason: 'superseded by new input' }, { kind: 'superseded' })
        n++
      }
    }
    return n
  }

  /** A cancel: every open request is decided `by: canceled`, in model order (L17: no `step/end` while one is open). */
  cancelOpen(): void {
    // detached: a disposed parked agent's run may still wake (its signal aborts as the agent winds
    // down); the session stays parked (lifecycle §9) and its log is closed, so nothing is decided
    if (this.#closed) return
    for (const rec of this.#host.recs) {
      if (rec.approval !== null && rec.approval.decided === null) this.#decide(rec, { kind: 'deny' }, { kind: 'canceled' })
    }
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
    const { won, decision, by } = this.#env.claim(rec.approval!.id, wanted, wantedBy)
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
    const delay = Math.max(0, first - this.#env.now())
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
          this.#decide(rec, { kind: 'deny', reason: 'the approval expired' }, { kind: 'expired' })
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
    if (w === null) {
      if (this.#parked) {
        this.#parked = false
        this.#env.unpark()
      }
      return
    }
    if (this.#parked && !this.#decidedSinceParked) return
    const ids = this.open().map((o) => o.approvalId)
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
    if (this.#timer !== undefined) {
      this.#calls.env.clearTimeout(this.#timer)
      this.#timer = undefined
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
