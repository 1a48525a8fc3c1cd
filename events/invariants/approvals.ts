/**
 * Approvals: L17 (requests, decisions and the calls they gate) and L18 (where `step/parked` may
 * stand and what may follow it), docs/spec/lifecycle.md §9. State is per open step (dropped at the next
 * `step/start`) plus the set of approval ids of the session (an id is requested once).
 *
 * A request made before its call's `tool/call` is a `needsApproval` request; one made after it is
 * an `ask` (the `tools/pre-execute` verdict), which must come directly after that `tool/call`.
 */
import { denialCode, type ApprovalBy, type ApprovalDecision } from '../approvals.js'
import type { SessionEvent } from '../envelope.js'
import { isRunnableCall } from '../messages.js'
import type { InputState } from './inputs.js'
import type { TurnState } from './structure.js'
import type { Emit } from './types.js'

interface Request {
  callId: string
  /** Requested after its call's `tool/call` (an `ask`). */
  ask: boolean
  decided: { decision: ApprovalDecision; by: ApprovalBy } | null
}

export class ApprovalState {
  /** Every approval id requested in the session (an id is requested at most once). */
  readonly #ids = new Set<string>()
  /** The step's tool-call block ids, in model order (from its non-interrupted assistant message). */
  #blocks: string[] = []
  #blocksSeen = false
  readonly #requests = new Map<string, Request>()
  /** callId → approvalId of the step's requests. */
  readonly #byCall = new Map<string, string>()
  readonly #called = new Set<string>()
  readonly #answered = new Set<string>()
  #undecided = 0
  /** The step's latest `tool/call` (an ask request must be for it, and it must be unanswered). */
  #lastCall: string | null = null
  /** A denied call got its `tool/call` just now: its `tool/result` must come next. */
  #deniedPair: string | null = null
  /** A `step/parked` stands and no decision of the step came since (L18). */
  #parked = false

  constructor(readonly turns: TurnState, readonly inputs?: InputState) {}

