/**
 * Input requests: L21 (docs/spec/invariants.md, docs/spec/lifecycle.md §11). A tool call asks in
 * rounds: `tool/input-requested` opens round n of a call (n = previous + 1, from 1, only once the
 * previous round is answered), `tool/input-provided` answers it once, in the same step; no result
 * and no `step/end` while a round is open; a `client` round's accepted answer is followed by the
 * call's result, never by another round. Every rule reports its own code (`Violation.rule`).
 *
 * State is per open step (cleared at the next `step/start`) plus the session's request ids (a
 * request id is used once). The approvals' L18 reads the open rounds (a call with an open round
 * may stand without a result when the step parks; an answer may follow `step/parked`).
 */
import type { SessionEvent } from '../envelope.js'
import type { TurnState } from './structure.js'
import type { Emit } from './types.js'

/** The codes of L21's rules, one per rule. */
export const L21_RULES = [
  'INPUT_STEP', 'INPUT_CALL', 'INPUT_ROUND', 'INPUT_ROUND_OPEN', 'INPUT_ID', 'INPUT_UNKNOWN', 'INPUT_TWICE',
  'INPUT_KEYS', 'INPUT_RESULT_OPEN', 'INPUT_CLIENT', 'INPUT_STEP_END',
] as const
export type L21Rule = (typeof L21_RULES)[number]

interface Round {
  requestId: string
  round: number
  keys: string[]
  client: boolean
  answered: boolean
}

interface CallRounds {
  /** The last round asked (0 before the first). */
  last: number
  open: Round | null
  /** A `client` round was accepted: the call's result must come next for it. */
  clientAccepted: boolean
}

export class InputState {
  /** Every request id asked in the session. */
  readonly #ids = new Set<string>()
  readonly #called = new Set<string>()
  readonly #answered = new Set<string>()
  readonly #calls = new Map<string, CallRounds>()
  /** requestId → callId of the step's requests. */
  readonly #requests = new Map<string, { callId: string; round: Round }>()
  #open = 0

  constructor(readonly turns: TurnState) {}

  /** How many rounds of the open step are open (L18: a parked step waits for them too). */
  get openCount(): number {
    return this.#open
  }

  /** True when `requestId` is an open round of the open step. */
  isOpen(requestId: string): boolean {
    const r = this.#requests.get(requestId)
    return r !== undefined && !r.round.answered
  }

  /** True when the call has an open round (it may stand without its result when the step parks). */
  callWaits(callId: string): boolean {
    return this.#calls.get(callId)?.open != null
  }

