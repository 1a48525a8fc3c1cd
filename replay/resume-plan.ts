/**
 * Resume answers every accepted message (docs/spec/lifecycle.md §8): what a resumed agent owes the turn a
 * crash interrupted, decided from the repaired log alone (pure), and applied to an agent created on
 * that log. Store-agnostic: `resumeAgent` (memory, JSONL) and a PostgreSQL worker use the same two
 * functions. See decision record "resume" (docs/decisions/ in the repository).
 *
 * The plan, for the last turn of the log when it ended `interrupted` (a repaired crash):
 * 1. `reinsert`: the messages that turn claimed and that never appeared as its `user/message`
 *    (in claim order), to be re-inserted at the head of next-turn by one splice, with new ids and
 *    `source: {kind: 'resume', of}`. Messages a previous resume already re-inserted after that
 *    turn's end (a resume that crashed before its turn opened) are not re-inserted twice.
 * 2. `rerunOf`: the turn to re-run with `turn/start {cause: {kind: 'resume', of}}`, when input is
 *    owed: since the start of the interrupted turn's chain (the turns linked to it by retry and
 *    resume causes), an appended `user/message` or `tool/result` that no later complete (not
 *    interrupted) `assistant/message` answers. The chain, not the turn alone: a retry or resume turn
 *    that crashed before it logged anything still owes its chain's input.
 * 3. `limited`: the poison bound (docs/spec/lifecycle.md §8 as amended, issue 24). Only resume runs that
 *    reached their model request (a `request/header` or an `assistant/chunk` in the turn) count
 *    toward `maxResumeRuns`; runs that did not (a worker killed or fenced right after `turn/start`)
 *    are bounded separately at `maxResumeRuns × 3`, and so is re-insertion (a re-inserted message
 *    never entered a request). At a bound, what is not re-run is given up: the agent appends a
 *    durable `resume/given-up` naming the acknowledged messages left unanswered, and reports
 *    `agent/error` `RESUME_LIMIT`. Messages a give-up after this turn's end already names are not
 *    named (nor reported) again, so resuming a given-up session twice writes one record.
 *
 * The resume turn records the limit in force on its cause (`{kind: 'resume', of, maxResumeRuns}`),
 * so `verify` checks L13 against what the agent ran with.
 */
import type { EventOf, LogEvent, UserMessage } from '../events/index.js'
import { TurnlogError } from '../events/errors.js'
import type { Agent } from '../agent/types.js'
import type { TurnlogAgent } from '../agent/agent.js'
import { inboxReducer } from '../reducers/inbox.js'

export interface ResumePlanOptions {
  /** Re-run an interrupted turn (default true); false: the claimed messages stay unanswered. */
  rerunInterrupted?: boolean
  /** Resume runs of one chain that reached their request (default 3); runs that did not, and
   * re-insertions of one message, are bounded at three times this. */
  maxResumeRuns?: number
}

/** Why resume gave up (the `reason` of `resume/given-up`). */
export type GiveUpReason = 'resume-runs' | 'unreached-runs' | 're-insertions'

/** What resume gives up on: the data of the `resume/given-up` it appends. */
export interface ResumeGiveUp {
  /** The interrupted turn not re-run (or whose messages are not re-inserted). */
  turn: number
  reason: GiveUpReason
  /** Resume runs of the turn's chain that reached their request / that did not. */
  runs: number
  unreachedRuns: number
  /** The limit in force. */
  maxResumeRuns: number
  /** The acknowledged ids (originals, not resume copies) left unanswered. */
  messages: string[]
}

export interface ResumePlan {
  /** The turn the crash interrupted (the log's last turn, ended `interrupted`), or null. */
  interrupted: number | null
  /** Messages to re-insert at the head of next-turn (their original ids; new ids are drawn on apply). */
  reinsert: UserMessage[]
  /** The turn a resume turn re-runs, or null when none opens. */
  rerunOf: number | null
  /** The limit the resume turn records on its cause. */
  maxResumeRuns: number
  /** Set when a bound stopped a re-run or a re-insertion and a give-up is to be recorded. */
  limited: ResumeGiveUp | null
}

