/**
 * `store.decide` for stores whose log has one writer (JSONL, memory): a decision made by any
 * process, with no agent running (lifecycle §9). It takes the session's write lock, checks the
 * decision against the log, appends `tool/approval-decided` and releases the lock; it resolves
 * when the decision is durable. A resumed agent finds it and goes on (agent/restore.ts).
 *
 * First decision wins: the lock serialises deciders, and the check reads the log under it. While
 * another process holds the lock (a decider: retried for `waitMs`; an agent that runs the session:
 * `SESSION_OWNED`, decide through that agent) nothing is written. Refusals log nothing:
 * `UNKNOWN_APPROVAL`, `APPROVAL_DECIDED`, `INVALID_ARGS` (edited arguments that the tool's JSON
 * Schema, as logged in the step's `request/header`, refuses).
 */
import { z } from 'zod'
import {
  LogChecker, TurnlogError, findLossy,
  type ApprovalBy, type ApprovalDecision, type EventOf, type LogEvent,
} from '../events/index.js'
import { approvalsReducer } from '../reducers/approvals.js'
import type { LogStore, LogWriter } from './types.js'

export interface StoreDecideOptions {
  /** Who decided (default `{kind: 'user'}`). */
  by?: { kind: 'user'; id?: string }
  /** How long to retry while another decider holds the session's lock (default 2000 ms). */
  waitMs?: number
  /** The decision's time (default `Date.now`). */
  clock?: () => number
}

/** A decision as the caller gives it: edited arguments as a value (any JSON). */
export type StoreDecisionInput = { kind: 'approve'; arguments?: unknown } | { kind: 'deny'; reason?: string }

/** Decides an open approval of a stored session. Resolves with the appended event. */
export async function decideInStore(
  store: LogStore, sessionId: string, approvalId: string, input: StoreDecisionInput, opts: StoreDecideOptions = {},
): Promise<EventOf<'tool/approval-decided'>> {
  const decision = checkDecision(input)
  const by = checkBy(opts.by)
  const w = await openWithin(store, sessionId, opts.waitMs ?? 2000)
  try {
    const events: LogEvent[] = []
    for await (const e of w.events()) events.push(e)
    const draft = decisionEvent(sessionId, events, approvalId, decision, by, (opts.clock ?? Date.now)())
    // the log's own checker has the last word (L17: same step, after its request, once)
    const checker = new LogChecker()
    for (const e of events) checker.apply(e)
    const v = checker.check(draft)
    if (v.length > 0) {
      throw new TurnlogError('INVARIANT', `the decision would break ${v[0]!.invariant}: ${v[0]!.message}`, { sessionId, seq: draft.seq, invariant: v[0]!.invariant })
    }
    await w.append([draft], { expectedSeq: events.length })
    return draft
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
  if (decision.kind === 'approve' && decision.arguments !== undefined) {
    const ask = events.some((e) => e.type === 'tool/call' && e.seq < r.seq && (e as EventOf<'tool/call'>).data.callId === r.callId)
    if (ask) throw new TurnlogError('INVALID_ARGS', `approval ${approvalId} was asked after its tool/call was logged: its arguments cannot be edited`, { ...where, field: 'decision.arguments', seq: r.seq })
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

function checkDecision(input: unknown): ApprovalDecision {
  const kind = (input as { kind?: unknown } | null)?.kind
  if (kind === 'deny') {
    const reason = (input as { reason?: unknown }).reason
    if (reason !== undefined && typeof reason !== 'string') throw new TurnlogError('INVALID_ARGUMENT', "a denial's reason must be a string", { field: 'decision.reason' })
    return reason === undefined ? { kind: 'deny' } : { kind: 'deny', reason }
  }
  if (kind !== 'approve') throw new TurnlogError('INVALID_ARGUMENT', "a decision's kind is 'approve' or 'deny'", { field: 'decision.kind' })
  const args = (input as { arguments?: unknown }).arguments
  if (args === undefined) return { kind: 'approve' }
  const lossy = findLossy(args, 'arguments')
  if (lossy) throw new TurnlogError('INVALID_ARGS', `edited arguments must be JSON: ${lossy.why} at ${lossy.path}`, { field: 'decision.arguments' })
  return { kind: 'approve', arguments: JSON.stringify(args) }
}

function checkBy(by: unknown): ApprovalBy {
  if (by === undefined) return { kind: 'user' }
  const kind = (by as { kind?: unknown } | null)?.kind
  const id = (by as { id?: unknown } | null)?.id
  if (kind !== 'user' || (id !== undefined && typeof id !== 'string')) throw new TurnlogError('INVALID_ARGUMENT', "a decision's by is { kind: 'user', id?: string }", { field: 'by' })
  return id === undefined ? { kind: 'user' } : { kind: 'user', id }
}
