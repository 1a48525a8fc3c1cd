/**
 * Re-issuing the golden's recorded inputs in a live re-run, at their lifecycle positions
 * (positions.ts), not at their seqs. The re-run's appends run through the same position counter;
 * when it reaches the position of a queued input, every queued input up to and including the last
 * one recorded there is due (inputs keep their recorded order), and is issued in a microtask
 * (an observer may not append). A turn's end makes everything recorded in that turn due: inputs
 * whose position the re-run never reached are issued `late`; a cancel whose turn is over is
 * `dropped`. Inputs due right after a step that stops the turn wait for the turn-stopping
 * listeners (`onStopping`). `flushAll` issues what is left once the re-run is idle.
 */
import type { TurnlogAgent } from '../agent/agent.js'
import type { Wakeups } from '../agent/wakeups.js'
import { applyDecision } from '../agent/approvals.js'
import { applyAnswer } from '../agent/inputs.js'
import { deepEqual } from '../events/deep-equal.js'
import type { EventOf, LogEvent, UserMessage } from '../events/index.js'
import { toUserMessage } from '../agent/messages.js'
import type { MessageInput } from '../agent/types.js'
import type { PlannedInput } from './inputs.js'
import { describePosition, PositionCounter, turnOfPosition } from './positions.js'
import type { ReissuedInput } from './types.js'

/** Step outcomes after which the turn machine asks `agent/turn-stopping` (when nothing is pending). */
const STOPPING = new Set(['stop', 'max-tokens'])

export class Reissuer {
  readonly #queue: PlannedInput[]
  readonly #counter = new PositionCounter()
  readonly done: ReissuedInput[] = []
  /** How far into the queue inputs are due, and whether they are late. */
  #due = 0
  /** Inputs made due by a later position than their own (theirs never came). */
  readonly #late = new WeakSet<PlannedInput>()
  #scheduled = false
  readonly #drawn = new Set<string>()
  /** The last position was a step end after which the turn-stopping listeners run. */
  #stopping = false
  /** … and they started. */
  #stoppingStarted = false
  /** The step's pre-step ran since the last position (or the position needs no wait). */
  #preStepPassed = true
  /** The next flush issues blocked inputs too (a turn ended). */
  #force = false
  readonly #started = new Set<string>()
  /** Calls (`turn.step.callId`) whose pre-execute listeners under test have answered. */
  readonly #preExecuted = new Set<string>()
  /** An input is being issued: its splices are ours, not a hook's. */
  #issuing = false
  /** The recorded id for the hook's send `beforeOwnSend` matched (drawn by the agent next). */
  #nextId: string | undefined
  /** Progress marker for the driver (bumped on every append and issue). */
  progress = 0

  constructor(readonly agent: TurnlogAgent, inputs: readonly PlannedInput[], readonly onError: (msg: string) => void) {
    this.#queue = [...inputs]
  }

  get pending(): number {
    return this.#queue.length
  }

  /** Issues the inputs recorded at the start (before any lifecycle event of the live part). */
  start(): void {
    this.#dueThrough((i) => i.at === 'start', 'start')
    this.#flush(true)
  }

