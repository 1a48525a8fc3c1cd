/**
 * `store.decide` for stores whose log has one writer (JSONL, memory): a decision made by any
 * process, with or without an agent running the session (docs/spec/lifecycle.md §9). Resolves when the
 * decision is durable.
 *
 * With a decision side channel (JSONL: stores/jsonl/decisions.ts) the decision is checked against
 * the log (read, no lock), then **claimed** in the channel: the claim is the arbiter of "first
 * decision wins" for every decider, the running owner included, and it is durable when it returns.
 * Then it is logged: by this call under the write lock when no process owns the session (a
 * SIGKILLed owner's stale lock is taken over), else by the owner, which watches the channel (this
 * call waits up to `waitMs` to see it logged, and returns `seq: null` if the owner has not logged
 * it by then; it is durable all the same, and the owner, or the next one, logs it).
 *
 * Without a channel (memory) the write lock serialises deciders and the check reads the log under
 * it; while an agent owns the session the call is `SESSION_OWNED` (decide through that agent).
 * Refusals log and claim nothing: `UNKNOWN_APPROVAL`, `APPROVAL_DECIDED`, `INVALID_ARGS` (edited
 * arguments that the tool's JSON Schema, as logged in the step's `request/header`, refuses).
 */
import { z } from 'zod'
import {
  LogChecker, TurnlogError, findLossy, isProviderApproval,
  type ApprovalBy, type ApprovalDecision, type EventOf, type LogEvent,
} from '../events/index.js'
import { approvalsReducer } from '../reducers/approvals.js'
import { checkInputSize } from '../events/input-size.js'
import type { DecisionChannel, LogStore, LogWriter } from './types.js'

export interface StoreDecideOptions {
  /** Who decided (default `{kind: 'user'}`). */
  by?: { kind: 'user'; id?: string }
  /** How long to wait for the session's lock (no channel), or to see the owner log the decision (default 2000 ms). */
  waitMs?: number
  /** The decision's time (default `Date.now`). */
  clock?: () => number
  /** @internal the store's side channel for this session (JSONL). */
  channel?: DecisionChannel
}

/** A decision as the caller gives it: edited arguments as a value (any JSON). */
export type StoreDecisionInput = { kind: 'approve'; arguments?: unknown } | { kind: 'deny'; reason?: string }

/** What `store.decide` resolves with: the decision, durable; `seq` where it was logged, or null while its owner has not logged it yet. */
export interface StoreDecided {
  sessionId: string
  approvalId: string
  callId: string
  turn: number
  step: number
  decision: ApprovalDecision
  by: ApprovalBy
  time: number
  seq: number | null
  /**
   * True when this call appended the decision itself because no process owned the session: the
   * session then waits for whoever resumes it. False when the session's running owner logged it
   * (or will: `seq` null), which carries the session on by itself.
   */
  loggedHere: boolean
}

/** @internal */
export function decided(sessionId: string, e: EventOf<'tool/approval-decided'>, seq: number | null, loggedHere = false): StoreDecided {
  const d = e.data
  return { sessionId, approvalId: d.approvalId, callId: d.callId, turn: d.turn, step: d.step, decision: d.decision, by: d.by, time: e.time, seq, loggedHere }
}

/** @internal */
export async function readAll(store: LogStore, sessionId: string): Promise<LogEvent[]> {
  const r = await store.open(sessionId, 'read')
  try {
    const events: LogEvent[] = []
    for await (const e of r.events()) events.push(e)
    return events
  } finally {
    await r.close()
  }
}

/** The decision checked against `events` (refusals as coded errors) and against the log's own checker. */
/** @internal */
export function checkedDraft(sessionId: string, events: LogEvent[], approvalId: string, decision: ApprovalDecision, by: ApprovalBy, time: number): EventOf<'tool/approval-decided'> {
  const draft = decisionEvent(sessionId, events, approvalId, decision, by, time)
  // the log's own checker has the last word (L17: same step, after its request, once)
  const checker = new LogChecker()
  for (const e of events) checker.apply(e)
  const v = checker.check(draft)
  if (v.length > 0) {
    throw new TurnlogError('INVARIANT', `the decision would break ${v[0]!.invariant}: ${v[0]!.message}`, { sessionId, seq: draft.seq, invariant: v[0]!.invariant })
  }
  return draft
}

