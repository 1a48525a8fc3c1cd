/**
 * Turn and step structure: L2 (turns), L3 (steps), L4 (where content events stand), L12 (turn end
 * reasons against step outcomes), L13 (retry and resume turns), L16 (retry attempts).
 *
 * The other rule groups read this state (the open turn and step) in their own `check` and `apply`;
 * the checker applies this group last, so every group sees the state before the event.
 */
import type { SessionEvent } from '../envelope.js'
import type { Emit } from './types.js'

type OutcomeKind = 'tools' | 'stop' | 'concluded' | 'max-tokens' | 'failed' | 'aborted'

/** Reasons a synthetic closer writes (repair: `interrupted`, fork: `forked`); they may close any turn. */
const CLOSER_REASONS: ReadonlySet<string> = new Set(['interrupted', 'forked'])

export class TurnState {
  /** The open turn's number, or null between turns. */
  openTurn: number | null = null
  /** The number of the last turn that started (0 before the first). */
  lastTurn = 0
  /** The open step's number, or null when no step is open. */
  openStep: number | null = null
  /** The number of the last step that started in the current turn (0 before its first). */
  lastStep = 0
  /** How many `step/start`s the current turn has seen. */
  steps = 0
  /** The outcome of the current turn's last ended step. */
  lastOutcome: OutcomeKind | null = null
  /** The current turn has a step that ended `max-tokens`. */
  hadMaxTokensStep = false
  /** An `llm/retry` was written for the current turn's last failed step. */
  retried = false
  /** The last `llm/retry.attempt` of the current failure chain (0: none yet). */
  chainAttempt = 0
  /**
   * Set while the previous core events are a `turn/end` and then only inbox splices: what it closed
   * (for L13).
   */
  prevTurnEnd: { turn: number; reason: string; lastFailed: boolean } | null = null
  /** An inbox splice stands between `prevTurnEnd` and now (a retry turn may not follow one). */
  splicedSinceEnd = false
  /** The last started turn is a resume turn. */
  lastIsResume = false
  /** The last started turn reached its model request (logged a `request/header` or an `assistant/chunk`). */
  lastReached = false
  /** The resume runs before the last started turn in its chain: those that reached their request, and the others. */
  chainReached = 0
  chainUnreached = 0
  /**
   * The open step stands parked: its `step/parked` came and since then only inbox splices,
   * decisions, answers and schedule events (a fork taken here keeps the step open, L2).
   */
  parkedStep = false

  constructor(
    readonly maxStepsPerTurn: number,
    readonly maxRetries: number,
    readonly maxResumeRuns: number = 3,
  ) {}

