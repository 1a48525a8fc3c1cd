/**
 * Restoring a parked step (docs/spec/lifecycle.md §9): an agent created over a log that stands parked (its open
 * step waits for people only: the last `step/parked`, then only splices and decisions) continues
 * that step as it is — no closers, no re-run — when it is woken (`resumeAgent` does at once).
 * The same for a step whose running calls each ran a child when the process died (docs/spec/lifecycle.md §10):
 * those calls re-attach their children (`runningChildren`).
 * This file reads where each call of the step stands from the log; the scheduler continues there.
 */
import { isRunnableCall, type EventOf, type LogEvent, type ToolCallBlock } from '../events/index.js'
import type { ApprovalsState } from '../reducers/approvals.js'
import type { LifecycleState } from '../reducers/lifecycle.js'
import { RESUME_CHILD, type ChildResumer, type RestoredCall, type RestoredRound } from '../tools/types.js'

export interface RestoredStep {
  turn: number
  step: number
  calls: RestoredCall[]
  /** A decision was logged after the last `step/parked` (a store decided while no agent ran). */
  decidedSinceParked: boolean
  /**
   * The step stands parked (docs/spec/lifecycle.md §9). False: it is restored because its running calls each
   * ran a child at a crash, and those calls re-attach their children (docs/spec/lifecycle.md §10).
   */
  parked: boolean
}

/** A running call's child (docs/spec/lifecycle.md §10): its id and the seq of its `child/spawned`. */
export interface RunningChild {
  id: string
  seq: number
}

/**
 * The log's open step re-attaches its children (docs/spec/lifecycle.md §10): at least one started call without a
 * result logged `child/spawned` and is a subagent call the resumed agent can re-attach (`reattach`:
 * its tool is a `defineSubagent` tool of the agent), logged an input round (§11: `ASKING`), or is
 * issued again (§12: `REISSUED`). Returns those calls by call id, else null. The rest of the step
 * continues as it stood (restoredStep): an open request stays open, another started call without a
 * result gets its §8 result. `resumeAgent` leaves such a step open (repair's `reattach`, `reissue`
 * and `continueRounds`, replay/closers.ts, the same rule). O(step).
 */
export function runningChildren(
  events: readonly LogEvent[], lifecycle: LifecycleState, reattach: (name: string) => boolean,
  reissue: (name: string) => boolean = () => false,
): Map<string, RunningChild | typeof REISSUED | typeof ASKING> | null {
  const turn = lifecycle.openTurn
  const step = lifecycle.openStep
  if (turn === null || step === null || lifecycle.pendingToolCalls.length === 0) return null
  const spawned = new Map<string, RunningChild>()
  const asked = new Set<string>()
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!
    if (e.type === 'step/start') break
    if (e.type === 'child/spawned') {
      const d = (e as EventOf<'child/spawned'>).data
      spawned.set(d.callId, { id: d.child, seq: e.seq })
    } else if (e.type === 'tool/input-requested') asked.add((e as EventOf<'tool/input-requested'>).data.callId)
  }
  const out = new Map<string, RunningChild | typeof REISSUED | typeof ASKING>()
  for (const call of lifecycle.pendingToolCalls) {
    const c = spawned.get(call.callId)
    if (c !== undefined) {
      if (reattach(call.name)) out.set(call.callId, c)
    } else if (asked.has(call.callId)) {
      // a round logged and no result (repair's `continueRounds` left the step open): it waits in its round
      out.set(call.callId, ASKING)
    } else if (reissue(call.name)) out.set(call.callId, REISSUED)
  }
  return out.size > 0 ? out : null
}

/**
 * A running call that logged a round (docs/spec/lifecycle.md §11), in the map of `runningChildren`:
 * a crash before its step parked left the step open (repair's `continueRounds`), and the restored
 * call waits in its round, or goes on with an answer given meanwhile.
 */
export const ASKING = 'asking' as const

/**
 * A running call that is issued again (docs/spec/lifecycle.md §8, §12: its tool is idempotent), in the map of
 * `runningChildren` (its step is restored for it as for a re-attached child).
 */
export const REISSUED = 'reissue' as const

/** True when the log stands parked in its open step (resume restores it; repair leaves it alone). */
export function standsParked(lifecycle: LifecycleState, approvals: ApprovalsState): boolean {
  const w = approvals.waiting
  return w !== null && lifecycle.openTurn === w.turn && lifecycle.openStep === w.step
}

