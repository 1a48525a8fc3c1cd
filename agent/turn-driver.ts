/**
 * Runs the turn machine (docs/spec/lifecycle.md §2–§3): the loop that performs the effect of each phase —
 * open the turn, propose a step (claim input, ask `agent/pre-step`), run the step (step-driver.ts),
 * ask `agent/turn-stopping` and `agent/request-error`, close the turn — and reports what happened
 * back to the machine, which decides. After a driver defect it closes what is open so the log
 * stays valid and restarts the machine at idle.
 */
import type { Failure, UserMessage } from '../events/index.js'
import { runMachine, type MachineRunner } from '../machines/lean-actor.js'
import { turnMachine, type TurnContext, type TurnEvent } from '../machines/turn.js'
import { errorText } from '../tools/define.js'
import type { BudgetMeter } from './budget.js'
import { checkDecision, hookFailure } from './decisions.js'
import { GracePeriod, isAbandoned, type GraceHost } from './grace.js'
import type { InboxDriver } from './inbox-driver.js'
import type { RestoredStep } from './restore.js'
import { runStep, type StepHost } from './step-driver.js'
import type { Agent, AgentOptions, AgentStatus, PreStepDecision, RequestErrorDecision } from './types.js'

/**
 * What the phases need of their agent: the public handle (hooks receive it as `agent`), what a
 * step needs, and the open turn's state, which the phases set.
 */
export interface TurnHost extends Agent, Omit<StepHost, 'inbox'>, GraceHost {
  /** The turn machine's runner; the loop replaces it after a driver defect. */
  turnActor: MachineRunner<TurnContext, TurnEvent>
  /** The open turn's cancel signal. */
  abort: AbortController | null
  /** The open turn's cancel grace period. */
  grace: GracePeriod | null
  readonly cancelGraceMs: number
  /** The batch the last pre-step decided to enter. */
  entered: readonly UserMessage[]
  /** `llm/retry` events in the current failure chain. */
  readonly retriesInChain: number
  /** The limit a resume turn records on its cause (docs/spec/lifecycle.md §8), or null to record none. */
  readonly resumeLimit: number | null
  /** A parked step of the prefix to restore (taken by the next step; docs/spec/lifecycle.md §9). */
  restoreStep: RestoredStep | null
  claim(turn: number, takePrompt: boolean): UserMessage[]
  /** `options.budget`'s meter (agent/budget.ts), or null. */
  readonly budget: BudgetMeter | null
}

/** What the loop needs beyond the phases: the inbox, and the agent's private bookkeeping as callbacks. */
export interface LoopHost extends TurnHost {
  readonly options: AgentOptions
  readonly inboxDriver: InboxDriver
}

export interface LoopControl {
  /** Sets the agent's status (emits `agent/status` when it changes). */
  setStatus(s: AgentStatus): void
  /** Resolves the `whenIdle` waiters if the agent is quiet. */
  settleIdle(): void
  /** The store's open while it has not answered (agent/persistence.ts), else null. */
  opening(): Promise<void> | null | undefined
  /** True while disposing or halted: a closing turn starts no queued work. */
  winding(): boolean
}

/** The agent's turn loop: one at a time, started from idle by a wake. */
export class TurnLoop {
  readonly #agent: LoopHost
  readonly #control: LoopControl
  #loop: Promise<void> | null = null
  /** True while start() emits `running`: the loop starts as soon as the listeners return. */
  #waking = false
  /**
   * The loop that is running (its start's token), or null. A token, not a flag: a loop that
   * finishes synchronously inside start() may open the next loop from its `idle` listener, and
   * start() must then not record the finished loop as the running one.
   */
  #current: object | null = null

  constructor(agent: LoopHost, control: LoopControl) {
    this.#agent = agent
    this.#control = control
  }

  /** The running loop, or null: settles when the machine is idle again. */
  get running(): Promise<void> | null {
    return this.#loop
  }

  get waking(): boolean {
    return this.#waking
  }

