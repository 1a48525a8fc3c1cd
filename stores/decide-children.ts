/**
 * `store.decide` through a parent (docs/spec/lifecycle.md §10): a parked child parks its parent's call, and the
 * parent's `approvals()` lists the child's open requests, so a person who sees them there decides
 * them there. In one process `agent.decide` routes such an id to the running child; across
 * processes (a PostgreSQL worker runs the family, an HTTP handler or another machine decides) the
 * store does the same: an approval id that is not the session's own is looked up in the children
 * of its running subagent calls (and theirs, a bounded depth), and the decision is made in the
 * child that holds the request, with every check and refusal of a direct `store.decide(childId)`.
 * The parent's log records nothing (the decision belongs to the child's log, as in one process).
 *
 * The ordinary path costs nothing more: the children are read only after the session's own check
 * refused the id (`UNKNOWN_APPROVAL`), and then that refusal stands when no running child holds it.
 */
import { TurnlogError, type EventOf, type LogEvent } from '../events/index.js'
import { approvalsReducer } from '../reducers/approvals.js'
import { inputsReducer } from '../reducers/inputs.js'
import { readAll } from './decide.js'
import type { LogStore } from './types.js'

/** How deep a decision is routed down a family (grandchildren and below). */
const MAX_DEPTH = 8

/**
 * Runs `decide(sessionId)`; when it refuses the id as `UNKNOWN_APPROVAL` and a running child (or
 * its running child…) of the session holds that request, runs `decide(childId)` instead.
 */
export async function decideThroughChildren<T>(
  store: LogStore, sessionId: string, approvalId: string, decide: (sessionId: string) => Promise<T>,
): Promise<T> {
  try {
    return await decide(sessionId)
  } catch (err) {
    if (!TurnlogError.is(err, 'UNKNOWN_APPROVAL')) throw err
    const holder = await childHolding(store, sessionId, approvalId, 0, holdsApproval)
    if (holder === undefined) throw err
    return decide(holder)
  }
}

/**
 * `store.answer` through a parent (docs/spec/lifecycle.md §11: "a child's open input requests surface in the
 * parent's inputs() as its approvals do"): as `decideThroughChildren`, for `UNKNOWN_INPUT`.
 */
export async function answerThroughChildren<T>(
  store: LogStore, sessionId: string, requestId: string, answer: (sessionId: string) => Promise<T>,
): Promise<T> {
  try {
    return await answer(sessionId)
  } catch (err) {
    if (!TurnlogError.is(err, 'UNKNOWN_INPUT')) throw err
    const holder = await childHolding(store, sessionId, requestId, 0, holdsInput)
    if (holder === undefined) throw err
    return answer(holder)
  }
}

function holdsApproval(events: readonly LogEvent[], id: string): boolean {
  const s = approvalsReducer.initial()
  for (const e of events) approvalsReducer.apply(s, e)
  return Object.hasOwn(s.byId, id)
}

function holdsInput(events: readonly LogEvent[], id: string): boolean {
  const s = inputsReducer.initial()
  for (const e of events) inputsReducer.apply(s, e)
  return Object.hasOwn(s.byId, id)
}

/** The descendant session whose log holds request `approvalId`, through running subagent calls. */
async function childHolding(store: LogStore, sessionId: string, approvalId: string, depth: number,
  holds: (events: readonly LogEvent[], id: string) => boolean): Promise<string | undefined> {
  if (depth >= MAX_DEPTH) return undefined
  let events: LogEvent[]
  try {
    events = await readAll(store, sessionId)
  } catch {
    return undefined // a child not created yet (its parent died between the two appends) holds nothing
  }
  for (const child of runningChildren(events)) {
    let childEvents: LogEvent[]
    try {
      childEvents = await readAll(store, child)
    } catch {
      continue
    }
    if (holds(childEvents, approvalId)) return child
    const deeper = await childHolding(store, child, approvalId, depth + 1, holds)
    if (deeper !== undefined) return deeper
  }
  return undefined
}

/** The children of the log's subagent calls that have no result yet, in spawn order. */
function runningChildren(events: readonly LogEvent[]): string[] {
  const running = new Map<string, string>()
  for (const e of events) {
    if (e.type === 'child/spawned') {
      const d = (e as EventOf<'child/spawned'>).data
      running.set(`${d.turn}/${d.step}/${d.callId}`, d.child)
    } else if (e.type === 'tool/result') {
      const d = (e as EventOf<'tool/result'>).data
      running.delete(`${d.turn}/${d.step}/${d.callId}`)
    }
  }
  return [...running.values()]
}
