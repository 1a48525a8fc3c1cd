/**
 * Synthetic closers: the events that close whatever a log left open, so that the log satisfies
 * every L invariant again. `repair` writes them with reason `interrupted` (the session crashed),
 * `fork` with reason `forked` (the prefix was cut at a seq). See
 * decision record "replay-engine" (docs/decisions/ in the repository) for every choice made here.
 *
 * Over ~400 lines (491), knowingly: the closers are one procedure in log order (the list below), and
 * each part reads what the parts before it closed; the tool calls' closers (part 2) are the next
 * seam to split.
 *
 * In log order, as far as each applies:
 * 1. The event a "right after" rule still owes: after a `compaction/prune`, its replacing
 *    `tool/result` (a no-op replacement: the original result's message, unchanged; L15); after a
 *    `compaction/summary`, its replacing `user/message` (the summary text, source `compaction`,
 *    replacing the surface range the summary shadows; L14); after a `schedule/fired` that is not
 *    dropped, the splice of its message (W3: the firing is logged, so its message is owed; a fresh
 *    id, where its deliver/whenBusy say).
 * 2. Inside an open step:
 *    - chunks streamed and no `assistant/message`: an `assistant/message {interrupted: true}`
 *      citing every chunk, when visible text or reasoning streamed (docs/spec/lifecycle.md §4.7, L7), else none;
 *    - after a non-interrupted message with tool-call blocks (not `max-tokens`, L10): a
 *      `tool/result TOOL_OUTCOME_UNKNOWN` for every started call without a result, then a
 *      synthetic `tool/call` + `tool/result TOOL_NOT_STARTED` pair for every block never started,
 *      in model order (L5, L6);
 *    - `step/end`: the step's natural outcome when its response was complete (`stop`,
 *      `max-tokens`, or `tools` once every call is answered), else `failed` with failure code
 *      `INTERRUPTED` (repair) or `FORKED` (fork).
 * 3. An open compaction bracket: `compaction/end {error: {code: INTERRUPTED | FORKED}}` (L14: no
 *    `turn/end` inside a bracket).
 * 4. An open turn: `turn/end {interrupted}` or `turn/end {forked}` (L12 lets these close a turn at
 *    any point, also one whose last step failed).
 *
 * Every closer carries the time of the last event of the log.
 *
 * Over ~400 lines (453), knowingly for now: the closers share one fold of the log's open state
 * (the open step, its calls, approvals, inbox and schedules) built here, and the running-call
 * closer asks child-outcome.ts for a finished child's result; moved out alone, that closer and
 * child-outcome.ts would import each other. The seam is step 2 ("inside an open step") once the
 * open-state fold is a module of its own.
 */
import type { EventOf, LogEvent, StreamChunk, ToolCallBlock } from '../events/index.js'
import { isRunnableCall } from '../events/index.js'
import { MessageAssembler } from '../models/assembler.js'
import { lifecycleReducer, type LifecycleState } from '../reducers/lifecycle.js'
import { approvalsReducer, type ApprovalRecord, type ApprovalsState } from '../reducers/approvals.js'
import { inputsReducer, type InputsState } from '../reducers/inputs.js'
import { denialCode, type ApprovalBy, type ApprovalDecision } from '../events/index.js'
import { surfaceReducer, type SurfaceState } from '../reducers/surface.js'
import { inboxReducer, type InboxState } from '../reducers/inbox.js'
import { schedulesReducer, type PendingSchedule, type SchedulesState } from '../reducers/schedules.js'
import { deliveryTargets } from '../events/invariants/schedules.js'

export type CloserReason = 'interrupted' | 'forked'

/** What the open step holds, as far as the closers need it. */
interface OpenStep {
  turn: number
  step: number
  chunkSeqs: number[]
  chunks: StreamChunk[]
  /** The non-interrupted assistant message of the step, if written. */
  message: EventOf<'assistant/message'> | null
  /** An interrupted message was written (cancel mid-stream). */
  interruptedMessage: boolean
  /** callIds that got a `tool/call`. */
  called: Set<string>
  /** callIds that logged `child/spawned` (subagent calls, docs/spec/lifecycle.md §10), with the child's id and that event's seq. */
  spawned: Map<string, { child: string; seq: number }>
}