  /** Wakes the idle turn machine and starts the loop (synchronously up to the first hook). */
  start(resumeOf: number | null): void {
    // The machine hears WAKE before the status is emitted (docs/spec/lifecycle.md §6): a cancel() from the
    // agent/status listener is then remembered by the opening turn (which ends aborted), not
    // reset by it; a dispose() from there waits for the loop started right after.
    this.#agent.turnActor.send(resumeOf !== null ? { type: 'WAKE', resumeOf } : { type: 'WAKE' })
    this.#goRunning()
  }

  /** Status `running`, then the loop. */
  #goRunning(): void {
    this.#waking = true
    try {
      this.#control.setStatus('running')
    } finally {
      this.#waking = false
    }
    // A turn cancelled before it opened closes without awaiting anything: the loop may have
    // finished (and gone idle) before its promise is returned here.
    const token = {}
    this.#current = token
    const loop = this.#runLoop()
    if (this.#current === token) this.#loop = loop
  }

  /**
   * Restores the log's parked step (docs/spec/lifecycle.md §9): the turn machine goes straight to that step,
   * the step to its tool phase, where the scheduler continues from the log (no `turn/start`, no
   * request, nothing re-run).
   */
  restore(r: RestoredStep): void {
    const agent = this.#agent
    agent.turnActor.send({ type: 'RESTORE', turn: r.turn, steps: r.step })
    agent.abort = new AbortController()
    agent.grace?.close()
    agent.grace = new GracePeriod(agent, agent.abort.signal, agent.cancelGraceMs)
    this.#goRunning()
  }

  /** Runs turns until the machine is idle. Synchronous up to the first hook (docs/spec/lifecycle.md §2). */
  async #runLoop(): Promise<void> {
    const agent = this.#agent
    try {
      for (;;) {
        const s = agent.turnActor.getSnapshot()
        if (s.matches('idle')) break
        const phase = (s.value as { running?: string }).running
        switch (phase) {
          case 'opening':
            openTurn(agent)
            break
          case 'proposing':
            await this.#propose()
            break
          case 'stepping':
            await step(agent)
            break
          case 'stopping':
            await stopping(agent)
            break
          case 'recovering':
            await recover(agent)
            break
          case 'closing':
            this.#closeTurn()
            break
          default:
            throw new Error(`turn machine in unexpected state ${JSON.stringify(s.value)}`)
        }
      }
    } catch (err) {
      // A driver defect (or a refused append): report it, close what is open, never wedge the agent.
      agent.reportError(err, 'driver')
      this.#emergencyClose(err)
    }
    this.#loop = null
    this.#current = null
    agent.abort = null
    agent.grace?.close()
    agent.grace = null
    this.#control.setStatus('idle')
    this.#control.settleIdle()
  }

  async #propose(): Promise<void> {
    // A store that has not answered yet may refuse the session (SESSION_EXISTS, SESSION_OWNED):
    // no claim, no hook and no model call before it has. A refusal halts the agent, which cancels
    // this turn (inbox kept): the turn machine is then closing and nothing is proposed.
    const opening = this.#control.opening()
    if (opening) {
      await opening
      if (!this.#agent.turnActor.getSnapshot().matches({ running: 'proposing' })) return
    }
    await propose(this.#agent)
  }

  #closeTurn(): void {
    const agent = this.#agent
    const c = agent.turnActor.getSnapshot().context
    closeAbandonedCompaction(agent)
    agent.append({ type: 'turn/end', data: { turn: c.turn, reason: c.endReason! } })
    // a limit the turn's last request crossed is told now, not at the next request
    agent.budget?.warn()
    const winding = this.#control.winding()
    const nextTurnPending = !winding && agent.inboxDriver.list('next-turn').length > 0
    // A wake latches only while a turn aborts (maintenance runs from idle and replays its own
    // latch), and every waking send during an abort is re-targeted to next-turn: the latch's work
    // is next-turn work. With next-turn empty its prompt was withdrawn, and what next-step holds
    // is injected or parked input, which alone never opens a turn (docs/spec/lifecycle.md §3.8, choice 7).
    const latched = nextTurnPending && agent.inboxDriver.latchedWork()
    agent.inboxDriver.send({ type: 'UNLATCH' })
    agent.turnActor.send({ type: 'CLOSED', nextTurnPending, latched })
  }

  /** After a driver defect: close the open step and turn so the log stays valid, then go idle. */
  #emergencyClose(err: unknown): void {
    const agent = this.#agent
    closeAfterDefect(agent, err)
    // Restart the machines at idle, continuing the turn numbering.
    agent.stepActor?.stop()
    agent.stepActor = null
    agent.turnActor.stop()
    agent.turnActor = runMachine(turnMachine, { lastTurn: agent.lifecycle.lastTurn, maxStepsPerTurn: agent.options.maxStepsPerTurn ?? 64 }, agent.options.inspect)
  }
}