  check(e: SessionEvent, emit: Emit): void {
    switch (e.type) {
      case 'turn/start': {
        const d = e.data
        if (this.openTurn !== null) emit('L2', `turn/start ${d.turn} while turn ${this.openTurn} is open`)
        if (d.turn !== this.lastTurn + 1) emit('L2', `turn/start ${d.turn}: the next turn is ${this.lastTurn + 1}`)
        if (d.cause) this.#checkCause(d.turn, d.cause, emit)
        return
      }
      case 'turn/end': {
        const d = e.data
        if (this.openTurn === null) {
          emit('L2', `turn/end ${d.turn} with no turn open`)
          return
        }
        if (d.turn !== this.openTurn) emit('L2', `turn/end names turn ${d.turn}, but turn ${this.openTurn} is open`)
        if (this.openStep !== null) emit('L2', `turn/end while step ${this.openStep} is open`)
        this.#checkEndReason(d.reason.kind, emit)
        return
      }
      case 'session/end-seed':
        // a fork at a parked seq keeps the parked step open: its seed marker stands inside that turn
        // (docs/spec/lifecycle.md "Deliberate choices" 5)
        if (this.openTurn !== null && !(this.openStep !== null && this.parkedStep)) {
          emit('L2', `session/end-seed while turn ${this.openTurn} is open${this.openStep !== null ? ` and its step ${this.openStep} is not parked` : ''}`)
        }
        return
      case 'step/start': {
        const d = e.data
        if (this.openTurn === null) emit('L3', `step/start ${d.turn}.${d.step} with no turn open`)
        else if (d.turn !== this.openTurn) emit('L3', `step/start names turn ${d.turn}, but turn ${this.openTurn} is open`)
        if (this.openStep !== null) emit('L3', `step/start ${d.step} while step ${this.openStep} is open`)
        if (d.step !== this.lastStep + 1) emit('L3', `step/start ${d.step}: the next step of the turn is ${this.lastStep + 1}`)
        return
      }
      case 'step/end': {
        const d = e.data
        if (this.openStep === null) emit('L3', `step/end ${d.turn}.${d.step} with no step open`)
        else if (d.turn !== this.openTurn || d.step !== this.openStep) {
          emit('L3', `step/end names ${d.turn}.${d.step}, but step ${this.openTurn}.${this.openStep} is open`)
        }
        return
      }
      case 'assistant/chunk':
      case 'tool/call':
        this.#requireStep(e.type, e.data.turn, e.data.step, emit)
        return
      case 'assistant/message':
      case 'tool/result':
        if (e.surfaceOp === 'append') this.#requireStep(`appended ${e.type}`, e.data.turn, e.data.step, emit)
        return
      case 'request/header':
        if (this.openStep === null) emit('L4', 'request/header outside an open step')
        return
      case 'resume/given-up': {
        // resume's own record: after the turn/end {interrupted} of the turn it names, with only inbox
        // splices (and other give-ups) between
        const p = this.prevTurnEnd
        if (p === null || p.turn !== e.data.turn || p.reason !== 'interrupted') {
          emit('L13', `resume/given-up names turn ${e.data.turn}, but does not follow that turn's turn/end {interrupted} with only inbox splices between`)
        }
        return
      }
      case 'user/message':
        if (e.surfaceOp === 'append' && this.openStep === null) emit('L4', 'appended user/message outside an open step')
        return
      case 'llm/retry': {
        const d = e.data
        if (this.openTurn === null) emit('L4', 'llm/retry with no turn open')
        else if (this.openStep !== null) emit('L4', `llm/retry while step ${this.openStep} is open`)
        else if (this.lastOutcome !== 'failed') {
          emit('L4', `llm/retry, but the turn's last step ${this.lastOutcome === null ? 'does not exist' : `ended ${this.lastOutcome}`}`)
        } else if (d.turn !== this.openTurn || d.step !== this.lastStep) {
          emit('L4', `llm/retry names ${d.turn}.${d.step}, but the failed step is ${this.openTurn}.${this.lastStep}`)
        } else if (this.retried) emit('L4', `a second llm/retry for the failed step ${d.turn}.${d.step}`)
        if (d.attempt !== this.chainAttempt + 1) {
          emit('L16', `llm/retry attempt ${d.attempt}: the failure chain's next attempt is ${this.chainAttempt + 1}`)
        }
        if (d.attempt > this.maxRetries) emit('L16', `llm/retry attempt ${d.attempt} exceeds the maximum ${this.maxRetries}`)
        return
      }
      default:
        return
    }
  }