/** The fold the closers are computed from: lifecycle + surface + the open step's content. */
export class CloserState {
  readonly lifecycle: LifecycleState = lifecycleReducer.initial()
  readonly surface: SurfaceState = surfaceReducer.initial()
  /** Approvals (docs/spec/lifecycle.md §9): a parked step is not closed; an interrupted one's open requests are decided. */
  readonly approvals: ApprovalsState = approvalsReducer.initial()
  /** Input rounds (docs/spec/lifecycle.md §11): an interrupted step's open rounds are answered `cancel` `by: canceled`. */
  readonly inputs: InputsState = inputsReducer.initial()
  step: OpenStep | null = null
  /** The last core event (for the "right after" rules of L14 and L15). */
  last: LogEvent | null = null
  /** Every `tool/result` by seq (a prune's no-op replacement copies one). */
  readonly results = new Map<number, EventOf<'tool/result'>>()
  /** Message ids seen in user messages and splices (a synthetic id must be fresh). */
  readonly ids = new Set<string>()
  /** Pending wakeups (a firing's message is owed right after it). */
  readonly schedules: SchedulesState = schedulesReducer.initial()
  /** The pending inbox (where an owed firing's splice goes). */
  readonly inbox: InboxState = inboxReducer.initial()
  /** The schedule of the last `schedule/fired` that is not dropped, and whether a turn was open. */
  fired: { schedule: PendingSchedule; busy: boolean } | null = null

  apply(e: LogEvent): void {
    lifecycleReducer.apply(this.lifecycle, e)
    surfaceReducer.apply(this.surface, e)
    approvalsReducer.apply(this.approvals, e)
    inputsReducer.apply(this.inputs, e)
    if (e.type === 'schedule/fired') {
      const d = (e as EventOf<'schedule/fired'>).data
      const p = this.schedules.pending.find((x) => x.scheduleId === d.scheduleId)
      this.fired = p && d.dropped !== true ? { schedule: { ...p }, busy: this.lifecycle.openTurn !== null } : null
    }
    schedulesReducer.apply(this.schedules, e)
    inboxReducer.apply(this.inbox, e)
    switch (e.type) {
      case 'step/start': {
        const d = (e as EventOf<'step/start'>).data
        this.step = { turn: d.turn, step: d.step, chunkSeqs: [], chunks: [], message: null, interruptedMessage: false, called: new Set(), spawned: new Map() }
        break
      }
      case 'step/end':
        this.step = null
        break
      case 'assistant/chunk':
        if (this.step) {
          this.step.chunkSeqs.push(e.seq)
          this.step.chunks.push((e as EventOf<'assistant/chunk'>).data.chunk)
        }
        break
      case 'assistant/message':
        if (this.step && e.surfaceOp === 'append') {
          const m = e as EventOf<'assistant/message'>
          if (m.data.interrupted) this.step.interruptedMessage = true
          else this.step.message = m
        }
        break
      case 'tool/call':
        this.step?.called.add((e as EventOf<'tool/call'>).data.callId)
        break
      case 'child/spawned': {
        const d = (e as EventOf<'child/spawned'>).data
        this.step?.spawned.set(d.callId, { child: d.child, seq: e.seq })
        break
      }
      case 'tool/result':
        this.results.set(e.seq, e as EventOf<'tool/result'>)
        break
      case 'user/message':
        this.ids.add((e as EventOf<'user/message'>).data.message.id)
        break
      case 'agent/inbox/spliced':
        for (const m of (e as EventOf<'agent/inbox/spliced'>).data.inserted) this.ids.add(m.id)
        break
    }
    if (isCoreType(e.type)) this.last = e
  }

  /**
   * The log stands parked (docs/spec/lifecycle.md §9): its open step waits for people's decisions and nothing
   * else (its last `step/parked`, then only splices and decisions). Quiescent, not a crash: no
   * closer is owed; resume restores the step as it is, a fork at this seq keeps it open.
   */
  get parked(): boolean {
    const w = this.approvals.waiting
    const l = this.lifecycle
    return w !== null && l.openTurn === w.turn && l.openStep === w.step
  }

