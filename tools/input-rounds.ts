/**
 * One step's input rounds (docs/spec/lifecycle.md §11), as the tool scheduler holds them: a body
 * that returns `ctx.inputRequired(…)` ends a round; the round is checked and logged
 * (`tool/input-requested`); its answer (a person through the agent, the expiry timer, a steer, a
 * cancel) is claimed and logged (`tool/input-provided`); then the body is called again with
 * `ctx.input`, or, for a client tool, the accepted response is the call's result. Nothing waits in
 * memory that the log does not hold: a restored step continues from the logged round.
 *
 * Parking is the approval gate's (approval-gate.ts): it lists the open rounds with the open
 * approvals in one `step/parked`.
 */
import { InputRequests, clientRefusalCode, findLossy, type InputAnswer, type InputBy } from '../events/index.js'
import type { CallHost } from './call-stages.js'
import { runBody } from './call-stages.js'
import type { CallRec, CallRound } from './call-record.js'
import { errorOutcome, errorText, outputToOutcome } from './define.js'
import { schemaProblem } from './json-schema-check.js'
import { EXPIRY_TIMER } from './expiry-timer.js'
import type { InputEnv, OpenRound, RestoredRound, ToolOutcome } from './types.js'

/** The default cap of a round's `state` (bytes of its JSON text). */
export const DEFAULT_MAX_STATE_BYTES = 64 * 1024

/** The request key of a client tool's one round: its response is the call's result. */
export const CLIENT_KEY = 'output'

/** What the rounds need of their run. */
export interface RoundsHost {
  readonly recs: readonly CallRec[]
  /** Wakes every wait of the run. */
  notify(): void
  /** A round was asked or answered: a parked step parks again with the new list. */
  changed(): void
  now(): number
}

export class InputRounds {
  readonly #env: InputEnv
  readonly #host: RoundsHost
  readonly #calls: CallHost
  #timer: unknown = undefined
  #closed = false

  constructor(env: InputEnv, host: RoundsHost, calls: CallHost) {
    this.#env = env
    this.#host = host
    this.#calls = calls
  }

  get onSteer(): 'supersede' | 'queue' {
    return this.#env.onSteer
  }

