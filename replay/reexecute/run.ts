/**
 * One run of a re-execution (`Reexecution`): the agent of each process of the recording, and the
 * pump. The re-execution owns every point where the agent waits (model chunks, tool bodies,
 * sleeps, a gate before and after every hook); when the agent has nothing left to do but wait
 * (one macrotask turn: every microtask drained), the next recorded event decides what is released
 * or issued. See decision record "replay-engine" (docs/decisions/ in the repository).
 */
import { createAgent, TurnlogAgent } from '../../agent/agent.js'
import type { AgentOptions } from '../../agent/types.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { recordedId, recordedTime } from './clock.js'
import { diverge, onAppend } from './compare.js'
import { servedHooks } from './hooks.js'
import { issueExternal } from './inputs.js'
import { servedModel } from './model.js'
import type { Divergence, ReexecuteOptions, ReexecuteResult } from './options.js'
import { Recording, type StepRecord, type Switch } from './recording.js'
import { describeWaiting, mayPass, release, releaseSafe, serve, serveResultFirst, stalled } from './serve.js'
import type { BodyServe, FakeTimer, Gate, Host, StreamServe } from './state.js'
import { key2 } from './facts.js'
import { servedTimers, servedTool } from './tools.js'
import { recordedWakeupTool } from './schedules.js'

/** Scheduling rounds in a row that may run without the log growing (see `Reexecution.progressing`). */
export const MAX_ROUNDS_WITHOUT_PROGRESS = 10_000

export class Reexecution implements Host {
  readonly rec: readonly LogEvent[]
  readonly opts: ReexecuteOptions
  readonly start: number
  readonly steps: Recording['steps']
  readonly turnEnds: Recording['turnEnds']
  readonly brackets: Recording['brackets']
  readonly cancelTraced: Recording['cancelTraced']
  readonly switches: readonly Switch[]
  switchAt = 0
  gen = 0
  /** A manual compaction we re-issued is running (`compactNow` through `runMaintenance`). */
  maintaining = false
  agent!: TurnlogAgent
  divergence: Divergence | null = null
  done = false
  stall: ReturnType<typeof setTimeout> | null = null
  readonly gates: Gate[] = []
  readonly streams: StreamServe[] = []
  readonly bodies = new Map<string, BodyServe>()
  readonly answered = new Set<number>()
  readonly preDone = new Set<string>()
  /** Turns we cancelled. */
  readonly cancelled = new Set<number>()
  lastTimer: FakeTimer | null = null
  readonly pendingTimers = new Map<string, FakeTimer>()
  readonly expiryTimers = new Set<FakeTimer>()
  silentEnd: (() => void) | null = null
  idSeq = -1
  idUsed = 0
  /** The log length at each choice point met, in order. */
  readonly choicePoints: number[] = []
  #finish!: (r: ReexecuteResult) => void
  #scheduled = false
  /** Rounds in a row that did something at log length `#roundsAt` (see `progressing`). */
  #rounds = 0
  #roundsAt = -1
  readonly #choices: readonly boolean[]
  /** The plugins of this run (a factory is called once per run). */
  plugins: NonNullable<AgentOptions['plugins']> = []

  constructor(events: readonly LogEvent[], opts: ReexecuteOptions, choices: readonly boolean[] = []) {
    const r = new Recording(events)
    this.rec = events
    this.opts = opts
    this.#choices = choices
    this.start = r.start
    this.steps = r.steps
    this.turnEnds = r.turnEnds
    this.brackets = r.brackets
    this.cancelTraced = r.cancelTraced
    this.switches = r.switches
  }

  get len(): number {
    return this.agent.events.length
  }