  /** The agent appended `e` (called from its `subscribe`). */
  onAppend(e: LogEvent): void {
    this.progress++
    const key = this.#counter.next(e)
    if (key === null) {
      if (!this.#issuing && e.type === 'agent/inbox/spliced') this.#echo(e as EventOf<'agent/inbox/spliced'>)
      return
    }
    this.#dueThrough((i) => i.at === key, key)
    // The turn is about to stop: `agent/turn-stopping` runs next, unless input is pending. Its
    // listeners may send (a steer), and the recording cannot tell their sends from the user's:
    // the hooks go first (their sends are then matched, `#echo`) and due sends follow from the
    // innermost turn-stopping listener (`onStopping`), or at the next position.
    this.#stopping = e.type === 'step/end' && STOPPING.has((e as EventOf<'step/end'>).data.outcome.kind)
    this.#stoppingStarted = false
    // a send made after an empty claim waits for the step's pre-step (`onPreStep`), or this fallback
    this.#preStepPassed = e.type === 'step/start' || e.type === 'turn/end'
    let force = false
    if (e.type === 'turn/end') {
      // a turn's end waits for nothing: what its turn left due is issued now
      const t = (e as EventOf<'turn/end'>).data.turn
      // (not a wakeup recorded after that end: its own position, or idle, makes it due)
      this.#dueThrough((i) => i.at !== 'start' && turnOfPosition(i.at) <= t && !(i.kind === 'schedule' && i.betweenTurns === true && turnOfPosition(i.at) === t), key)
      force = true
    }
    this.#schedule(force)
  }

  /** Flushes the due inputs in a microtask (an observer may not append). */
  #schedule(force = false): void {
    if (this.#due === 0) return
    this.#force = this.#force || force
    if (this.#scheduled) return
    this.#scheduled = true
    queueMicrotask(() => {
      this.#scheduled = false
      const f = this.#force
      this.#force = false
      this.#flush(f)
    })
  }

  /** A due input that must wait: a send for the turn-stopping listeners or the step's pre-step; a cancel for bodies to start. */
  #blocked(i: PlannedInput): boolean {
    if (i.kind === 'send') return this.#stopping || (i.afterClaim === true && !this.#preStepPassed)
    if (i.kind === 'cancel') {
      return i.bodies.some((b) => !this.#started.has(b)) || (i.duringStopping === true && this.#stopping && !this.#stoppingStarted) ||
        (i.duringPreStep === true && !this.#preStepPassed) ||
        (i.duringPreExecute !== undefined && !this.#preExecuted.has(i.duringPreExecute))
    }
    return false
  }

  /**
   * An id for a message the re-run's own code is about to send (the agent's id source): the id of
   * the first recorded send whose position was reached and that is not issued yet — the one the
   * hooks are re-making (`#echo` then matches it) — or undefined.
   */
  idForDraw(): string | undefined {
    const next = this.#nextId
    if (next !== undefined) {
      this.#nextId = undefined
      this.#drawn.add(next)
      return next
    }
    const turn = this.#counter.turn
    for (let i = 0; i < Math.min(this.#due, this.#queue.length); i++) {
      const q = this.#queue[i]!
      if (q.kind === 'send' && q.at !== 'start' && turnOfPosition(q.at) === turn && !this.#drawn.has(q.message.id)) {
        this.#drawn.add(q.message.id)
        return q.message.id
      }
    }
    return undefined
  }

  /** True while an input is being issued (its sends are ours, not a hook's). */
  get issuing(): boolean {
    return this.#issuing
  }

  /**
   * The re-run's own code is about to send `message` (a hook's steer). Hooks go first where the log
   * cannot tell, but where it can, it wins: if the send matches a recorded one (as `#echo` will),
   * the due inputs queued before that one were recorded before it and are issued now, and the
   * send gets that recorded send's id.
   */
  beforeOwnSend(message: MessageInput, target: 'next-turn' | 'next-step', wake: boolean): void {
    let m: UserMessage
    try {
      m = toUserMessage(message, () => '')
    } catch {
      return // the agent refuses it with its own coded error
    }
    const a = this.agent
    const t = wake && a.status === 'running' && a.abort?.signal.aborted === true ? 'next-turn' : target
    let i = this.#matching(t, m)
    if (i < 0 && wake && t === 'next-step') {
      // recorded re-targeted to next-turn: a cancel the log shows before it aborted the turn first
      const j = this.#matching('next-turn', m)
      if (j >= 0 && this.#queue.slice(0, j).some((q) => q.kind === 'cancel')) i = j
    }
    if (i < 0 || i >= this.#due) return
    const made = this.#queue[i]!
    while (this.#queue.length > 0 && this.#queue[0] !== made) {
      const input = this.#queue.shift()!
      this.#due--
      this.#issue(input, this.#late.has(input))
    }
    const q = this.#queue[0]
    if (q?.kind === 'send' && m.id === '') this.#nextId = q.message.id
  }

  /** The index of the queued send recorded in this turn that `m` (sent to `target`) re-makes, or -1. */
  #matching(target: 'next-turn' | 'next-step', m: UserMessage): number {
    const turn = this.#counter.turn
    return this.#queue.findIndex((q) => q.kind === 'send' && q.target === target && q.at !== 'start' &&
      turnOfPosition(q.at) === turn && deepEqual(q.message.content, m.content) && deepEqual(q.message.source, m.source))
  }

  /** The outermost `agent/turn-stopping` listener runs: a cancel that came while the listeners ran is issued. */
  onStoppingStart(): void {
    this.#stoppingStarted = true
    this.#flush(false)
  }

  /** The innermost `agent/turn-stopping` listener runs: sends held for it are issued (inside the hook, as a hook's steer would be). */
  onStopping(): void {
    this.#stopping = false
    this.#flush(false)
  }

  /** The outermost `agent/pre-step` listener runs (after the step's claim): sends made after the claim are issued. */
  onPreStep(): void {
    this.#stopping = false
    this.#preStepPassed = true
    this.#flush(false)
  }

  /**
   * The `tools/pre-execute` listeners under test answered for a call (our outermost listener, before
   * it returns their verdict): a cancel that came while they decided is issued now, inside the hook.
   */
  onPreExecuted(turn: number, step: number, callId: string): void {
    this.#preExecuted.add(`${turn}.${step}.${callId}`)
    this.#flush(false)
  }

  /** A tool body started: a cancel waiting for it is issued once every body it waits for runs. */
  onBodyStart(turn: number, step: number, callId: string): void {
    this.#started.add(`${turn}.${step}.${callId}`)
    this.#schedule()
  }

  /** Issues everything left (the re-run is idle). */
  flushAll(): void {
    this.#dueThrough(() => true, null)
    this.#flush(true)
  }

  /** Makes every queued input up to the last one matching due; those recorded elsewhere than `key` are late. */
  #dueThrough(match: (i: PlannedInput) => boolean, key: string | null): void {
    let last = -1
    for (let i = 0; i < this.#queue.length; i++) if (match(this.#queue[i]!)) last = i
    if (last + 1 <= this.#due) return
    for (let i = this.#due; i <= last; i++) if (this.#queue[i]!.at !== key) this.#late.add(this.#queue[i]!)
    this.#due = last + 1
  }

  /**
   * The re-run's own code (a hook: a turn-stopping steer) sent a message: the recorded send it
   * matches (same target, content and source, recorded in this turn, not yet issued) was made by
   * the recorded hooks too, so it is not re-issued.
   */
  #echo(e: EventOf<'agent/inbox/spliced'>): void {
    const d = e.data
    if (d.outcome !== undefined || d.inserted.length !== 1) return
    this.#nextId = undefined
    const i = this.#matching(d.target, d.inserted[0]!)
    if (i < 0) return
    const [q] = this.#queue.splice(i, 1)
    if (i < this.#due) this.#due--
    this.done.push({ seq: q!.seq, kind: 'send', at: describePosition(q!.at), outcome: 'made-by-hooks', issuedAt: e.seq })
  }

  /** Issues the due inputs in order, up to the first that must wait (all of them when `force`). */
  #flush(force: boolean): void {
    while (this.#due > 0 && this.#queue.length > 0) {
      if (!force && this.#blocked(this.#queue[0]!)) return
      const input = this.#queue.shift()!
      this.#due--
      this.#issue(input, this.#late.has(input))
    }
  }

  #issue(input: PlannedInput, late: boolean): void {
    const a = this.agent
    const record = (outcome: ReissuedInput['outcome']) => {
      this.progress++
      this.done.push({
        seq: input.seq, kind: input.kind, at: input.at === 'start' ? 'the start of the re-run' : describePosition(input.at),
        outcome, ...(outcome !== 'dropped' ? { issuedAt: a.events.length } : {}),
      })
    }
    try {
      switch (input.kind) {
        case 'send': {
          const aborting = a.status === 'running' && a.abort?.signal.aborted === true
          const wake = input.noWake === true ? false : a.status === 'idle' ? input.wakeIfIdle : aborting ? input.target === 'next-turn' : true
          const present = [...a.inbox.nextTurn, ...a.inbox.nextStep].some((m) => m.id === input.message.id)
          if (present) return record('dropped')
          record(late ? 'late' : 'issued')
          this.#issuing = true
          a.send(input.message, input.target, wake)
          return
        }
        case 'edit': {
          const list = input.target === 'next-turn' ? a.inbox.nextTurn : a.inbox.nextStep
          let start = Math.min(input.start, list.length)
          if (input.removedIds.length > 0) {
            start = list.findIndex((m) => m.id === input.removedIds[0])
            const contiguous = start >= 0 && input.removedIds.every((id, k) => list[start + k]?.id === id)
            if (!contiguous) return record('dropped')
          }
          record(late ? 'late' : 'issued')
          this.#issuing = true
          a.splice(input.target, start, input.removedIds.length, [...input.inserted], input.outcome)
          return
        }
        case 'cancel': {
          // a parked turn is open too (docs/spec/lifecycle.md §9: a cancel ends the parking, open requests decided `canceled`)
          if ((a.status !== 'running' && a.status !== 'parked') || a.lifecycle.openTurn !== input.turn) return record('dropped')
          record(late ? 'late' : 'issued')
          a.cancel(input.cause, { keepInbox: input.keepInbox })
          return
        }
        case 'wake':
          record(late ? 'late' : 'issued')
          a.wake()
          return
        case 'schedule': {
          // as recorded (its due time, missed periods, message id); where it goes is the agent's rule
          const w = (a as unknown as { wakeups: Wakeups }).wakeups
          const e = input.event
          record(late ? 'late' : 'issued')
          if (e.type === 'schedule/created') {
            const d = (e as EventOf<'schedule/created'>).data
            a.schedule({
              at: d.due, ...(d.every !== undefined ? { every: d.every } : {}), message: { content: [...d.content] },
              deliver: d.deliver, whenBusy: d.whenBusy, id: d.scheduleId,
            })
          } else if (e.type === 'schedule/canceled') a.unschedule((e as EventOf<'schedule/canceled'>).data.scheduleId)
          else {
            const d = (e as EventOf<'schedule/fired'>).data
            this.#issuing = true
            w.fireRecorded(d.scheduleId, d.due, d.missed ?? 0, input.messageId)
          }
          return
        }
        case 'answer': {
          // the re-run's round of the same call and round (its id is the golden's when it asked the same)
          const open = a.inputs().find((o) => o.turn === input.turn && o.step === input.step && o.callId === input.callId && o.round === input.round)
          if (open === undefined) return record('dropped')
          record(late ? 'late' : 'issued')
          const refused = (err: unknown) => this.onError(`the recorded answer of seq ${input.seq} (round ${input.round} of call ${input.callId}) was refused: ${answerError(err)}`)
          if (input.by.kind === 'user') void applyAnswer(a, open.requestId, input.answer, input.by).catch(refused)
          // an expiry: the round is answered as the clock would (the re-run's clock need not reach it)
          else if (a.approvalRun?.answer?.(open.requestId, input.answer, input.by) !== 'answered') refused(new Error('no step of the re-run waits for it'))
          return
        }
        case 'decision': {
          // the re-run's approval of the same call (its id is the re-run's own)
          const open = a.approvals().find((o) => o.turn === input.turn && o.step === input.step && o.callId === input.callId)
          if (open === undefined) return record('dropped')
          record(late ? 'late' : 'issued')
          applyDecision(a, open.approvalId, input.decision, input.by)
          return
        }
      }
    } catch (err) {
      this.onError(`the recorded ${input.kind} of seq ${input.seq} was refused: ${(err as Error)?.message ?? String(err)}`)
    } finally {
      this.#issuing = false
    }
  }
}

/** A refused answer's code, field and message (an `INVALID_INPUT` names the field the answer no longer fits). */
function answerError(err: unknown): string {
  try {
    const e = err as { code?: unknown; field?: unknown; message?: unknown }
    return `${typeof e?.code === 'string' ? `${e.code} ` : ''}${typeof e?.field === 'string' ? `at ${e.field}: ` : ''}${String(e?.message ?? err)}`
  } catch {
    return String(err)
  }
}