/** Decides what resuming owes the log's interrupted turn (pure; O(log)). */
export function planResume(events: readonly LogEvent[], opts: ResumePlanOptions = {}): ResumePlan {
  const max = opts.maxResumeRuns ?? 3
  const none: ResumePlan = { interrupted: null, reinsert: [], rerunOf: null, maxResumeRuns: max, limited: null }
  // the last turn/end; resume is owed only when it is `interrupted` and no turn started since
  let endAt = -1
  for (let i = events.length - 1; i >= 0; i--) {
    const t = events[i]!.type
    if (t === 'turn/start') return none
    if (t === 'turn/end') {
      endAt = i
      break
    }
  }
  if (endAt < 0) return none
  const end = events[endAt] as EventOf<'turn/end'>
  if (end.data.reason.kind !== 'interrupted' || opts.rerunInterrupted === false) {
    return { ...none, interrupted: end.data.reason.kind === 'interrupted' ? end.data.turn : null }
  }
  const turn = end.data.turn

  // One pass: turn causes and starts, which turns reached their request, re-insertion depths and
  // origins, the inbox before each claim, what earlier give-ups named.
  const starts = new Map<number, number>()
  const causes = new Map<number, { kind: string; of: number }>()
  const reached = new Set<number>()
  const depth = new Map<string, number>()
  const origin = new Map<string, string>()
  const inbox = inboxReducer.initial()
  let claimed: UserMessage[] = []
  let open: number | null = null
  const entered = new Set<string>()
  const alreadyReinserted = new Set<string>()
  const namedBefore = new Set<string>()
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'turn/start') {
      const d = (e as EventOf<'turn/start'>).data
      starts.set(d.turn, i)
      open = d.turn
      if (d.cause) causes.set(d.turn, d.cause)
    } else if (e.type === 'turn/end') {
      open = null
    } else if (e.type === 'request/header' || e.type === 'assistant/chunk') {
      if (open !== null) reached.add(open)
    } else if (e.type === 'agent/inbox/spliced') {
      const d = (e as EventOf<'agent/inbox/spliced'>).data
      const removed = d.removedCount ?? 0
      if (i > starts.get(turn)! && i < endAt && d.outcome === undefined && removed > 0) {
        const list = d.target === 'next-step' ? inbox.nextStep : inbox.nextTurn
        for (let k = d.start; k < d.start + removed && k < list.length; k++) claimed.push(list[k]!)
      }
      for (const m of d.inserted) {
        const of = m.source.kind === 'resume' ? m.source.of : null
        depth.set(m.id, of !== null ? (depth.get(of) ?? 0) + 1 : 0)
        origin.set(m.id, of !== null ? origin.get(of) ?? of : m.id)
        if (i > endAt && of !== null) alreadyReinserted.add(of)
      }
      inboxReducer.apply(inbox, e)
    } else if (e.type === 'user/message' && i > (starts.get(turn) ?? Infinity) && i < endAt) {
      entered.add((e as EventOf<'user/message'>).data.message.id)
    } else if (e.type === 'resume/given-up' && i > endAt) {
      for (const id of (e as EventOf<'resume/given-up'>).data.messages) namedBefore.add(id)
    }
  }
  claimed = claimed.filter((m) => !entered.has(m.id) && !alreadyReinserted.has(m.id))
  const originOf = (id: string) => origin.get(id) ?? id

  // The chain's root: follow retry and resume causes back to a turn opened by a delivery.
  let root = turn
  for (let c = causes.get(root); c !== undefined && starts.has(c.of); c = causes.get(root)) root = c.of
  // Owed: input no later complete answer answers. Unanswered: the user messages after the chain's
  // last complete final (`stop`) answer: what a give-up names.
  let owed = false
  let unanswered: string[] = []
  for (let i = starts.get(root) ?? endAt; i < endAt; i++) {
    const e = events[i]!
    if ((e.type === 'user/message' || e.type === 'tool/result') && e.surfaceOp === 'append') {
      owed = true
      if (e.type === 'user/message') unanswered.push(originOf((e as EventOf<'user/message'>).data.message.id))
    } else if (e.type === 'assistant/message' && e.surfaceOp === 'append' && !(e as EventOf<'assistant/message'>).data.interrupted) {
      owed = false
      if ((e as EventOf<'assistant/message'>).data.finish === 'stop') unanswered = []
    }
  }

  // The resume runs of the interrupted turn's chain (it included, when it is a resume turn).
  let runs = 0
  let unreachedRuns = 0
  for (let t = turn, c = causes.get(t); c?.kind === 'resume'; t = c.of, c = causes.get(t)) {
    if (reached.has(t)) runs++
    else unreachedRuns++
  }
  const reason: GiveUpReason | null = !owed ? null : runs >= max ? 'resume-runs' : unreachedRuns >= max * 3 ? 'unreached-runs' : null
  const rerunBlocked = reason !== null
  const underBound = (m: UserMessage) => (depth.get(m.id) ?? 0) < max * 3
  const dropped = rerunBlocked ? claimed : claimed.filter((m) => !underBound(m))
  const named = [...new Set([...(rerunBlocked ? unanswered : []), ...dropped.map((m) => originOf(m.id))])]
    .filter((id) => !namedBefore.has(id))
  return {
    interrupted: turn,
    // a turn at the bound re-runs nothing; otherwise every message under the bound is re-inserted
    reinsert: rerunBlocked ? [] : claimed.filter(underBound),
    rerunOf: owed && !rerunBlocked ? turn : null,
    maxResumeRuns: max,
    limited: named.length > 0
      ? { turn, reason: reason ?? 're-insertions', runs, unreachedRuns, maxResumeRuns: max, messages: named }
      : null,
  }
}