  run(): Promise<ReexecuteResult> {
    const p = this.opts.plugins
    this.plugins = (typeof p === 'function' ? p() : p) ?? []
    const result = new Promise<ReexecuteResult>((resolve) => (this.#finish = resolve))
    try {
      this.createAgent(this.rec.slice(0, this.start))
    } catch (err) {
      return Promise.reject(err)
    }
    this.schedule()
    return result
  }

  /**
   * Creates the agent of one process of the recording on `prefix` (the first at `start`; after a
   * crash or a restart, the next one on the log as it then stood, like `resumeAgent`). Its
   * model, tools, hooks and timers belong to this generation: once the next process takes over,
   * whatever the old agent still waits on never settles (a dead process).
   */
  createAgent(prefix: readonly LogEvent[]): void {
    const gen = ++this.gen
    const firstHeader = this.rec.find((e) => e.type === 'request/header') as EventOf<'request/header'> | undefined
    const config = this.opts.config ?? firstHeader?.data.config ?? { model: 'model' }
    const system = this.opts.system ?? firstHeader?.data.system ?? ''
    {
      this.agent = createAgent({
        model: servedModel(this, config.model ?? 'model', this.opts.contextWindow, gen, firstHeader?.data.provider),
        tools: [...(this.opts.tools ?? []), ...[recordedWakeupTool(firstHeader, this.opts.tools ?? [])].filter((t) => t !== null)]
          .map((t) => servedTool(this, t, gen)),
        // firings are recorded input (issued by the pump, replay/reexecute/schedules.ts): no timer
        wakeups: { timer: false },
        system,
        config,
        ...(prefix.length > 0 ? { prefix } : {}),
        ...(this.opts.maxParallelToolCalls !== undefined ? { maxParallelToolCalls: this.opts.maxParallelToolCalls } : {}),
        ...(this.opts.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: this.opts.maxStepsPerTurn } : {}),
        ...(this.opts.retry !== undefined ? { retry: this.opts.retry } : {}),
        ...(this.opts.budget !== undefined ? { budget: this.opts.budget } : {}),
        ...(this.opts.checkRequests !== undefined ? { checkRequests: this.opts.checkRequests } : {}),
        ...(this.opts.maxResumeRuns !== undefined ? { maxResumeRuns: this.opts.maxResumeRuns } : {}),
        ...(this.plugins.length ? { plugins: this.plugins } : {}),
        clock: () => recordedTime(this),
        ids: () => recordedId(this),
        timers: servedTimers(this, gen),
        hooks: servedHooks(this, gen),
      }) as TurnlogAgent
    }
    this.agent.subscribe((e) => {
      if (gen === this.gen) onAppend(this, e)
    })
    // a parked step of the prefix is restored at once, as resumeAgent does (docs/spec/lifecycle.md §9)
    if (this.agent.restoreStep !== null) this.agent.wake()
    // A resume turn (docs/spec/lifecycle.md §8) follows the boundary after only splices: armed like resumeAgent does.
    let i = prefix.length
    while (this.rec[i]?.type === 'agent/inbox/spliced') i++
    const t = this.rec[i]
    const cause = t?.type === 'turn/start' ? (t as EventOf<'turn/start'>).data.cause : undefined
    if (i > this.start && cause?.kind === 'resume') this.agent.armResume(cause.of, cause.maxResumeRuns)
    // resume's give-up record (docs/spec/lifecycle.md §8) comes first after the boundary's closers: a recorded fact
    const g = this.rec[prefix.length]
    if (prefix.length > this.start && g?.type === 'resume/given-up') this.agent.append({ type: g.type, data: g.data as EventOf<'resume/given-up'>['data'] })
  }

  /** The agent reached a process boundary: it dies there; the next process resumes the log. */
  switchProcess(sw: Switch): void {
    this.switchAt++
    this.opts.trace?.(`process boundary at seq ${sw.k}: closers ${sw.k}..${sw.end - 1}, resumed on ${sw.end} events`)
    this.agent.session.close()
    this.gates.length = 0
    this.streams.length = 0
    this.bodies.clear()
    this.preDone.clear()
    this.cancelled.clear()
    this.pendingTimers.clear()
    this.expiryTimers.clear()
    this.lastTimer = null
    this.silentEnd = null
    this.maintaining = false
    this.createAgent(this.rec.slice(0, sw.end))
  }

  end(): void {
    if (this.done) return
    this.done = true
    if (this.stall) clearTimeout(this.stall)
    const events = this.agent.events.slice()
    // Stop the agent where it stands: further appends are refused, waiting points stay closed.
    if (this.divergence) this.agent.session.close()
    this.#finish(this.divergence ? { ok: false, divergence: this.divergence, events } : { ok: true, eventCount: Math.min(events.length, this.rec.length) })
  }

  schedule(): void {
    if (this.done) return
    if (this.stall) {
      clearTimeout(this.stall)
      this.stall = null
    }
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      try {
        if (this.tick() && this.progressing()) this.schedule()
      } catch (err) {
        // an issued input was refused: that is a divergence too
        const seq = this.len
        diverge(this, {
          seq, expected: this.rec[seq] ?? null, actual: null, kind: 'missing',
          waiting: `refused the recorded input: ${(err as Error)?.message ?? String(err)}`,
        })
      }
    })
  }

  /**
   * The pump's bound (issue 24): a round that did something without the log growing (a released
   * gate, a settled body, an issued cancel) is legitimate, but only as many times as there are
   * things to release; a hostile log must not keep the pump busy forever. After
   * `MAX_ROUNDS_WITHOUT_PROGRESS` rounds in a row at one log length, the run ends as a divergence.
   */
  progressing(): boolean {
    if (this.len !== this.#roundsAt) {
      this.#roundsAt = this.len
      this.#rounds = 0
      return true
    }
    if (++this.#rounds <= MAX_ROUNDS_WITHOUT_PROGRESS) return true
    const seq = this.len
    const next = this.rec[seq]
    const waiting = `made no progress in the log in ${MAX_ROUNDS_WITHOUT_PROGRESS} scheduling rounds (${describeWaiting(this)})`
    diverge(this, { seq, expected: next ?? null, actual: null, kind: next !== undefined ? 'missing' : 'extra', waiting })
    return false
  }

  /** A decision the recording leaves open: false the first time, true when a re-run flips it. */
  choose(): boolean {
    const i = this.choicePoints.length
    this.choicePoints.push(this.len)
    return this.#choices[i] ?? false
  }

  /** One scheduling decision; true when it did something (then the pump runs again). */
  tick(): boolean {
    if (this.done) return false
    const sw = this.switches[this.switchAt]
    if (sw !== undefined && this.len === sw.k) {
      this.switchProcess(sw)
      return true
    }
    const before = this.gates.filter((g) => g.kind === 'before' && mayPass(this, g))
    const next = this.rec[this.len]
    this.opts.trace?.(`tick len=${this.len} next=${next?.type ?? 'END'} status=${this.agent.status} ${describeWaiting(this)}`)
    // 1. Outside inputs: a cancel that is due, inbox sends and edits; back to back while the
    //    recording has them back to back (the agent does not run in between). When a hook is
    //    about to run, the recording may have had the input first or the hook first: a choice
    //    point (the hook first, unless a re-run flips it).
    if (issueExternal(this, before.length > 0)) return true
    // 2. Let every hook that is waiting to start run.
    if (before.length) {
      for (const g of before) release(this, g)
      return true
    }
    if (next === undefined) {
      // a recording may end parked (the process exited waiting for a person): so does the re-execution
      if ((this.agent.status === 'idle' || this.agent.status === 'parked') && this.gates.length === 0 && !this.maintaining) {
        this.end()
        return false
      }
      if (releaseSafe(this)) return true
      stalled(this, null)
      return false
    }
    // 3. A tool result the recording has next comes before a finished pre-execute: with a hook
    //    that may ask, the start loop waits for each verdict before the next call starts
    //    (docs/spec/lifecycle.md §9), so a verdict released first could start a call the recording started
    //    only after this result.
    if (serveResultFirst(this, next)) return true
    // 4. Hooks that finished, and sleeps.
    if (releaseSafe(this)) return true
    // 5. The model or a tool body, as the next event asks.
    if (serve(this, next)) return true
    stalled(this, next)
    return false
  }

  aborted(): boolean {
    return this.agent.abort?.signal.aborted === true
  }

  stepRec(): StepRecord | undefined {
    const l = this.agent.lifecycle
    if (l.openTurn === null || l.openStep === null) return undefined
    return this.steps.get(key2(l.openTurn, l.openStep))
  }
}