  /**
   * Checks the round a body asked (user data, read inside a guard) and logs it. Resolves with the
   * call's error outcome when the round cannot be asked (nothing logged then), else null.
   */
  async ask(rec: CallRec, spec: unknown, client: boolean): Promise<ToolOutcome | null> {
    const name = rec.call.name
    let requests: InputRequests
    let state: unknown
    let expiresInMs: unknown
    try {
      const s = spec as { requests?: unknown; state?: unknown; expiresInMs?: unknown }
      const r = InputRequests.safeParse(s.requests)
      if (!r.success) return errorOutcome('INVALID_INPUT_REQUEST', `Tool '${name}' asked for input that cannot be asked: ${r.error.issues[0]!.path.join('.') || 'requests'}: ${r.error.issues[0]!.message}`)
      requests = r.data
      state = s.state
      expiresInMs = s.expiresInMs
    } catch (err) {
      return errorOutcome('INVALID_INPUT_REQUEST', `Tool '${name}' asked for input that cannot be read: ${errorText(err)}`)
    }
    for (const [key, q] of Object.entries(requests)) {
      if (q.kind === 'client' && !client) return errorOutcome('INVALID_INPUT_REQUEST', `Tool '${name}' asked a 'client' request (${key}): only a client tool (defineTool({ client: true })) has one`)
      if (q.kind === 'form') {
        if (q.schema.type !== 'object') return errorOutcome('INVALID_INPUT_REQUEST', `Tool '${name}': the form ${key}'s schema must be the JSON Schema of an object (type: 'object')`)
        const problem = await schemaProblem(q.schema)
        if (problem !== null) return errorOutcome('INVALID_INPUT_REQUEST', `Tool '${name}': the form ${key}'s schema is not a usable JSON Schema: ${problem}`)
      }
    }
    const lossy = findLossy(state === undefined ? { requests } : { requests, state }, 'round')
    if (lossy) return errorOutcome('INVALID_INPUT_REQUEST', `Tool '${name}' asked for input the log cannot store: ${lossy.why} at ${lossy.path}`)
    if (state !== undefined) {
      const bytes = Buffer.byteLength(JSON.stringify(state), 'utf8')
      if (bytes > this.#env.maxStateBytes) {
        return errorOutcome('INPUT_STATE_TOO_LARGE', `Tool '${name}' asked for input with a state of ${bytes} bytes, more than the cap of ${this.#env.maxStateBytes}`)
      }
    }
    if (expiresInMs !== undefined && !(typeof expiresInMs === 'number' && expiresInMs > 0 && Number.isFinite(expiresInMs))) {
      return errorOutcome('INVALID_INPUT_REQUEST', `Tool '${name}': expiresInMs must be a positive finite number`)
    }
    const round = (rec.input?.round ?? 0) + 1
    const { requestId, expiresAt } = this.#env.request(rec.call, round, requests, state, expiresInMs as number | undefined)
    rec.input = {
      requestId, round, requests, client,
      ...(state !== undefined ? { state } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      answered: null,
    }
    this.#arm()
    this.#host.changed()
    this.#host.notify()
    return null
  }

  /** A round restored from the log (a parked step resumed): it waits, or goes on with its logged answer. */
  restore(rec: CallRec, r: RestoredRound, client: boolean): void {
    rec.input = {
      requestId: r.requestId, round: r.round, requests: r.requests, client,
      ...(r.state !== undefined ? { state: r.state } : {}),
      ...(r.expiresAt !== undefined ? { expiresAt: r.expiresAt } : {}),
      answered: r.answered,
    }
    this.#arm()
  }

  answer(requestId: string, answer: InputAnswer, by: InputBy): 'answered' | 'lost' | 'unknown' | 'already-answered' {
    if (this.#closed) return 'unknown'
    const rec = this.#host.recs.find((r) => r.input?.requestId === requestId)
    if (rec === undefined) return 'unknown'
    if (rec.input!.answered !== null) return 'already-answered'
    return this.#answer(rec, answer, by) ? 'answered' : 'lost'
  }

  /** Claims and logs an answer; the winner of the claim is what is logged. Returns whether ours won. */
  #answer(rec: CallRec, wanted: InputAnswer, wantedBy: InputBy): boolean {
    const { won, answer, by } = this.#env.claim(rec.input!.requestId, wanted, wantedBy)
    const r = rec.input!
    this.#env.appendAnswer(rec.call, r.requestId, r.round, answer, by)
    r.answered = { answer, by }
    this.#arm()
    this.#host.changed()
    this.#host.notify()
    return won
  }

  /** The gate's own answers (a steer, a cancel, an expiry): `cancel` by who. A failure is reported. */
  #own(by: InputBy, when: (r: CallRound) => boolean = () => true): number {
    let n = 0
    for (const rec of this.#host.recs) {
      const r = rec.input
      if (r === null || r.answered !== null || !when(r)) continue
      try {
        this.#answer(rec, { action: 'cancel' }, by)
        n++
      } catch (err) {
        this.#calls.report(err, `input ${by.kind}`)
        return n
      }
    }
    return n
  }