/** The logged decision of `approvalId` in `events`, if any. */
/** @internal */
export function loggedDecision(events: readonly LogEvent[], approvalId: string): EventOf<'tool/approval-decided'> | undefined {
  return events.find((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided' && (e as EventOf<'tool/approval-decided'>).data.approvalId === approvalId)
}

/** Decides an open approval of a stored session. Resolves when the decision is durable. */
export async function decideInStore(
  store: LogStore, sessionId: string, approvalId: string, input: StoreDecisionInput, opts: StoreDecideOptions = {},
): Promise<StoreDecided> {
  const decision = checkDecision(input)
  const by = checkBy(opts.by)
  const clock = opts.clock ?? Date.now
  const waitMs = opts.waitMs ?? 2000
  if (opts.channel === undefined) return decideUnderLock(store, sessionId, approvalId, decision, by, clock, waitMs)
  const time = clock()
  const draft = checkedDraft(sessionId, await readAll(store, sessionId), approvalId, decision, by, time)
  const winner = opts.channel.claim({ approvalId, decision, by, time })
  if (winner !== null) {
    throw new TurnlogError('APPROVAL_DECIDED', `approval ${approvalId} was already decided (${winner.decision.kind} by ${winner.by.kind}${winner.by.kind === 'user' && winner.by.id !== undefined ? ` ${winner.by.id}` : ''})`, { sessionId, field: 'approvalId', info: { approvalId } })
  }
  // claimed: durable. Now logged, by us (no owner) or by the owner (it watches the channel).
  const until = Date.now() + waitMs
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    let w: LogWriter | null = null
    try {
      w = await store.open(sessionId, 'write')
    } catch (err) {
      if (!TurnlogError.is(err, 'SESSION_OWNED')) throw err
    }
    if (w !== null) {
      try {
        const events: LogEvent[] = []
        for await (const e of w.events()) events.push(e)
        const logged = loggedDecision(events, approvalId)
        if (logged !== undefined) return decided(sessionId, logged, logged.seq)
        const e = checkedDraft(sessionId, events, approvalId, decision, by, time)
        await w.append([e], { expectedSeq: events.length })
        return decided(sessionId, e, e.seq, true)
      } finally {
        await w.close()
      }
    }
    const logged = loggedDecision(await readAll(store, sessionId), approvalId)
    if (logged !== undefined) return decided(sessionId, logged, logged.seq)
    if (Date.now() + delay > until) return decided(sessionId, draft, null)
    await new Promise((r) => setTimeout(r, delay))
  }
}

async function decideUnderLock(
  store: LogStore, sessionId: string, approvalId: string, decision: ApprovalDecision, by: ApprovalBy, clock: () => number, waitMs: number,
): Promise<StoreDecided> {
  const w = await openWithin(store, sessionId, waitMs)
  try {
    const events: LogEvent[] = []
    for await (const e of w.events()) events.push(e)
    const draft = checkedDraft(sessionId, events, approvalId, decision, by, clock())
    await w.append([draft], { expectedSeq: events.length })
    return decided(sessionId, draft, draft.seq, true)
  } finally {
    await w.close()
  }
}

async function openWithin(store: LogStore, sessionId: string, waitMs: number): Promise<LogWriter> {
  const until = Date.now() + waitMs
  for (let delay = 20; ; delay = Math.min(delay * 2, 200)) {
    try {
      return await store.open(sessionId, 'write')
    } catch (err) {
      if (!(TurnlogError.is(err) && err.code === 'SESSION_OWNED') || Date.now() + delay > until) {
        if (TurnlogError.is(err) && err.code === 'SESSION_OWNED') {
          throw new TurnlogError('SESSION_OWNED', `session ${sessionId} is owned by a running process: decide through its agent (agent.decide), or when it has stopped`, { sessionId }, { cause: err })
        }
        throw err
      }
      await new Promise((r) => setTimeout(r, delay))
    }
  }
}

/** The `tool/approval-decided` event for `approvalId` at the end of `events`, or a coded refusal. */
export function decisionEvent(
  sessionId: string, events: readonly LogEvent[], approvalId: string, decision: ApprovalDecision, by: ApprovalBy, time: number,
): EventOf<'tool/approval-decided'> {
  const s = approvalsReducer.initial()
  for (const e of events) approvalsReducer.apply(s, e)
  const where = { sessionId, field: 'approvalId', info: { approvalId } }
  const r = Object.hasOwn(s.byId, approvalId) ? s.byId[approvalId]! : undefined
  if (r === undefined) throw new TurnlogError('UNKNOWN_APPROVAL', `no approval ${JSON.stringify(approvalId)} was requested in session ${sessionId}`, where)
  if (r.decision !== null) {
    throw new TurnlogError('APPROVAL_DECIDED', `approval ${approvalId} was already decided (${r.decision.decision.kind} by ${r.decision.by.kind}, seq ${r.decision.seq})`, { ...where, seq: r.decision.seq })
  }
  // docs/spec/lifecycle.md §9 "Expiry": once expiresAt has passed the approval is the clock's (denied by expired,
  // logged by whoever opens the session next); a person's late decision is refused, even when no
  // process ran the session to log the expiry
  if (by.kind === 'user' && r.expiresAt !== undefined && time >= r.expiresAt) {
    throw new TurnlogError('APPROVAL_DECIDED', `approval ${approvalId} expired at ${new Date(r.expiresAt).toISOString()}: it is denied (APPROVAL_EXPIRED), a late decision is refused`, { ...where, seq: r.seq })
  }
  if (decision.kind === 'approve' && decision.arguments !== undefined) {
    const ask = events.some((e) => e.type === 'tool/call' && e.seq < r.seq && (e as EventOf<'tool/call'>).data.callId === r.callId)
    if (ask) throw new TurnlogError('INVALID_ARGS', `approval ${approvalId} was asked after its tool/call was logged: its arguments cannot be edited`, { ...where, field: 'decision.arguments', seq: r.seq })
    // issue 23: a call the provider runs keeps the provider's arguments
    const provider = events.some((e) => {
      if (e.type !== 'assistant/message' || e.seq > r.seq) return false
      const d = (e as EventOf<'assistant/message'>).data
      return d.turn === r.turn && d.step === r.step && d.message.content.some((b) => b.type === 'tool-call' && b.id === r.callId && isProviderApproval(b))
    })
    if (provider) throw new TurnlogError('INVALID_ARGS', `approval ${approvalId} is for a call the provider runs (${r.name}): the provider keeps its own arguments, so they cannot be edited`, { ...where, field: 'decision.arguments', seq: r.seq })
    const problem = schemaProblem(events, r.seq, r.name, decision.arguments)
    if (problem !== null) throw new TurnlogError('INVALID_ARGS', problem, { ...where, field: 'decision.arguments', seq: r.seq })
  }
  return {
    seq: events.length, time, type: 'tool/approval-decided',
    data: { turn: r.turn, step: r.step, callId: r.callId, approvalId, decision, by },
  } as EventOf<'tool/approval-decided'>
}

/** Checks edited arguments against the tool's JSON Schema in the last `request/header` before `seq`. */
function schemaProblem(events: readonly LogEvent[], seq: number, name: string, args: string): string | null {
  let header: EventOf<'request/header'> | undefined
  for (let i = Math.min(seq, events.length - 1); i >= 0; i--) {
    if (events[i]!.type === 'request/header') {
      header = events[i] as EventOf<'request/header'>
      break
    }
  }
  const spec = header?.data.tools.find((t) => t.name === name)
  if (spec === undefined) return null // the model saw no schema for it: nothing to check against
  try {
    const schema = z.fromJSONSchema(spec.parameters as Parameters<typeof z.fromJSONSchema>[0])
    const r = schema.safeParse(JSON.parse(args))
    return r.success ? null : `Invalid arguments for tool '${name}':\n${z.prettifyError(r.error)}`
  } catch (err) {
    return `the arguments of tool '${name}' cannot be checked: ${err instanceof Error ? err.message : String(err)}`
  }
}

/** @internal */
export function checkDecision(input: unknown): ApprovalDecision {
  const kind = (input as { kind?: unknown } | null)?.kind
  if (kind === 'deny') {
    const reason = (input as { reason?: unknown }).reason
    if (reason !== undefined && typeof reason !== 'string') throw new TurnlogError('INVALID_ARGUMENT', "a denial's reason must be a string", { field: 'decision.reason' })
    if (reason !== undefined) checkInputSize(reason, 'decision.reason')
    return reason === undefined ? { kind: 'deny' } : { kind: 'deny', reason }
  }
  if (kind !== 'approve') throw new TurnlogError('INVALID_ARGUMENT', "a decision's kind is 'approve' or 'deny'", { field: 'decision.kind' })
  const args = (input as { arguments?: unknown }).arguments
  if (args === undefined) return { kind: 'approve' }
  // a string's size is known before anything is walked; any other value is measured as its JSON
  if (typeof args === 'string') checkInputSize(args, 'decision.arguments')
  const lossy = findLossy(args, 'arguments')
  if (lossy) throw new TurnlogError('INVALID_ARGS', `edited arguments must be JSON: ${lossy.why} at ${lossy.path}`, { field: 'decision.arguments' })
  const text = JSON.stringify(args)
  checkInputSize(text, 'decision.arguments')
  return { kind: 'approve', arguments: text }
}

/** @internal */
export function checkBy(by: unknown): ApprovalBy {
  if (by === undefined) return { kind: 'user' }
  const kind = (by as { kind?: unknown } | null)?.kind
  const id = (by as { id?: unknown } | null)?.id
  if (kind !== 'user' || (id !== undefined && typeof id !== 'string')) throw new TurnlogError('INVALID_ARGUMENT', "a decision's by is { kind: 'user', id?: string }", { field: 'by' })
  return id === undefined ? { kind: 'user' } : { kind: 'user', id }
}