  /**
   * L13. A retry turn directly follows the `turn/end {error}` of the turn it retries, whose last
   * step failed. A resume turn follows the `turn/end {interrupted}` of the turn it re-runs, with
   * only inbox splices (and resume's give-up records) between, and a chain of resume turns holds at
   * most `maxResumeRuns` runs that reached their request and three times as many that did not: the
   * limit recorded on the resume turn's cause, or the checker's option for a log that records none.
   */
  #checkCause(turn: number, cause: { kind: 'retry' | 'resume'; of: number; maxResumeRuns?: number }, emit: Emit): void {
    const { kind, of } = cause
    const p = this.prevTurnEnd
    if (p === null) {
      emit('L13', `${kind} turn ${turn} (of ${of}) does not follow a turn/end` +
        (kind === 'resume' ? ' with only inbox splices between' : ' directly'))
      return
    }
    if (kind === 'retry' && this.splicedSinceEnd) {
      emit('L13', `retry turn ${turn} (of ${of}) does not directly follow a turn/end: an inbox splice stands between`)
      return
    }
    if (of !== p.turn || of !== turn - 1) {
      emit('L13', `${kind} turn ${turn} says it ${kind === 'retry' ? 'retries' : 're-runs'} turn ${of}, but follows the end of turn ${p.turn}`)
      return
    }
    if (kind === 'retry') {
      if (p.reason !== 'error') emit('L13', `retry of turn ${of}, which ended ${p.reason}, not error`)
      else if (!p.lastFailed) emit('L13', `retry of turn ${of}, whose last step did not end failed`)
      return
    }
    if (p.reason !== 'interrupted') {
      emit('L13', `resume of turn ${of}, which ended ${p.reason}, not interrupted`)
      return
    }
    const max = cause.maxResumeRuns ?? this.maxResumeRuns
    const { reached, unreached } = this.#chainBefore()
    const recorded = cause.maxResumeRuns !== undefined ? 'recorded on its cause' : 'maxResumeRuns'
    if (reached >= max) {
      emit('L13', `resume turn ${turn} is resume run ${reached + 1} of one chain after ${reached} that reached their request; at most ${max} (${recorded})`)
    } else if (unreached >= max * 3) {
      emit('L13', `resume turn ${turn} follows ${unreached} resume runs of one chain that did not reach its request; at most ${max * 3} (3 × ${max}, ${recorded})`)
    }
  }

  /** The resume runs of the chain the last started turn ends (it included, when it is a resume turn). */
  #chainBefore(): { reached: number; unreached: number } {
    if (!this.lastIsResume) return { reached: 0, unreached: 0 }
    return {
      reached: this.chainReached + (this.lastReached ? 1 : 0),
      unreached: this.chainUnreached + (this.lastReached ? 0 : 1),
    }
  }

  #requireStep(what: string, turn: number, step: number, emit: Emit): void {
    if (this.openStep === null) emit('L4', `${what} ${turn}.${step} outside an open step`)
    else if (turn !== this.openTurn || step !== this.openStep) {
      emit('L4', `${what} names ${turn}.${step}, but step ${this.openTurn}.${this.openStep} is open`)
    }
  }

  /** L12, at `turn/end` of the open turn. */
  #checkEndReason(reason: string, emit: Emit): void {
    const last = this.openStep === null ? this.lastOutcome : null
    switch (reason) {
      case 'max-tokens':
        if (!this.hadMaxTokensStep) emit('L12', 'turn ended max-tokens, but no step of it ended max-tokens')
        break
      case 'completed':
        if (this.steps > 0 && last !== 'stop' && last !== 'concluded') {
          emit('L12', `turn ended completed, but its last step ended ${last ?? '(still open)'}, not stop or concluded`)
        }
        break
      case 'step-limit':
        if (this.steps !== this.maxStepsPerTurn) {
          emit('L12', `turn ended step-limit after ${this.steps} step(s); the budget is ${this.maxStepsPerTurn}`)
        }
        break
    }
    if (last === 'failed' && reason !== 'error' && reason !== 'aborted' && !CLOSER_REASONS.has(reason)) {
      emit('L12', `turn ended ${reason}, but its last step failed (needs error or aborted)`)
    }
  }

  apply(e: SessionEvent): void {
    if (e.type === 'step/parked') this.parkedStep = this.openStep !== null
    else if (e.type !== 'agent/inbox/spliced' && e.type !== 'tool/approval-decided' && e.type !== 'tool/input-provided' && e.type !== 'session/end-seed' && !e.type.startsWith('schedule/')) {
      this.parkedStep = false
    }
    if (e.type === 'agent/inbox/spliced' || e.type === 'resume/given-up') {
      // resume re-inserts claimed messages (and records a give-up) between the interrupted turn/end
      // and the resume turn
      this.splicedSinceEnd = true
      return
    }
    if ((e.type === 'request/header' || e.type === 'assistant/chunk') && this.openTurn !== null) this.lastReached = true
    this.prevTurnEnd = null
    switch (e.type) {
      case 'turn/start':
        this.openTurn = e.data.turn
        this.lastTurn = e.data.turn
        this.openStep = null
        this.lastStep = 0
        this.steps = 0
        this.lastOutcome = null
        this.hadMaxTokensStep = false
        this.retried = false
        // a failure chain is linked by retry causes only (L16); a resume turn starts a new one
        if (e.data.cause?.kind !== 'retry') this.chainAttempt = 0
        if (e.data.cause?.kind === 'resume') {
          const before = this.#chainBefore()
          this.chainReached = before.reached
          this.chainUnreached = before.unreached
          this.lastIsResume = true
        } else {
          this.chainReached = 0
          this.chainUnreached = 0
          this.lastIsResume = false
        }
        this.lastReached = false
        break
      case 'turn/end':
        this.prevTurnEnd = {
          turn: e.data.turn,
          reason: e.data.reason.kind,
          lastFailed: this.openStep === null && this.lastOutcome === 'failed',
        }
        this.splicedSinceEnd = false
        this.openTurn = null
        this.openStep = null
        break
      case 'step/start':
        this.openStep = e.data.step
        this.lastStep = e.data.step
        this.steps++
        break
      case 'step/end':
        this.openStep = null
        this.lastOutcome = e.data.outcome.kind
        if (e.data.outcome.kind === 'max-tokens') this.hadMaxTokensStep = true
        this.retried = false
        break
      case 'llm/retry':
        this.retried = true
        this.chainAttempt = e.data.attempt
        break
      default:
        break
    }
  }
}