/**
 * Applies a plan to an agent created on the repaired log, before its first turn: appends the
 * give-up record (first, so a crash after it leaves the record and still re-runs what is owed),
 * logs the re-insertion splice (new ids from the agent's id source), arms the resume turn with the
 * limit in force, and hands the agent `RESUME_LIMIT` (`agent/error` where `resume`) to report when
 * its owed work starts (`wake()`, or the first waking delivery), so a listener added with `agent.on`
 * before that hears it. Opens nothing.
 */
export function applyResumePlan(agent: Agent, plan: ResumePlan): void {
  const a = agent as TurnlogAgent
  const l = plan.limited
  if (l) a.append({ type: 'resume/given-up', data: { ...l, messages: [...l.messages] } })
  if (plan.reinsert.length > 0) {
    agent.inbox.splice('next-turn', 0, 0, ...plan.reinsert.map((m) => ({
      role: 'user' as const, content: m.content, source: { kind: 'resume' as const, of: m.id },
    })))
  }
  if (plan.rerunOf !== null) a.armResume(plan.rerunOf, plan.maxResumeRuns)
  if (l) {
    const why = l.reason === 'resume-runs' ? `${l.runs} resume run(s) that reached the model`
      : l.reason === 'unreached-runs' ? `${l.unreachedRuns} resume run(s) that died before their request`
      : `${l.maxResumeRuns * 3} re-insertion(s)`
    a.deferReport(new TurnlogError('RESUME_LIMIT',
      `turn ${l.turn} is given up after ${why} (maxResumeRuns ${l.maxResumeRuns}): ${l.messages.length} message(s) left unanswered, named in the log (resume/given-up)`, {
        sessionId: agent.sessionId,
        info: { turn: l.turn, reason: l.reason, resumeRuns: l.runs, unreachedRuns: l.unreachedRuns, maxResumeRuns: l.maxResumeRuns, messages: [...l.messages] },
      }), 'resume')
  }
}