  check(e: SessionEvent, emit: Emit): void {
    const open = this.turns.openStep !== null
    if (this.#parked && open && !allowedWhileParked(e)) {
      emit('L18', `${e.type} after step/parked, before a decision or an answer of the step (only inbox splices may stand between)`)
    }
    if (this.#deniedPair !== null && open && !(e.type === 'tool/result' && e.surfaceOp === 'append' && e.data.callId === this.#deniedPair)) {
      emit('L17', `${e.type} between the tool/call of the denied call ${this.#deniedPair} and its tool/result`)
    }
    switch (e.type) {
      case 'tool/approval-requested': {
        const d = e.data
        if (!open || d.turn !== this.turns.openTurn || d.step !== this.turns.openStep) {
          emit('L17', `tool/approval-requested ${d.approvalId} names ${d.turn}.${d.step}, which is not the open step`)
          return
        }
        if (this.#ids.has(d.approvalId)) emit('L17', `approval ${d.approvalId} is requested a second time`)
        if (!this.#blocksSeen) emit('L17', `tool/approval-requested ${d.approvalId} before the step's assistant/message`)
        else if (!this.#blocks.includes(d.callId)) emit('L17', `tool/approval-requested ${d.approvalId} names ${d.callId}, no tool call of the step's assistant/message`)
        if (this.#byCall.has(d.callId)) emit('L17', `call ${d.callId} already has a request`)
        if (this.#called.has(d.callId)) {
          // "directly after its call's tool/call": nothing of its own call and no later call between
          // (earlier calls of a rolling pool may commit their results meanwhile; docs/ARCHITECTURE.md)
          if (this.#lastCall !== d.callId || this.#answered.has(d.callId)) {
            emit('L17', `the ask request ${d.approvalId} does not come directly after its call's tool/call`)
          }
        } else if (this.#called.size > 0) {
          emit('L17', `the needsApproval request ${d.approvalId} comes after a tool/call of the step`)
        }
        return
      }
      case 'tool/approval-decided': {
        const d = e.data
        const r = this.#requests.get(d.approvalId)
        if (!open || r === undefined || d.turn !== this.turns.openTurn || d.step !== this.turns.openStep) {
          emit('L17', `tool/approval-decided ${d.approvalId} without its request in the open step`)
          return
        }
        if (r.decided !== null) emit('L17', `approval ${d.approvalId} is decided a second time`)
        if (r.callId !== d.callId) emit('L17', `tool/approval-decided ${d.approvalId} names call ${d.callId}, its request names ${r.callId}`)
        if (r.ask && d.decision.kind === 'approve' && d.decision.arguments !== undefined) {
          emit('L17', `approval ${d.approvalId} edits the arguments of a call whose tool/call is already logged`)
        }
        return
      }
      case 'tool/call': {
        if (!open) return
        const id = e.data.callId
        const at = this.#blocks.indexOf(id)
        for (let i = 0; i < at; i++) {
          const a = this.#byCall.get(this.#blocks[i]!)
          if (a !== undefined && this.#requests.get(a)!.decided === null) {
            emit('L17', `tool/call ${id} after the undecided call ${this.#blocks[i]} (model order)`)
            break
          }
        }
        const a = this.#byCall.get(id)
        if (a === undefined) return
        const r = this.#requests.get(a)!
        if (r.decided === null) emit('L17', `tool/call ${id} before its approval ${a} is decided`)
        else if (r.decided.decision.kind === 'approve' && r.decided.decision.arguments !== undefined && r.decided.decision.arguments !== e.data.arguments) {
          emit('L17', `tool/call ${id} does not carry the approved arguments`)
        }
        return
      }
      case 'tool/result': {
        if (!open || e.surfaceOp !== 'append') return
        const id = e.data.callId
        const a = this.#byCall.get(id)
        if (a === undefined) return
        const r = this.#requests.get(a)!
        if (r.decided === null) {
          emit('L17', `tool/result ${id} before its approval ${a} is decided`)
          return
        }
        if (r.decided.decision.kind === 'deny') {
          const code = denialCode(r.decided.by)
          if (e.data.error?.code !== code) emit('L17', `tool/result ${id} of a call denied by ${r.decided.by.kind} must be ${code}, not ${e.data.error?.code ?? 'a success'}`)
        }
        return
      }
      case 'step/end':
        if (open && this.#undecided > 0) emit('L17', `step/end while ${this.#undecided} approval(s) of the step are undecided`)
        return
      case 'step/parked': {
        const d = e.data
        if (!open || d.turn !== this.turns.openTurn || d.step !== this.turns.openStep) {
          emit('L18', `step/parked names ${d.turn}.${d.step}, which is not the open step`)
          return
        }
        const rounds = this.inputs?.openCount ?? 0
        if (this.#undecided === 0 && rounds === 0) emit('L18', 'step/parked with no undecided request and no open input round in the step')
        const listed = new Set(d.approvals)
        // an open input round waits as an approval does (docs/spec/lifecycle.md §11): listed too
        for (const id of this.inputs?.openIds() ?? []) if (!listed.has(id)) emit('L18', `step/parked does not list the open input request ${id}`)
        for (const [id, r] of this.#requests) {
          if (r.decided === null && !listed.has(id)) emit('L18', `step/parked does not list the undecided approval ${id}`)
        }
        for (const id of d.approvals) {
          if (this.inputs?.isOpen(id) === true) continue
          const r = this.#requests.get(id)
          if (r === undefined || r.decided !== null) emit('L18', `step/parked lists ${id}, which is not an undecided request of the step`)
        }
        // `#called` is in model order (L6). A call after one whose round is open ran beside it and
        // settled, and its result waits for that round's call to commit first (docs/spec/lifecycle.md
        // §11: "calls after it … run and wait to commit"; the amended L18): it stands without one.
        let behindRound = false
        for (const c of this.#called) {
          if (this.#answered.has(c)) continue
          if (behindRound) continue
          if (this.inputs?.callWaits(c) === true) {
            behindRound = true
            continue
          }
          const a = this.#byCall.get(c)
          if (a !== undefined && this.#requests.get(a)!.ask && this.#requests.get(a)!.decided === null) continue
          emit('L18', `step/parked while tool/call ${c} has no tool/result`)
        }
        return
      }
      default:
        return
    }
  }

  apply(e: SessionEvent): void {
    if (e.type === 'step/start') {
      this.#reset()
      return
    }
    if (this.turns.openStep === null) return
    if (this.#deniedPair !== null && e.type === 'tool/result' && e.data.callId === this.#deniedPair) this.#deniedPair = null
    switch (e.type) {
      case 'assistant/message':
        if (e.surfaceOp === 'append' && !e.data.interrupted && !this.#blocksSeen) {
          this.#blocksSeen = true
          for (const b of e.data.message.content) if (isRunnableCall(b)) this.#blocks.push(b.id)
        }
        return
      case 'tool/approval-requested': {
        const d = e.data
        this.#ids.add(d.approvalId)
        if (this.#requests.has(d.approvalId) || this.#byCall.has(d.callId)) return
        this.#requests.set(d.approvalId, { callId: d.callId, ask: this.#called.has(d.callId), decided: null })
        this.#byCall.set(d.callId, d.approvalId)
        this.#undecided++
        return
      }
      case 'tool/approval-decided': {
        const r = this.#requests.get(e.data.approvalId)
        if (r === undefined || r.decided !== null) return
        r.decided = { decision: e.data.decision, by: e.data.by }
        this.#undecided--
        this.#parked = false
        return
      }
      case 'tool/call': {
        const id = e.data.callId
        this.#called.add(id)
        this.#lastCall = id
        const a = this.#byCall.get(id)
        if (a !== undefined && this.#requests.get(a)!.decided?.decision.kind === 'deny') this.#deniedPair = id
        return
      }
      case 'tool/result':
        if (e.surfaceOp === 'append') this.#answered.add(e.data.callId)
        return
      case 'tool/input-provided':
        // an answer ends the parked stretch as a decision does (L18)
        this.#parked = false
        return
      case 'step/parked':
        this.#parked = true
        return
      default:
        return
    }
  }

  #reset(): void {
    this.#blocks = []
    this.#blocksSeen = false
    this.#requests.clear()
    this.#byCall.clear()
    this.#called.clear()
    this.#answered.clear()
    this.#undecided = 0
    this.#lastCall = null
    this.#deniedPair = null
    this.#parked = false
  }
}

function allowedWhileParked(e: SessionEvent): boolean {
  // session/end-seed: a fork at a parked seq keeps the step parked (docs/spec/lifecycle.md "Deliberate choices" 5)
  return e.type === 'agent/inbox/spliced' || e.type === 'tool/approval-decided' || e.type === 'tool/input-provided' ||
    e.type === 'session/end-seed' || e.type.startsWith('schedule/')
}
