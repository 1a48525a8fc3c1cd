/**
 * The log invariant checker: L1–L21 exactly as decision record "invariant-checker" (docs/decisions/ in the repository)
 * states them. `check` is pure; `apply` advances O(1)-amortised state (per open
 * turn and step, cleared at their boundaries; a surface replace costs O(range)).
 *
 * `Session.append` refuses an event with violations; `verify` applies every event anyway (best
 * effort) and reports all violations. Events of extension types (plugin-registered or ignorable)
 * are judged by L1 only. The checker never throws on a schema-valid event.
 *
 * An event is identified by its position (which L1 says equals its seq): chunk and surface seqs are
 * recorded by position, so one broken seq in a stored log is reported once, not at every citation.
 */
import { EVENT_DATA } from '../data.js'
import type { LogEvent, SessionEvent } from '../envelope.js'
import { ApprovalState } from './approvals.js'
import { BudgetCheck } from './budget.js'
import { ChildState } from './children.js'
import { CompactionState } from './compaction.js'
import { InboxState } from './inbox.js'
import { InputState } from './inputs.js'
import { ScheduleState } from './schedules.js'
import { StepContent } from './step-content.js'
import { TurnState } from './structure.js'
import { SurfaceState } from './surface.js'
import type { CheckerOptions, Emit, Violation } from './types.js'

/** True for an event of one of the core types (the only ones L2–L16 look at). */
export function isCoreEvent(e: LogEvent): e is SessionEvent {
  return Object.hasOwn(EVENT_DATA, e.type)
}

export class LogChecker {
  /** The position of the next event: how many events were applied or skipped. */
  #position = 0
  /** The violations the running `check` found, or null (none yet). */
  #found: Violation[] | null = null
  readonly #emit: Emit = (invariant, message, rule) => {
    const seq = this.#position
    ;(this.#found ??= []).push(rule === undefined ? { invariant, seq, message } : { invariant, seq, message, rule })
  }
  readonly #turns: TurnState
  readonly #content: StepContent
  readonly #surface = new SurfaceState()
  readonly #inbox: InboxState
  readonly #compaction = new CompactionState()
  readonly #approvals: ApprovalState
  /** L21, input rounds (inputs.ts); the approvals' L18 reads it. */
  readonly #inputs: InputState
  readonly #budget: BudgetCheck
  /** W1–W3, the wakeup rules (schedules.ts). */
  readonly #schedules: ScheduleState
  /** L19, the parent's side (children.ts). */
  readonly #children: ChildState

  constructor(opts: CheckerOptions = {}) {
    this.#turns = new TurnState(opts.maxStepsPerTurn ?? 64, opts.maxRetries ?? 5, opts.maxResumeRuns ?? 3)
    this.#content = new StepContent(this.#turns)
    this.#inbox = new InboxState(this.#turns)
    this.#inputs = new InputState(this.#turns)
    this.#approvals = new ApprovalState(this.#turns, this.#inputs)
    this.#budget = new BudgetCheck(opts.price)
    this.#schedules = new ScheduleState(this.#turns)
    this.#children = new ChildState(this.#turns)
  }

  /** The seq the next event must have (L1). */
  get position(): number {
    return this.#position
  }

  /** The open turn, or null. */
  get openTurn(): number | null {
    return this.#turns.openTurn
  }

  /** The open step, or null. */
  get openStep(): number | null {
    return this.#turns.openStep
  }

  /** The current surface seqs, in order (O(surface)). */
  surfaceSeqs(): number[] {
    return this.#surface.seqs()
  }

  /** The replacement generation: replacements committed so far. */
  get generation(): number {
    return this.#surface.generation
  }

  /**
   * Every invariant the event would break if appended now, ordered by invariant id (L1 first).
   * Changes nothing.
   */
  check(e: LogEvent): Violation[] {
    // One emitter for every check and no list until something is found: a valid event (nearly
    // all of them, at every append and for every replayed event) allocates nothing here (B1, B5).
    this.#found = null
    const emit = this.#emit
    const seq = this.#position
    if (e.seq !== seq) emit('L1', `seq ${e.seq} at position ${seq}`)
    if (!isCoreEvent(e)) return this.#takeFound()
    this.#turns.check(e, emit)
    this.#content.check(e, emit)
    this.#surface.check(e, emit, seq)
    this.#inbox.check(e, emit)
    this.#compaction.check(e, emit)
    this.#approvals.check(e, emit)
    this.#inputs.check(e, emit)
    this.#budget.check(e, emit)
    this.#schedules.check(e, emit)
    this.#children.check(e, emit)
    const out = this.#takeFound()
    if (out.length > 1) out.sort((a, b) => rank(a.invariant) - rank(b.invariant))
    return out
  }

  /** What `check` found so far (a fresh list), or the shared frozen empty list. */
  #takeFound(): Violation[] {
    const out = this.#found
    this.#found = null
    return out ?? NONE
  }

  /** Advances the state past the event, whether or not it broke an invariant. */
  apply(e: LogEvent): void {
    const at = this.#position++
    if (!isCoreEvent(e)) return
    this.#content.apply(e, at)
    this.#surface.apply(e, at)
    this.#inbox.apply(e)
    this.#compaction.apply(e)
    this.#approvals.apply(e)
    this.#inputs.apply(e)
    this.#budget.apply(e)
    this.#schedules.apply(e)
    this.#children.apply(e)
    // Last: the groups above read the turn and step state as it was before the event.
    this.#turns.apply(e)
  }

  /** Counts a position whose event could not be used (it failed validation), for L1. */
  skip(): void {
    this.#position++
  }
}

/** `check`'s answer for an event that breaks nothing: shared, so frozen (callers only read it). */
const NONE: Violation[] = Object.freeze([]) as unknown as Violation[]

function rank(invariant: string): number {
  const n = /^L(\d+)$/.exec(invariant)
  if (n) return Number(n[1])
  // the wakeup rules (W1–W3) after every L rule
  const w = /^W(\d+)$/.exec(invariant)
  return w ? 1000 + Number(w[1]) : 0
}
