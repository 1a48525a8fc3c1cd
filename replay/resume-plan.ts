/**
 * Resume answers every accepted message (lifecycle.md §8): what a resumed agent owes the turn a
 * crash interrupted, decided from the repaired log alone (pure), and applied to an agent created on
 * that log. Store-agnostic: `resumeAgent` (memory, JSONL) and a PostgreSQL worker use the same two
 * functions. See docs/ARCHITECTURE.md "Decisions: resume (§8)".
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
 * 3. `limited`: the poison bound. When the interrupted turn's chain of resume turns already has
 *    `maxResumeRuns` runs, or a message was re-inserted that many times, it is not re-run again
 *    (nothing re-inserted, no resume turn) and the agent reports `agent/error` `RESUME_LIMIT`.
 */
import type { EventOf, LogEvent, UserMessage } from '../events/index.js'
import { TurnlogError } from '../events/errors.js'
import type { Agent } from '../agent/types.js'
import type { TurnlogAgent } from '../agent/agent.js'
import { inboxReducer } from '../reducers/inbox.js'

export interface ResumePlanOptions {
  /** Re-run an interrupted turn (default true); false: the claimed messages stay unanswered. */
  rerunInterrupted?: boolean
  /** The longest chain of resume turns, and the most times one message is re-inserted. Default 3. */
  maxResumeRuns?: number
}

export interface ResumePlan {
  /** The turn the crash interrupted (the log's last turn, ended `interrupted`), or null. */
  interrupted: number | null
  /** Messages to re-insert at the head of next-turn (their original ids; new ids are drawn on apply). */
  reinsert: UserMessage[]
  /** The turn a resume turn re-runs, or null when none opens. */
  rerunOf: number | null
  /** Set when the poison bound stopped a re-run: what was not re-run. */
  limited: { turn: number; resumeRuns: number; messages: string[] } | null
}

/** Decides what resuming owes the log's interrupted turn (pure; O(log)). */
export function planResume(events: readonly LogEvent[], opts: ResumePlanOptions = {}): ResumePlan {
  const max = opts.maxResumeRuns ?? 3
  const none: ResumePlan = { interrupted: null, reinsert: [], rerunOf: null, limited: null }
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

  // One pass: turn causes and starts, resume chains, re-insertion depths, the inbox before each claim.
  const starts = new Map<number, number>()
  const causes = new Map<number, { kind: string; of: number }>()
  const resumeRuns = new Map<number, number>()
  const depth = new Map<string, number>()
  const inbox = inboxReducer.initial()
  let claimed: UserMessage[] = []
  const entered = new Set<string>()
  const alreadyReinserted = new Set<string>()
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    if (e.type === 'turn/start') {
      const d = (e as EventOf<'turn/start'>).data
      starts.set(d.turn, i)
      if (d.cause) causes.set(d.turn, d.cause)
      resumeRuns.set(d.turn, d.cause?.kind === 'resume' ? (resumeRuns.get(d.cause.of) ?? 0) + 1 : 0)
    } else if (e.type === 'agent/inbox/spliced') {
      const d = (e as EventOf<'agent/inbox/spliced'>).data
      const removed = d.removedCount ?? 0
      if (i > starts.get(turn)! && i < endAt && d.outcome === undefined && removed > 0) {
        const list = d.target === 'next-step' ? inbox.nextStep : inbox.nextTurn
        for (let k = d.start; k < d.start + removed && k < list.length; k++) claimed.push(list[k]!)
      }
      for (const m of d.inserted) {
        depth.set(m.id, m.source.kind === 'resume' ? (depth.get(m.source.of) ?? 0) + 1 : 0)
        if (i > endAt && m.source.kind === 'resume') alreadyReinserted.add(m.source.of)
      }
      inboxReducer.apply(inbox, e)
    } else if (e.type === 'user/message' && i > (starts.get(turn) ?? Infinity) && i < endAt) {
      entered.add((e as EventOf<'user/message'>).data.message.id)
    }
  }
  claimed = claimed.filter((m) => !entered.has(m.id) && !alreadyReinserted.has(m.id))

  // The chain's root: follow retry and resume causes back to a turn opened by a delivery.
  let root = turn
  for (let c = causes.get(root); c !== undefined && starts.has(c.of); c = causes.get(root)) root = c.of
  let owed = false
  for (let i = starts.get(root) ?? endAt; i < endAt; i++) {
    const e = events[i]!
    if ((e.type === 'user/message' || e.type === 'tool/result') && e.surfaceOp === 'append') owed = true
    else if (e.type === 'assistant/message' && e.surfaceOp === 'append' && !(e as EventOf<'assistant/message'>).data.interrupted) owed = false
  }

  const runs = resumeRuns.get(turn) ?? 0
  const rerunBlocked = owed && runs >= max
  const dropped = rerunBlocked ? claimed : claimed.filter((m) => (depth.get(m.id) ?? 0) >= max)
  return {
    interrupted: turn,
    // a turn at the bound re-runs nothing; otherwise every message under the bound is re-inserted
    reinsert: rerunBlocked ? [] : claimed.filter((m) => (depth.get(m.id) ?? 0) < max),
    rerunOf: owed && !rerunBlocked ? turn : null,
    limited: rerunBlocked || dropped.length > 0 ? { turn, resumeRuns: runs, messages: dropped.map((m) => m.id) } : null,
  }
}

/**
 * Applies a plan to an agent created on the repaired log, before its first turn: logs the
 * re-insertion splice (new ids from the agent's id source), arms the resume turn, and reports
 * `RESUME_LIMIT` as `agent/error` (where `resume`). Opens nothing: `agent.wake()` (or any waking
 * delivery) opens the resume turn, or the first re-inserted or pending prompt.
 */
export function applyResumePlan(agent: Agent, plan: ResumePlan): void {
  const a = agent as TurnlogAgent
  if (plan.reinsert.length > 0) {
    agent.inbox.splice('next-turn', 0, 0, ...plan.reinsert.map((m) => ({
      role: 'user' as const, content: m.content, source: { kind: 'resume' as const, of: m.id },
    })))
  }
  if (plan.rerunOf !== null) a.armResume(plan.rerunOf)
  if (plan.limited) {
    const l = plan.limited
    a.reportError(new TurnlogError('RESUME_LIMIT',
      `turn ${l.turn} was interrupted again after ${l.resumeRuns} resume run(s); it is not re-run (maxResumeRuns)`, {
        sessionId: agent.sessionId, info: { turn: l.turn, resumeRuns: l.resumeRuns, messages: l.messages },
      }), 'resume')
  }
}