  /** The open step's started calls without a result that spawned a child (docs/spec/lifecycle.md §10), with the seq of their `child/spawned`. */
  runningChildren(): RunningChild[] {
    const st = this.step
    if (st === null) return []
    return this.lifecycle.pendingToolCalls.flatMap((c) => {
      const s = st.spawned.get(c.callId)
      return s === undefined ? [] : [{ callId: c.callId, child: s.child, name: c.name, seq: s.seq }]
    })
  }

  /** True when something is open (a closer is owed). */
  get open(): boolean {
    const l = this.lifecycle
    if (this.parked) return false
    return l.openTurn !== null || l.openStep !== null || l.openCompaction !== null || this.#owedRightAfter()
  }

  #owedRightAfter(): boolean {
    return this.last?.type === 'compaction/prune' || this.last?.type === 'compaction/summary' ||
      (this.last?.type === 'schedule/fired' && this.fired !== null)
  }
}

/** The accepted decisions that apply: open requests of the open step only (the rest are logged or moot). */
function acceptedFor(s: CloserState, all: ReadonlyMap<string, AcceptedDecision> | undefined): Map<string, AcceptedDecision> {
  const out = new Map<string, AcceptedDecision>()
  const st = s.step
  if (all === undefined || all.size === 0 || st === null || s.parked || st.message === null) return out
  for (const id of s.approvals.open) {
    const r = s.approvals.byId[id]
    const a = all.get(id)
    if (r !== undefined && a !== undefined && r.decision === null && r.turn === st.turn && r.step === st.step) out.set(id, a)
  }
  return out
}

const CORE = new Set([
  'turn/start', 'turn/end', 'step/start', 'step/end', 'user/message', 'assistant/chunk', 'assistant/message', 'tool/call',
  'tool/result', 'request/header', 'agent/inbox/spliced', 'llm/retry', 'compaction/start', 'compaction/summary',
  'compaction/prune', 'compaction/end', 'session/end-seed', 'schedule/created', 'schedule/fired', 'schedule/canceled',
  'tool/approval-requested', 'tool/approval-decided', 'step/parked', 'child/spawned', 'tool/input-requested', 'tool/input-provided',
])
function isCoreType(t: string): boolean {
  return CORE.has(t)
}

/** Folds `events` into a `CloserState`. */
export function closerStateOf(events: readonly LogEvent[]): CloserState {
  const s = new CloserState()
  for (const e of events) s.apply(e)
  return s
}

export interface CloserOptions {
  /** Why the closers are written. */
  reason: CloserReason
  /** Human text of the failure and error messages (default names the reason). */
  detail?: string
  /**
   * Decisions the store accepted but the log does not hold yet (a JSONL claim file, a PostgreSQL
   * `turnlog_decisions` row), by approval id. An open request of the interrupted step that has one
   * is decided as the store accepted it (who, edited arguments; the event's time is the later of
   * the log's last time and the decision's), never `by: canceled`: whoever was told "decided" must
   * find that decision in the log (decision record "approval-stores" (docs/decisions/ in the repository), "Approvals durability").
   * Entries for approvals that are not open in the step are ignored.
   */
  decisions?: ReadonlyMap<string, AcceptedDecision>
  /**
   * Re-attachment (docs/spec/lifecycle.md §10, `resumeAgent` with a store): answers whether the resumed agent
   * re-attaches the child of this running subagent call. When at least one started call of the
   * open step without a result logged `child/spawned` and this accepts it, the step is left open
   * as it stands (only the "right after" rule of 1. applies): the resumed agent restores it, those
   * calls resume their children, an open request stays open, and every other started call without
   * a result gets its §8 result from the agent, in model order (L6: a result written here would
   * precede the re-attached call's). agent/restore.ts `runningChildren` applies the same rule.
   * Otherwise the step is closed as usual.
   */
  reattach?: (call: { callId: string; name: string }) => boolean
  /**
   * Re-issue (docs/spec/lifecycle.md §8, §12): answers whether the resumed agent issues this running call again
   * (its tool is idempotent). Like a re-attached call, it leaves the open step open.
   */
  reissue?: (call: { callId: string; name: string }) => boolean
  /**
   * Input rounds (docs/spec/lifecycle.md §11, `resumeAgent`): a started call of the open step
   * without a result that logged a round leaves the step open, as a re-attached call does: the
   * resumed agent restores it, the round waits for its answer (or goes on with one a store accepted
   * meanwhile), and the step's other running calls get their §8 result from the agent. Without
   * it (`turnlog repair`, forks), the open rounds are answered `cancel` `by: canceled`.
   */
  continueRounds?: boolean
  /**
   * Outcomes of finished children (docs/spec/lifecycle.md §10), by call id: a running subagent call whose child
   * session has ended gets the child's outcome as its result instead of `TOOL_OUTCOME_UNKNOWN`
   * (replay/child-outcome.ts reads them from the child's log).
   */
  children?: ReadonlyMap<string, ChildOutcome>
}

