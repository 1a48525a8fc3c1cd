/**
 * The commands `fc.commands` generates against the real agent: sends (followup, steer, inject),
 * bursts (R2), inbox edits (remove, replace, clear), cancels with every cause and `keepInbox`, and
 * the user's extra commands. Each checks what it can at once and that memory follows the log.
 */
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import type { CancelCause } from '../../events/index.js'
import { FUZZ_APPROVAL_TIMEOUT_MS } from './approval-tool.js'
import { countDecision } from './approvals.js'
import { answerRound, type AnswerKind } from './inputs.js'
import { checkInboxFollowsLog, failed } from './oracle.js'
import type { Run } from './run.js'
import type { FuzzCommand } from './types.js'
import { wakeupCommands } from './wakeup-commands.js'

type Cmd = fc.AsyncCommand<object, Run>

class Send implements Cmd {
  constructor(readonly kind: 'followup' | 'steer' | 'inject', readonly text: string) {}
  check = () => true
  async run(_m: object, r: Run) {
    r.accepted.push(r.agent[this.kind](this.text))
    checkInboxFollowsLog(r)
  }
  toString = () => `${this.kind}(${JSON.stringify(this.text)})`
}

class Burst implements Cmd {
  constructor(readonly n: number) {}
  check = () => true
  async run(_m: object, r: Run) {
    // (during a plugin's runMaintenance the status is idle but a wake is latched, not run)
    const wasIdle = r.agent.status === 'idle' && r.agent.inbox.nextTurn.length === 0 && r.agent.snapshot().turn.state !== 'maintaining'
    const before = r.agent.events.length
    const ids = Array.from({ length: this.n }, (_, i) => r.agent.followup(`burst ${i}`))
    r.accepted.push(...ids)
    if (wasIdle) {
      // R2: the first followup opened its turn and claimed its prompt synchronously, alone.
      const added = r.agent.events.slice(before)
      const starts = added.filter((e) => e.type === 'turn/start')
      if (starts.length !== 1 || r.agent.status !== 'running') throw failed('R2: a burst from idle must open exactly one turn synchronously', r)
      const pending = r.agent.inbox.nextTurn.map((m) => m.id)
      if (!isDeepStrictEqual(pending, ids.slice(1))) throw failed(`R2: after a burst the queue must be the other prompts in order, got ${pending}`, r)
    }
    checkInboxFollowsLog(r)
  }
  toString = () => `burst(${this.n})`
}

class Edit implements Cmd {
  constructor(readonly op: 'remove' | 'replace' | 'clear', readonly pick: number) {}
  check = () => true
  async run(_m: object, r: Run) {
    const all = [...r.agent.inbox.nextTurn, ...r.agent.inbox.nextStep]
    if (this.op === 'clear') r.agent.inbox.clear()
    else if (all.length === 0) {
      if (r.agent.inbox.remove('absent-id')) throw failed('remove of an absent id returned true', r)
    } else {
      const id = all[this.pick % all.length]!.id
      const ok = this.op === 'remove' ? r.agent.inbox.remove(id) : r.agent.inbox.replace(id, `replaced ${id}`)
      if (!ok) throw failed(`${this.op}(${id}) of a pending id returned false`, r)
      if ([...r.agent.inbox.nextTurn, ...r.agent.inbox.nextStep].some((m) => m.id === id)) throw failed(`${id} still pending after ${this.op}`, r)
    }
    checkInboxFollowsLog(r)
  }
  toString = () => `${this.op}(${this.pick})`
}

class Cancel implements Cmd {
  constructor(readonly cause: CancelCause, readonly keepInbox: boolean) {}
  check = () => true
  async run(_m: object, r: Run) {
    const running = r.agent.status === 'running'
    // run.ts records every cancel (this one as from a command) for R5
    r.canceller = 'command'
    try {
      r.agent.cancel(this.cause, { keepInbox: this.keepInbox })
    } finally {
      r.canceller = 'hook'
    }
    if (!this.keepInbox && running && (r.agent.inbox.nextTurn.length || r.agent.inbox.nextStep.length)) {
      throw failed('cancel without keepInbox must clear both lists', r)
    }
    checkInboxFollowsLog(r)
  }
  toString = () => `cancel(${JSON.stringify(this.cause)}, keepInbox=${this.keepInbox})`
}

/** A person decides one open approval (docs/spec/lifecycle.md §9): any of them, in any order. */
class Decide implements Cmd {
  constructor(readonly kind: 'approve' | 'edit' | 'deny', readonly pick: number) {}
  check = () => true
  async run(_m: object, r: Run) {
    const open = r.agent.approvals()
    if (open.length === 0) return
    const a = open[this.pick % open.length]!
    // only a needsApproval call's arguments can be edited (an asked call's were logged with its
    // tool/call), and only the fuzzer's own tool's are known to validate
    const called = r.agent.events.some((e) => e.type === 'tool/call' && (e.data as { turn: number }).turn === a.turn &&
      (e.data as { step: number }).step === a.step && (e.data as { callId: string }).callId === a.callId)
    const edit = this.kind === 'edit' && !called && a.name === 'fuzz_approval'
    const decision = this.kind === 'deny' ? { kind: 'deny' as const, reason: 'fuzz says no' }
      : edit ? { kind: 'approve' as const, arguments: { n: 100 + this.pick } } : { kind: 'approve' as const }
    await r.agent.decide(a.approvalId, decision, { by: { kind: 'user', id: 'fuzz' } })
    countDecision(r)
    if (r.agent.approvals().some((o) => o.approvalId === a.approvalId)) throw failed(`approval ${a.approvalId} still open after its decision`, r)
    checkInboxFollowsLog(r)
  }
  toString = () => `decide(${this.kind}, ${this.pick})`
}