  /** The open rounds' request ids. */
  openIds(): string[] {
    const out: string[] = []
    for (const [id, r] of this.#requests) if (!r.round.answered) out.push(id)
    return out
  }

  check(e: SessionEvent, emit: Emit): void {
    const open = this.turns.openStep !== null
    const fail = (rule: L21Rule, message: string): void => emit('L21', `${rule}: ${message}`, rule)
    switch (e.type) {
      case 'tool/input-requested': {
        const d = e.data
        if (!open || d.turn !== this.turns.openTurn || d.step !== this.turns.openStep) {
          fail('INPUT_STEP', `tool/input-requested ${d.requestId} names ${d.turn}.${d.step}, which is not the open step`)
          return
        }
        if (this.#ids.has(d.requestId)) fail('INPUT_ID', `input request ${d.requestId} is asked a second time`)
        if (!this.#called.has(d.callId)) fail('INPUT_CALL', `tool/input-requested ${d.requestId} names ${d.callId}, which has no tool/call in the step`)
        else if (this.#answered.has(d.callId)) fail('INPUT_CALL', `tool/input-requested ${d.requestId} names ${d.callId}, which already has its tool/result`)
        const c = this.#calls.get(d.callId)
        if (c?.open != null) fail('INPUT_ROUND_OPEN', `round ${d.round} of ${d.callId} is asked while its round ${c.open.round} (${c.open.requestId}) is open`)
        if (c?.clientAccepted === true) fail('INPUT_CLIENT', `round ${d.round} of ${d.callId} follows an accepted client round (its result must come next)`)
        const expected = (c?.last ?? 0) + 1
        if (d.round !== expected) fail('INPUT_ROUND', `tool/input-requested ${d.requestId} is round ${d.round} of ${d.callId}, expected ${expected}`)
        return
      }
      case 'tool/input-provided': {
        const d = e.data
        const r = this.#requests.get(d.requestId)
        if (!open || r === undefined || d.turn !== this.turns.openTurn || d.step !== this.turns.openStep) {
          fail('INPUT_UNKNOWN', `tool/input-provided ${d.requestId} without its request in the open step`)
          return
        }
        if (r.round.answered) fail('INPUT_TWICE', `input request ${d.requestId} is answered a second time`)
        if (r.callId !== d.callId || r.round.round !== d.round) {
          fail('INPUT_UNKNOWN', `tool/input-provided ${d.requestId} names ${d.callId} round ${d.round}, its request names ${r.callId} round ${r.round.round}`)
        }
        if (d.answer.action === 'accept') {
          const got = Object.keys(d.answer.responses).sort()
          const want = [...r.round.keys].sort()
          if (got.length !== want.length || got.some((k, i) => k !== want[i])) {
            fail('INPUT_KEYS', `the accepted answer to ${d.requestId} names ${JSON.stringify(got)}, the request asked ${JSON.stringify(want)}`)
          }
        }
        return
      }
      case 'tool/result': {
        if (!open || e.surfaceOp !== 'append') return
        const c = this.#calls.get(e.data.callId)
        if (c?.open != null) fail('INPUT_RESULT_OPEN', `tool/result ${e.data.callId} while its round ${c.open.round} (${c.open.requestId}) is open`)
        return
      }
      case 'step/end':
        if (open && this.#open > 0) fail('INPUT_STEP_END', `step/end while ${this.#open} input round(s) of the step are open`)
        return
      default:
        if (open && e.type !== 'agent/inbox/spliced' && !e.type.startsWith('schedule/') && e.type !== 'step/parked' && e.type !== 'tool/approval-decided') {
          // a client round's accepted answer is followed by its call's result: nothing of the call between
          const pending = this.#clientPending()
          if (pending !== null && e.type === 'tool/call') fail('INPUT_CLIENT', `tool/call ${e.data.callId} between the accepted client round of ${pending} and its tool/result`)
        }
        return
    }
  }

  #clientPending(): string | null {
    for (const [id, c] of this.#calls) if (c.clientAccepted && !this.#answered.has(id)) return id
    return null
  }

  apply(e: SessionEvent): void {
    if (e.type === 'step/start') {
      this.#called.clear()
      this.#answered.clear()
      this.#calls.clear()
      this.#requests.clear()
      this.#open = 0
      return
    }
    if (this.turns.openStep === null) return
    switch (e.type) {
      case 'tool/call':
        this.#called.add(e.data.callId)
        return
      case 'tool/result':
        if (e.surfaceOp === 'append') this.#answered.add(e.data.callId)
        return
      case 'tool/input-requested': {
        const d = e.data
        this.#ids.add(d.requestId)
        if (this.#requests.has(d.requestId)) return
        let c = this.#calls.get(d.callId)
        if (c === undefined) this.#calls.set(d.callId, (c = { last: 0, open: null, clientAccepted: false }))
        const keys = Object.keys(d.requests)
        const round: Round = { requestId: d.requestId, round: d.round, keys, client: keys.some((k) => d.requests[k]!.kind === 'client'), answered: false }
        if (c.open !== null && !c.open.answered) this.#open--
        c.open = round
        c.last = d.round
        c.clientAccepted = false
        this.#requests.set(d.requestId, { callId: d.callId, round })
        this.#open++
        return
      }
      case 'tool/input-provided': {
        const r = this.#requests.get(e.data.requestId)
        if (r === undefined || r.round.answered) return
        r.round.answered = true
        this.#open--
        const c = this.#calls.get(r.callId)
        if (c !== undefined && c.open === r.round) {
          c.open = null
          if (r.round.client && e.data.answer.action === 'accept') c.clientAccepted = true
        }
        return
      }
      default:
        return
    }
  }
}