  /** A steer: every open round is answered `cancel` `by: superseded` (its body decides what that means). */
  supersede(): number {
    if (this.#closed) return 0
    return this.#own({ kind: 'superseded' })
  }

  /** A cancel: every open round is answered `cancel` `by: canceled`; the calls end `ABORTED`. */
  cancelOpen(): void {
    if (this.#closed) return
    this.#own({ kind: 'canceled' })
  }

  hasOpen(): boolean {
    return !this.#closed && this.#host.recs.some((r) => r.input !== null && r.input.answered === null)
  }

  openIds(): string[] {
    return this.open().map((o) => o.requestId)
  }

  open(): OpenRound[] {
    const out: OpenRound[] = []
    for (const rec of this.#host.recs) {
      const r = rec.input
      if (r !== null && r.answered === null) out.push({ requestId: r.requestId, callId: rec.call.id, name: rec.call.name, round: r.round, requests: r.requests, client: r.client })
    }
    return out
  }

  /** Arms the one timer for the earliest expiry among the open rounds (or none). */
  #arm(): void {
    const env = this.#calls.env
    if (this.#timer !== undefined) {
      env.clearTimeout(this.#timer)
      this.#timer = undefined
    }
    if (this.#closed) return
    let first = Infinity
    for (const rec of this.#host.recs) {
      const r = rec.input
      if (r !== null && r.answered === null && r.expiresAt !== undefined && r.expiresAt < first) first = r.expiresAt
    }
    if (first === Infinity) return
    // tagged as the approvals' expiry timer is: a re-execution fires it where the log recorded the expiry
    this.#timer = env.setTimeout(Object.assign(() => {
      this.#timer = undefined
      if (this.#closed) return
      const now = this.#host.now()
      if (this.#own({ kind: 'expired' }, (r) => r.expiresAt !== undefined && r.expiresAt <= now) === 0) this.#arm()
    }, { [EXPIRY_TIMER]: true as const }), Math.max(0, first - this.#host.now()))
  }

  detach(): void {
    this.#closed = true
    if (this.#timer !== undefined) {
      this.#calls.env.clearTimeout(this.#timer)
      this.#timer = undefined
    }
  }
}

/** What a call's rounds need of the scheduler run. */
export interface RoundRun {
  readonly rounds: InputRounds | null
  readonly calls: CallHost
  /** Resolves at the next change of the run. */
  wait(): Promise<void>
  /** The run failed: nothing more is done for the call. */
  dead(): boolean
  /** Resolves when everything appended so far is durable (R11: an answer before the body sees it). */
  durable(): Promise<void>
}

/**
 * Runs a call's rounds from `outcome` on: while the body (or a client tool) asks a round, the
 * round is logged, its answer awaited, and the body called again with it. Resolves with the call's
 * final outcome. Never rejects.
 */
export async function throughRounds(rec: CallRec, outcome: ToolOutcome, run: RoundRun, client: boolean): Promise<ToolOutcome> {
  const name = rec.call.name
  while (outcome.required !== undefined) {
    if (run.rounds === null) return errorOutcome('INVALID_INPUT_REQUEST', `Tool '${name}' asked for input, but nobody can be asked here`)
    const bad = await run.rounds.ask(rec, outcome.required, client)
    if (bad !== null) return bad
    outcome = await afterRound(rec, run)
  }
  return outcome
}

/** Waits for the call's open round to be answered, then goes on: the next body run, or the client's result. */
export async function afterRound(rec: CallRec, run: RoundRun): Promise<ToolOutcome> {
  const name = rec.call.name
  const r = rec.input!
  while (r.answered === null && !run.dead()) await run.wait()
  if (r.answered === null) return errorOutcome('ABORTED', `Tool '${name}' was aborted while it waited for input.`)
  const { answer, by } = r.answered
  if (by.kind === 'canceled') return errorOutcome('ABORTED', `Tool '${name}' was aborted: the turn was cancelled while it waited for input.`)
  if (r.client) {
    if (answer.action === 'accept') return outputToOutcome(rec.prepared!.tool!, answer.responses[CLIENT_KEY])
    const code = clientRefusalCode(by)
    const why = by.kind === 'expired' ? 'nobody answered before it expired' : by.kind === 'superseded' ? 'superseded by new input' : answer.action === 'decline' ? 'the person declined' : 'the person dismissed it'
    return errorOutcome(code, `Tool '${name}' has no result: ${why}.`)
  }
  // R11: the body sees the answer only once it is durable, so a crash from here on never loses it
  try {
    await run.durable()
  } catch (err) {
    return errorOutcome('ABORTED', `Tool '${name}' was not run: the answer to its round could not be made durable (${errorText(err)}).`)
  }
  if (run.dead()) return errorOutcome('ABORTED', `Tool '${name}' was aborted while it waited for input.`)
  return runBody(rec, run.calls, {
    round: r.round, action: answer.action, by,
    ...(answer.action === 'accept' ? { responses: answer.responses } : {}),
    ...(r.state !== undefined ? { state: r.state } : {}),
  })
}
