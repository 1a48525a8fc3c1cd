/**
 * External inputs, re-issued at their recorded positions: inbox sends and edits the driver does
 * not make, cancels (planned in cancels.ts), approval decisions (decisions.ts), manual compactions, and a maintenance of our own where
 * the recording shows a wake latched during one that logged nothing.
 */
import type { EventOf, LogEvent, UserMessage } from '../../events/index.js'
import { cancelPlan, settleBeforeCancel } from './cancels.js'
import { diverge } from './compare.js'
import { decisionInput, issueAnswer, issueDecision } from './decisions.js'
import type { Host } from './state.js'
import { isScheduleInput, issueSchedule } from './schedules.js'

export function issueExternal(rx: Host, hookWaiting: boolean): boolean {
  let did = false
  for (;;) {
    const next = rx.rec[rx.len]
    if (next === undefined || rx.done) return did
    if (rx.switches[rx.switchAt]?.k === rx.len) return true // a process boundary comes first
    const plan = cancelPlan(rx, next)
    if ((plan !== null || issuable(rx, next) || decisionInput(next)) && hookWaiting && !rx.choose()) return did
    if (plan !== null) {
      // bodies whose recorded outcome proves they settled before the cancel settle first; the
      // cancel is issued on the next tick, once their settlement has reached the driver
      if (settleBeforeCancel(rx)) return true
      rx.cancelled.add(plan.turn)
      rx.agent.cancel(plan.cause, { keepInbox: plan.keepInbox })
      did = true
      continue
    }
    if (isScheduleInput(next)) {
      // wakeups (docs/spec/lifecycle.md §10): made, canceled and fired from outside the turn, like sends
      if (hookWaiting && !rx.choose()) return did
      issueSchedule(rx, next)
      did = true
      continue
    }
    if (issuable(rx, next)) {
      const before = rx.len
      if (silentMaintenanceDue(rx, next.seq)) openSilentMaintenance(rx)
      issueSplice(rx, next as EventOf<'agent/inbox/spliced'>)
      if (rx.len === before) {
        // The agent logs a splice as it makes it, or not at all (an empty one, nothing to remove):
        // re-issuing it again would change nothing, so this recorded splice cannot be reproduced.
        diverge(rx, {
          seq: before, expected: next, actual: null, kind: 'missing',
          waiting: 'logged nothing for the re-issued splice (an empty or out-of-range splice no agent writes)',
        })
        return false
      }
      did = true
      continue
    }
    if (issueDecision(rx, next)) {
      did = true
      continue
    }
    // an answer is checked asynchronously: it is issued once and appends later
    if (issueAnswer(rx, next)) return true
    if (issueManualCompaction(rx, next)) return true
    if (next.type === 'turn/start' && rx.silentEnd !== null) {
      const end = rx.silentEnd
      rx.silentEnd = null
      end()
      return true
    }
    // A turn that opens from idle with no waking send right before it: a wake latched during a
    // maintenance that logged nothing (a declined manual compaction), or an `agent.wake()`.
    if (next.type === 'turn/start' && (next as EventOf<'turn/start'>).data.cause?.kind !== 'retry' && !rx.maintaining &&
      rx.agent.status === 'idle' && rx.gates.length === 0 && rx.agent.wake()) return true
    return did
  }
}

/**
 * From idle, splices that end in a `turn/start` although the last of them cannot have woken the
 * agent (an edit, or not a send at the tail): the wake was latched during a maintenance that
 * logged nothing (a manual compaction with nothing to do). Reproduced by holding a maintenance
 * of our own open from the first of those splices to the `turn/start`.
 */
export function silentMaintenanceDue(rx: Host, seq: number): boolean {
  const a = rx.agent
  if (rx.maintaining || rx.silentEnd !== null || a.status !== 'idle' || a.lifecycle.openTurn !== null) return false
  let i = seq
  let send = false
  while (rx.rec[i]?.type === 'agent/inbox/spliced') {
    const d = (rx.rec[i] as EventOf<'agent/inbox/spliced'>).data
    if (d.outcome === undefined && d.inserted.length > 0) send = true
    i++
  }
  const t = rx.rec[i]
  if (!send || t?.type !== 'turn/start' || (t as EventOf<'turn/start'>).data.cause !== undefined) return false
  const last = (rx.rec[i - 1] as EventOf<'agent/inbox/spliced'>).data
  return !(last.outcome === undefined && (last.removedCount ?? 0) === 0 && last.inserted.length === 1)
}

export function openSilentMaintenance(rx: Host): void {
  rx.opts.trace?.(`silent maintenance from seq ${rx.len}`)
  rx.agent.runMaintenance(() => new Promise<void>((resolve) => (rx.silentEnd = resolve))).then(
    () => rx.schedule(),
    () => rx.schedule(),
  )
}