/** Where each call of the parked open step stands, from the log (O(step)). */
export function restoredStep(
  events: readonly LogEvent[], lifecycle: LifecycleState, approvals: ApprovalsState,
  children: ReadonlyMap<string, RunningChild | typeof REISSUED | typeof ASKING> | null = null,
): RestoredStep {
  const parked = children === null
  const turn = lifecycle.openTurn!
  const step = lifecycle.openStep!
  let start = events.length - 1
  while (start >= 0 && !(events[start]!.type === 'step/start' && (events[start] as EventOf<'step/start'>).data.step === step)) start--
  let blocks: ToolCallBlock[] = []
  let answeredSinceParked = false
  const called = new Map<string, { seq: number; args: string }>()
  const answered = new Set<string>()
  // each call's last round (docs/spec/lifecycle.md §11): open, or answered and not yet gone on
  const rounds = new Map<string, RestoredRound>()
  for (let i = start + 1; i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'tool/input-requested') {
      const d = (e as EventOf<'tool/input-requested'>).data
      rounds.set(d.callId, {
        requestId: d.requestId, round: d.round, requests: d.requests,
        ...(d.state !== undefined ? { state: d.state } : {}),
        ...(d.expiresAt !== undefined ? { expiresAt: d.expiresAt } : {}),
        answered: null,
      })
      continue
    }
    if (e.type === 'tool/input-provided') {
      const d = (e as EventOf<'tool/input-provided'>).data
      const r = rounds.get(d.callId)
      if (r !== undefined && r.requestId === d.requestId) r.answered = { answer: d.answer, by: d.by }
      if (e.seq > (approvals.waiting?.parkedSeq ?? Infinity)) answeredSinceParked = true
      continue
    }
    if (e.type === 'assistant/message' && e.surfaceOp === 'append' && !(e as EventOf<'assistant/message'>).data.interrupted) {
      blocks = (e as EventOf<'assistant/message'>).data.message.content.filter(isRunnableCall)
    } else if (e.type === 'tool/call') {
      const d = (e as EventOf<'tool/call'>).data
      called.set(d.callId, { seq: e.seq, args: d.arguments })
    } else if (e.type === 'tool/result' && e.surfaceOp === 'append') answered.add((e as EventOf<'tool/result'>).data.callId)
  }
  const byCall = new Map<string, RestoredCall['approval']>()
  let decidedSinceParked = answeredSinceParked
  const parkedSeq = approvals.waiting?.parkedSeq ?? Infinity
  for (const r of Object.values(approvals.byId)) {
    if (r.turn !== turn || r.step !== step) continue
    const ask = called.has(r.callId) && called.get(r.callId)!.seq < r.seq
    byCall.set(r.callId, {
      id: r.approvalId, ask,
      ...(r.expiresAt !== undefined ? { expiresAt: r.expiresAt } : {}),
      decided: r.decision === null ? null : { decision: r.decision.decision, by: r.decision.by },
    })
    if (r.decision !== null && r.decision.seq > parkedSeq) decidedSinceParked = true
  }
  const calls = blocks.map((block): RestoredCall => {
    const c = called.get(block.id)
    const approval = byCall.get(block.id) ?? null
    const running = c !== undefined && !answered.has(block.id)
    const found = running ? children?.get(block.id) : undefined
    const child = found === REISSUED || found === ASKING ? undefined : found
    const round = running ? rounds.get(block.id) : undefined
    return {
      ...(round !== undefined ? { input: round } : {}),
      block,
      callSeq: c?.seq ?? null,
      calledArguments: c?.args ?? null,
      committed: answered.has(block.id),
      approval,
      ...(child !== undefined ? { child } : {}),
      ...(found === REISSUED ? { reissue: true as const } : {}),
      // a step restored for its children (docs/spec/lifecycle.md §10): another call that was running at the
      // crash (no request of its own waits) may have run: its §8 repair result, as the closers give it.
      // A parked step (§11): a call without a round or a request of its own ran beside an open round and
      // settled; its result waited in the memory of the process that parked the step, which is gone:
      // the same §8 result, and its body is not run again (R10), even for a re-issued tool (§12):
      // the call ran to its end, and a parked step runs no body before an answer (L18)
      ...((children !== null || parked) && running && found === undefined && round === undefined &&
        (parked ? approval === null : approval?.decided?.decision.kind !== 'deny' && !(approval !== null && approval.decided === null))
        ? { unknown: { code: 'TOOL_OUTCOME_UNKNOWN', message: `The outcome of tool '${block.name}' is unknown: ${parked ? UNKNOWN_PARKED : UNKNOWN_WHY}.` } }
        : {}),
    }
  })
  return { turn, step, calls, decidedSinceParked, parked }
}

/** Why a call that ran beside a re-attached child has no known outcome (the closers' words, replay/closers.ts). */
const UNKNOWN_WHY = 'the session stopped (crash or kill) before this was written; closed by repair'
/** Why a call whose result waited behind an open round of a parked step has no known outcome. */
const UNKNOWN_PARKED = 'it ran while another call of its step waited for a person, and the session left the process that held its result before that call was answered'

/** The agent's options carry a child resumer (`resumeAgent` sets one): it can re-attach children. */
export function resumesChildren(options: object): boolean {
  return typeof childResumer(options) === 'function'
}

/** The child resumer of an agent's options (docs/spec/lifecycle.md §10), if any. */
export function childResumer(options: object): ChildResumer | undefined {
  return (options as { [RESUME_CHILD]?: ChildResumer })[RESUME_CHILD]
}