export function openTurn(agent: TurnHost): void {
  const c = agent.turnActor.getSnapshot().context
  agent.abort = new AbortController()
  agent.grace?.close()
  agent.grace = new GracePeriod(agent, agent.abort.signal, agent.cancelGraceMs)
  // cancelled before the turn opened (from the agent/status listener): the signal says so too
  if (c.abortCause !== null) agent.abort.abort(c.abortCause)
  agent.append({
    type: 'turn/start',
    data: c.retryOf !== null ? { turn: c.turn, cause: { kind: 'retry', of: c.retryOf } }
      : c.resumeOf !== null ? { turn: c.turn, cause: { kind: 'resume', of: c.resumeOf, ...(agent.resumeLimit !== null ? { maxResumeRuns: agent.resumeLimit } : {}) } }
      : { turn: c.turn },
  })
  agent.turnActor.send({ type: 'OPENED' })
}

/** Claims the input and asks `agent/pre-step` whether to enter a step. */
export async function propose(agent: TurnHost): Promise<void> {
  const c = agent.turnActor.getSnapshot().context
  const first = c.proposal === 'first'
  // a retry or resume turn re-requests: its first proposal claims next-step input only
  const owed = first && (c.retryOf !== null || c.resumeOf !== null)
  // Budgets (docs/spec/lifecycle.md §10) are checked before the claim: a spent budget makes no request. The
  // first proposal of an ordinary turn still takes its prompt (the turn answers it with the budget
  // end, as `blocked` does; left queued, it would open the next turn at once, forever); later
  // proposals leave next-step input queued for the next turn.
  const spent = agent.budget?.check() ?? null
  // an agent/budget listener may have cancelled the turn: the machine is closing it already
  if (!agent.turnActor.getSnapshot().matches({ running: 'proposing' })) return
  if (spent !== null) {
    if (first && !owed) agent.claim(c.turn, true)
    agent.turnActor.send({ type: 'BUDGET', reason: spent })
    return
  }
  const messages = agent.claim(c.turn, first && !owed)
  let decision: PreStepDecision
  try {
    decision = await agent.within(agent.hooks.waterfall('agent/pre-step', {
      turn: c.turn, step: c.steps + 1, messages, proposal: c.proposal, retry: first && c.retryOf !== null,
      resume: first && c.resumeOf !== null,
      signal: agent.abort!.signal, agent,
    }, (p) => ({ kind: 'enter' as const, messages: p.messages })), 'agent/pre-step')
    // without a listener the decision is the default, the claimed messages as the inbox checked
    // them: parsing them again is per-step work for a hook nobody added (B5)
    if (agent.hooks.count('agent/pre-step') > 0) decision = checkDecision(decision)
  } catch (err) {
    // Abandoned after the cancel's grace period: the machine already closes the turn (aborted).
    if (isAbandoned(err)) return
    agent.reportError(err, 'agent/pre-step')
    agent.turnActor.send({ type: 'PROPOSE_FAILED', failure: hookFailure('agent/pre-step', err) })
    return
  }
  if (decision.kind === 'reject') {
    agent.turnActor.send({ type: 'PROPOSED', decision: 'reject' })
    return
  }
  agent.entered = decision.messages
  agent.turnActor.send({ type: 'PROPOSED', decision: decision.messages.length > 0 ? 'enter' : 'enter-empty' })
}