/** A running subagent call of the open step: its call, tool name, child id and the seq of its `child/spawned`. */
export interface RunningChild {
  callId: string
  name: string
  child: string
  seq: number
}

/** A finished child's outcome, as its parent call's result (agent/subagent.ts: the live call's). */
export type ChildOutcome = { text: string } | { error: { code: 'TOOL_ERROR'; message: string } }

/** A decision a store accepted (its side channel), as the closers log it. */
export interface AcceptedDecision {
  decision: ApprovalDecision
  by: ApprovalBy
  /** Epoch ms when it was accepted. */
  time: number
}

/**
 * The closers for `events` (complete, valid records), as full events with seq and time, starting at
 * `events.length`. Empty when nothing is open.
 */
export function computeClosers(events: readonly LogEvent[], opts: CloserOptions): LogEvent[] {
  return closersFor(closerStateOf(events), events, opts)
}

/** As `computeClosers`, from an already folded state. */
export function closersFor(s: CloserState, events: readonly LogEvent[], opts: CloserOptions): LogEvent[] {
  return closersAt(s, { length: events.length, time: events.length > 0 ? events[events.length - 1]!.time : 0 }, opts)
}

/**
 * As `closersFor`, when the events are not at hand (a streamed repair keeps only the folded state):
 * `log.length` is the number of events folded, `log.time` the time of the last one.
 */