/** A person answers one open input round (docs/spec/lifecycle.md §11): any of them, at any time. */
class Answer implements Cmd {
  constructor(readonly kind: AnswerKind, readonly pick: number) {}
  check = () => true
  async run(_m: object, r: Run) {
    const open = r.agent.inputs()
    if (open.length === 0) return
    const o = open[this.pick % open.length]!
    await answerRound(r, o.requestId, this.kind, this.pick)
    if (r.agent.inputs().some((x) => x.requestId === o.requestId)) throw failed(`input request ${o.requestId} still open after its answer`, r)
    checkInboxFollowsLog(r)
  }
  toString = () => `answer(${this.kind}, ${this.pick})`
}

/** Nobody answers: the clock passes every open request's expiry; the expiry timer fires when the scheduler says. */
class Expire implements Cmd {
  check = () => true
  async run(_m: object, r: Run) {
    r.advanceClock(FUZZ_APPROVAL_TIMEOUT_MS + 1)
  }
  toString = () => 'expire()'
}

/** The parked agent's process stops (dispose, or killed) and the session is resumed (restart.ts); nothing when not parked. */
class Restart implements Cmd {
  constructor(readonly kind: 'dispose' | 'crash') {}
  check = () => true
  async run(_m: object, r: Run) {
    if (r.restart === null || r.agent.status !== 'parked') return
    await r.restart(this.kind)
    checkInboxFollowsLog(r)
  }
  toString = () => `${this.kind}WhileParked()`
}

class UserCommand implements Cmd {
  constructor(readonly cmd: FuzzCommand) {}
  check = () => true
  async run(_m: object, r: Run) {
    r.progress.tick()
    await this.cmd.run(r.agent, { plugins: r.plugins, defer: (w) => { r.deferred.push(w) } })
    checkInboxFollowsLog(r)
  }
  toString = () => this.cmd.toString()
}

/** The command lists; `replayPath` (from a failure's path) replays exactly the commands of a shrunk run. */
export function arbCommands(max: number, extra: ReadonlyArray<fc.Arbitrary<FuzzCommand>> = [], replayPath?: string, approvals = false, inputs = false) {
  const text = fc.string({ maxLength: 8 })
  const cause = fc.oneof(
    fc.constant<CancelCause>({ kind: 'user' }),
    fc.constant<CancelCause>({ kind: 'parent' }),
    fc.string({ maxLength: 5 }).map((reason): CancelCause => ({ kind: 'hook', reason })),
  )
  return fc.commands(
    [
      fc.tuple(fc.constantFrom('followup', 'steer', 'inject') as fc.Arbitrary<'followup' | 'steer' | 'inject'>, text).map(([k, t]) => new Send(k, t)),
      fc.integer({ min: 2, max: 4 }).map((n) => new Burst(n)),
      fc.tuple(fc.constantFrom('remove', 'replace', 'clear') as fc.Arbitrary<'remove' | 'replace' | 'clear'>, fc.nat(9)).map(([op, p]) => new Edit(op, p)),
      fc.tuple(cause, fc.boolean()).map(([c, k]) => new Cancel(c, k)),
      ...wakeupCommands(),
      ...extra.map((a) => a.map((c) => new UserCommand(c))),
      ...(approvals
        ? [
          fc.tuple(fc.constantFrom('approve', 'approve', 'edit', 'deny') as fc.Arbitrary<'approve' | 'edit' | 'deny'>, fc.nat(9)).map(([k, p]) => new Decide(k, p)),
          fc.constant(new Expire()),
          fc.constantFrom('dispose', 'crash').map((k) => new Restart(k as 'dispose' | 'crash')),
        ]
        : []),
      // input rounds (docs/spec/lifecycle.md §11): answers at any time; expiries and restarts as with approvals
      ...(inputs
        ? [
          fc.tuple(fc.constantFrom<AnswerKind>('accept', 'accept', 'decline', 'decline', 'dismiss', 'dismiss', 'invalid'), fc.nat(9)).map(([k, p]) => new Answer(k, p)),
          ...(approvals ? [] : [fc.constant(new Expire()), fc.constantFrom('dispose', 'crash').map((k) => new Restart(k as 'dispose' | 'crash'))]),
        ]
        : []),
    ],
    { maxCommands: max, ...(replayPath !== undefined ? { replayPath } : {}) },
  )
}