/**
 * A compaction that starts while no turn is open is a manual one (`compactNow` runs through
 * `runMaintenance`; the triggers run inside turns): re-issued through the first plugin with a
 * `compactNow(agent)` method.
 */
export function issueManualCompaction(rx: Host, next: LogEvent): boolean {
  if (next.type !== 'compaction/start' && next.type !== 'compaction/prune') return false
  const a = rx.agent
  if (rx.maintaining || a.status !== 'idle' || a.lifecycle.openTurn !== null) return false
  const plugin = rx.plugins.find((p) => typeof (p as { compactNow?: unknown }).compactNow === 'function') as
    { compactNow(agent: unknown): Promise<unknown> } | undefined
  if (!plugin) return false
  rx.maintaining = true
  rx.opts.trace?.(`manual compaction at seq ${rx.len}`)
  plugin.compactNow(a).then(
    () => {
      rx.maintaining = false
      rx.schedule()
    },
    (err: unknown) => {
      rx.maintaining = false
      if (rx.done) return
      const seq = rx.len
      diverge(rx, {
        seq, expected: rx.rec[seq] ?? null, actual: null, kind: 'missing',
        waiting: `refused the manual compaction: ${(err as Error)?.message ?? String(err)}`,
      })
    },
  )
  return true
}

/** An inbox splice the driver does not make itself: a send or an edit from outside. */
export function issuable(rx: Host, next: LogEvent): boolean {
  if (next.type !== 'agent/inbox/spliced') return false
  const d = (next as EventOf<'agent/inbox/spliced'>).data
  if (d.outcome === undefined && (d.removedCount ?? 0) > 0) return false // a claim: the driver's
  if (d.outcome === undefined && d.inserted.length > 0 && d.inserted.every((m) => m.source.kind === 'tool')) return false // tool contexts
  return true
}

export function issueSplice(rx: Host, e: EventOf<'agent/inbox/spliced'>): boolean {
  const d = e.data
  const removed = d.removedCount ?? 0
  const a = rx.agent
  if (d.outcome === 'canceled') {
    a.splice(d.target, d.start, removed, [...d.inserted], 'canceled')
    return true
  }
  const list = d.target === 'next-turn' ? a.inbox.nextTurn : a.inbox.nextStep
  const wake = wakes(rx, e)
  if (d.inserted.length === 1 && d.start === list.length) {
    a.send(d.inserted[0]! as UserMessage, d.target, wake)
  } else {
    a.splice(d.target, d.start, 0, [...d.inserted])
  }
  return true
}

/** Did rx send wake the agent? Idle: a `turn/start` follows. Aborting: the next turn opens right
 * after the aborted one ends (a latched wake). Running: it does not matter. */
export function wakes(rx: Host, e: LogEvent): boolean {
  const a = rx.agent
  // the last input the dying process got: the next process opens the turn (resumeAgent's wake)
  if (rx.switches[rx.switchAt]?.k === e.seq + 1) return false
  if (rx.silentEnd !== null) return true
  if (rx.maintaining) return latchedByMaintenance(rx, e.seq)
  if (a.status === 'idle') return rx.rec[e.seq + 1]?.type === 'turn/start'
  if (!rx.aborted()) return true
  // while aborting, a waking send is re-targeted to next-turn: a next-step insertion did not wake
  if ((e as EventOf<'agent/inbox/spliced'>).data.target === 'next-step') return false
  const turn = a.lifecycle.openTurn
  const end = turn === null ? undefined : rx.turnEnds.get(turn)
  return end !== undefined && rx.rec[end.seq + 1]?.type === 'turn/start'
}

/**
 * A send during a manual compaction: a waking one is latched and opens a turn as soon as the
 * maintenance ends, i.e. directly after its last compaction event. Nothing can happen between
 * that event and the end of the maintenance, so a `turn/start` right after a splice there is a
 * later send from idle, and the sends during the maintenance did not wake.
 */
export function latchedByMaintenance(rx: Host, seq: number): boolean {
  let i = seq + 1
  for (; i < rx.rec.length; i++) {
    const x = rx.rec[i]!
    if (x.type === 'agent/inbox/spliced' || x.type.startsWith('compaction/')) continue
    if (x.type === 'tool/result' && rx.rec[i - 1]?.type === 'compaction/prune') continue
    if (x.type === 'user/message' && rx.rec[i - 1]?.type === 'compaction/summary') continue
    break
  }
  return rx.rec[i]?.type === 'turn/start' && rx.rec[i - 1]?.type !== 'agent/inbox/spliced'
}