export async function step(agent: TurnHost): Promise<void> {
  const c = agent.turnActor.getSnapshot().context
  const restore = agent.restoreStep
  agent.restoreStep = null
  const outcome = await runStep(agent, c.turn, c.steps, agent.entered, agent.abort!.signal, c.abortCause !== null, restore)
  agent.entered = []
  agent.turnActor.send({ type: 'STEP_DONE', outcome, nextStepPending: agent.inbox.nextStep.length > 0 })
}

export async function stopping(agent: TurnHost): Promise<void> {
  const c = agent.turnActor.getSnapshot().context
  try {
    await agent.within(agent.hooks.serial('agent/turn-stopping', {
      turn: c.turn, step: c.steps, outcome: agent.lifecycle.lastStepOutcome!, signal: agent.abort!.signal, agent,
    }), 'agent/turn-stopping')
  } catch (err) {
    if (isAbandoned(err)) {
      // the turn was cancelled: STOPPED after an abort closes it aborted
      agent.turnActor.send({ type: 'STOPPED', nextStepPending: false })
      return
    }
    agent.reportError(err, 'agent/turn-stopping')
    agent.turnActor.send({ type: 'STOP_FAILED', failure: hookFailure('agent/turn-stopping', err) })
    return
  }
  agent.turnActor.send({ type: 'STOPPED', nextStepPending: agent.inbox.nextStep.length > 0 })
}

export async function recover(agent: TurnHost): Promise<void> {
  const c = agent.turnActor.getSnapshot().context
  let retry = false
  try {
    const decision: RequestErrorDecision = await agent.within(agent.hooks.waterfall('agent/request-error', {
      turn: c.turn, step: c.steps, failure: c.failure!, retries: agent.retriesInChain,
      signal: agent.abort!.signal, agent,
    }, () => undefined), 'agent/request-error')
    // read inside the guard: a decision is user data (its `kind` may be a throwing getter)
    retry = (decision as { kind?: unknown } | undefined)?.kind === 'retry'
  } catch (err) {
    if (!isAbandoned(err)) agent.reportError(err, 'agent/request-error')
  }
  agent.turnActor.send({ type: 'RECOVERED', retry })
}

/**
 * A compaction bracket still open when the turn ends (L14: no `turn/end` inside one): its plugin's
 * hook was abandoned at the turn's abort and grace period (a cancel during the summary call) and
 * has not closed it yet. It is closed here `ABORTED`; the plugin sees the bracket closed and
 * appends nothing more for it (compaction/summarise.ts). Found by the fuzzer (seed 1524558768).
 */
function closeAbandonedCompaction(agent: TurnHost): void {
  const id = agent.lifecycle.openCompaction
  if (id === null) return
  agent.append({ type: 'compaction/end', data: { compactionId: id, error: { code: 'ABORTED', message: 'the turn ended while its compaction ran (the compaction hook was abandoned)' } } })
}

/**
 * After a driver defect: closes the open step (its pending tool calls with an unknown outcome)
 * and the open turn, so the log stays valid. A refused append is reported, never thrown.
 */
export function closeAfterDefect(agent: TurnHost, err: unknown): void {
  const failure: Failure = { code: 'UNKNOWN', message: errorText(err) }
  try {
    const l = agent.lifecycle
    if (l.openStep !== null && l.openTurn !== null) {
      for (const call of l.pendingToolCalls) {
        agent.append({
          type: 'tool/result',
          data: {
            turn: l.openTurn, step: l.openStep, callId: call.callId,
            message: { role: 'tool', callId: call.callId, content: [{ type: 'text', text: 'outcome unknown' }], isError: true },
            error: { code: 'TOOL_OUTCOME_UNKNOWN', message: failure.message },
          },
          surfaceOp: 'append', sourceEventSeqs: [call.seq],
        })
      }
      agent.append({ type: 'step/end', data: { turn: l.openTurn, step: l.openStep, outcome: { kind: 'failed', failure } } })
    }
    if (agent.lifecycle.openTurn !== null) {
      closeAbandonedCompaction(agent)
      agent.append({ type: 'turn/end', data: { turn: agent.lifecycle.openTurn, reason: { kind: 'error', failure } } })
    }
  } catch (e) {
    agent.reportError(e, 'driver')
  }
}