export function closersAt(s: CloserState, log: { length: number; time: number }, opts: CloserOptions): LogEvent[] {
  const out: LogEvent[] = []
  const count = log.length
  // every closer carries one time: the log's last, or a later accepted decision's (times never go back)
  let time = log.time
  const accepted = acceptedFor(s, opts.decisions)
  for (const d of accepted.values()) if (d.time > time) time = d.time
  const code = opts.reason === 'interrupted' ? 'INTERRUPTED' : 'FORKED'
  const why = opts.detail ?? (opts.reason === 'interrupted'
    ? 'the session stopped (crash or kill) before this was written; closed by repair'
    : `the session was forked at seq ${count - 1}; closed by fork`)
  const push = (draft: Omit<LogEvent, 'seq' | 'time'>): void => {
    const e = { seq: count + out.length, time, ...draft } as LogEvent
    out.push(e)
  }
  const l = s.lifecycle
  if (s.parked) return out

  // 1. What a "right after" rule still owes.
  const last = s.last
  if (last?.type === 'compaction/prune') {
    const d = (last as EventOf<'compaction/prune'>).data
    const original = s.results.get(d.shadowedSeq)
    if (original) {
      push({
        type: 'tool/result',
        data: { ...original.data },
        surfaceOp: { op: 'replace', start: d.shadowedSeq, end: d.shadowedSeq },
        sourceEventSeqs: [d.shadowedSeq],
      })
    }
  } else if (last?.type === 'compaction/summary') {
    const d = (last as EventOf<'compaction/summary'>).data
    // the surface range (in surface order, not seq order) that the summary's shadowed seqs span
    // (min and max by a loop: a log's seq list may be too long for Math.min(...list))
    const where = new Map<number, number>()
    s.surface.seqs.forEach((q, i) => where.set(q, i))
    let lo0 = Infinity
    let hi0 = -1
    for (const q of d.shadowedSeqs) {
      const i = where.get(q)
      if (i === undefined) continue
      if (i < lo0) lo0 = i
      if (i > hi0) hi0 = i
    }
    if (hi0 >= 0) {
      const range = s.surface.seqs.slice(lo0, hi0 + 1)
      const lo = range[0]!
      const hi = range[range.length - 1]!
      let id = `${d.compactionId}-summary`
      for (let n = 2; s.ids.has(id); n++) id = `${d.compactionId}-summary-${n}`
      push({
        type: 'user/message',
        data: { message: { id, role: 'user', content: [{ type: 'text', text: d.summary }], source: { kind: 'compaction' } } },
        surfaceOp: { op: 'replace', start: lo, end: hi },
        sourceEventSeqs: range,
      })
    }
  } else if (last?.type === 'schedule/fired' && s.fired !== null) {
    const p = s.fired.schedule
    let id = `${p.scheduleId}-${last.seq}`
    for (let n = 2; s.ids.has(id); n++) id = `${p.scheduleId}-${last.seq}-${n}`
    const target = deliveryTargets(p, s.fired.busy)[0]!
    push({
      type: 'agent/inbox/spliced',
      data: {
        target,
        start: target === 'next-turn' ? s.inbox.nextTurn.length : s.inbox.nextStep.length,
        inserted: [{ id, role: 'user', content: p.content, source: { kind: 'schedule', scheduleId: p.scheduleId } }],
      },
    })
  }

  // 2. The open step (left open when its running calls re-attach their children).
  const st = s.step
  if (reattaches(s, opts)) return out
  if (l.openStep !== null && l.openTurn !== null && st !== null) {
    const { turn, step } = st
    let outcome: EventOf<'step/end'>['data']['outcome'] = { kind: 'failed', failure: { code, message: why } }
    if (st.message === null) {
      if (st.chunks.length > 0 && !st.interruptedMessage) {
        const a = new MessageAssembler()
        for (const c of st.chunks) a.push(c)
        const p = a.partial()
        if (p.streamedVisible) {
          push({
            type: 'assistant/message',
            data: { turn, step, message: p.message, finish: 'stop', interrupted: true },
            surfaceOp: 'append',
            sourceEventSeqs: [...st.chunkSeqs],
          })
        }
      }
    } else {
      const m = st.message.data
      const blocks = m.message.content.filter(isRunnableCall)
      if (m.finish === 'max-tokens') outcome = { kind: 'max-tokens' }
      else if (blocks.length === 0) outcome = { kind: 'stop' }
      else {
        // Approvals (docs/spec/lifecycle.md §9, L17): every open request of the step is decided `by: canceled`
        // first (no step/end while one is open); a call's decision then says what its result is.
        const decided = new Map<string, { decision: ApprovalDecision; by: ApprovalBy }>()
        for (const r of Object.values(s.approvals.byId) as ApprovalRecord[]) {
          if (r.turn !== turn || r.step !== step) continue
          if (r.decision === null) {
            const a = accepted.get(r.approvalId)
            const decision: ApprovalDecision = a?.decision ?? { kind: 'deny' }
            const by: ApprovalBy = a?.by ?? { kind: 'canceled' }
            push({ type: 'tool/approval-decided', data: { turn, step, callId: r.callId, approvalId: r.approvalId, decision, by } })
            decided.set(r.callId, { decision, by })
          } else decided.set(r.callId, { decision: r.decision.decision, by: r.decision.by })
        }
        const denied = (callId: string, name: string): { code: string; message: string } | null => {
          const d = decided.get(callId)
          if (d === undefined || d.decision.kind !== 'deny') return null
          return { code: denialCode(d.by), message: `Tool '${name}' was not run: its approval was ${d.by.kind === 'canceled' ? 'canceled' : 'denied'} (${why}).` }
        }
        // Input rounds (docs/spec/lifecycle.md §11, L21): every open round of the step is answered
        // `cancel` `by: canceled` (no result, no step/end while one is open); its call waited for a
        // person, no body ran: its result is ABORTED, as a cancel gives it.
        const waitedForInput = new Set<string>()
        for (const id of s.inputs.open) {
          const r = s.inputs.byId[id]!
          if (r.turn !== turn || r.step !== step) continue
          push({ type: 'tool/input-provided', data: { turn, step, callId: r.callId, requestId: r.requestId, round: r.round, answer: { action: 'cancel' }, by: { kind: 'canceled' } } })
          waitedForInput.add(r.callId)
        }
        // Started calls without a result, in model order (the lifecycle keeps them in call order).
        for (const call of l.pendingToolCalls) {
          const text = `The outcome of tool '${call.name}' is unknown: ${why}.`
          const error = denied(call.callId, call.name)
            ?? (waitedForInput.has(call.callId) ? { code: 'ABORTED', message: `Tool '${call.name}' was aborted while it waited for input: ${why}.` } : { code: 'TOOL_OUTCOME_UNKNOWN', message: text })
          // a subagent call whose child ended: the child's outcome, from its log (docs/spec/lifecycle.md §10)
          const child = st.spawned.has(call.callId) && denied(call.callId, call.name) === null ? opts.children?.get(call.callId) : undefined
          push({
            type: 'tool/result',
            data: child !== undefined && 'text' in child
              ? { turn, step, callId: call.callId, message: { role: 'tool', callId: call.callId, content: [{ type: 'text', text: child.text }] } }
              : {
                turn, step, callId: call.callId,
                message: { role: 'tool', callId: call.callId, content: [{ type: 'text', text: (child?.error ?? error).message }], isError: true },
                error: child?.error ?? error,
              },
            surfaceOp: 'append',
            sourceEventSeqs: [call.seq],
          })
        }
        // Requested but never started: a synthetic pair each, like ABORTED_BEFORE_DISPATCH.
        for (const b of blocks) {
          if (st.called.has(b.id)) continue
          const callSeq = count + out.length
          const d = decided.get(b.id)
          const args = d?.decision.kind === 'approve' && d.decision.arguments !== undefined ? d.decision.arguments : b.arguments
          push({ type: 'tool/call', data: { turn, step, callId: b.id, name: b.name, arguments: args } })
          const text = `Tool '${b.name}' was not started: ${why}.`
          const error = denied(b.id, b.name) ?? { code: 'TOOL_NOT_STARTED', message: text }
          push({
            type: 'tool/result',
            data: {
              turn, step, callId: b.id,
              message: { role: 'tool', callId: b.id, content: [{ type: 'text', text: error.message }], isError: true },
              error,
            },
            surfaceOp: 'append',
            sourceEventSeqs: [callSeq],
          })
        }
        outcome = { kind: 'tools' }
      }
    }
    push({ type: 'step/end', data: { turn, step, outcome } })
  }

  // 3. An open compaction bracket.
  if (l.openCompaction !== null) {
    push({ type: 'compaction/end', data: { compactionId: l.openCompaction, error: { code, message: why } } })
  }

  // 4. The open turn.
  if (l.openTurn !== null) {
    push({ type: 'turn/end', data: { turn: l.openTurn, reason: { kind: opts.reason } } })
  }
  return out
}

/** A running call of the open step re-attaches its child (see `CloserOptions.reattach`). */
function reattaches(s: CloserState, opts: CloserOptions): boolean {
  const l = s.lifecycle
  const st = s.step
  if ((opts.reattach === undefined && opts.reissue === undefined && opts.continueRounds !== true) || st === null || l.openStep === null || l.openTurn === null) return false
  if (opts.continueRounds === true && l.pendingToolCalls.length > 0) {
    const pending = new Set(l.pendingToolCalls.map((c) => c.callId))
    for (const r of Object.values(s.inputs.byId)) if (r.turn === st.turn && r.step === st.step && pending.has(r.callId)) return true
  }
  return l.pendingToolCalls.some((c) => st.spawned.has(c.callId)
    ? opts.reattach?.({ callId: c.callId, name: c.name }) === true
    : opts.reissue?.({ callId: c.callId, name: c.name }) === true)
}
