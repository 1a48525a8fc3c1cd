/**
 * A finished child's outcome from its log (docs/spec/lifecycle.md §10, repair of a parent whose subagent call
 * was running when it crashed): the child may have ended before the parent logged the call's
 * result. Its log then says what the call's result is — the same result the live call gives
 * (agent/subagent.ts): the text of the last answer of a `completed` last turn, a `TOOL_ERROR`
 * naming any other end. A child that has not ended (no turn, an open turn, a last turn closed
 * `interrupted` by repair: it may still be resumed) has no outcome: the call stays
 * `TOOL_OUTCOME_UNKNOWN`, never a made-up answer.
 */
import type { EventOf, LogEvent } from '../events/index.js'
import { lastAnswer } from '../agent/subagent.js'
import type { LogStore } from '../stores/types.js'
import { TurnlogError } from '../events/errors.js'
import { join } from 'node:path'
import { exists } from './atomic-file.js'
import { isValidSessionId } from '../stores/ids.js'
import type { LogHeader } from '../events/jsonl.js'
import { closerStateOf, type ChildOutcome, type RunningChild } from './closers.js'
import { readLog } from './read-log.js'

/** The outcome of the child session whose log is `events`, or undefined while it has none. */
export function childOutcome(events: readonly LogEvent[], id: string, toolName: string): ChildOutcome | undefined {
  let end: EventOf<'turn/end'> | undefined
  for (let i = events.length - 1; i >= 0 && end === undefined; i--) {
    const e = events[i]!
    if (e.type === 'turn/start') return undefined // a turn still open
    if (e.type === 'turn/end') end = e as EventOf<'turn/end'>
  }
  if (end === undefined) return undefined
  const kind = end.data.reason.kind
  if (kind === 'interrupted') return undefined
  if (kind !== 'completed') return { error: { code: 'TOOL_ERROR', message: `Tool '${toolName}' failed: the child session ${id} ended '${kind}'` } }
  return { text: lastAnswer(events, id) }
}

/**
 * Where a parent's children's logs are (docs/spec/lifecycle.md §10: a child lives in its parent's store): a
 * `LogStore`, or the directory of a JSONL parent (each child is `<dir>/<child-id>.jsonl`).
 */
export type ChildLogSource = LogStore | string

/**
 * A child's header and events from `from` (with the file it was read from, for a directory), or
 * undefined when it has no log there. A torn tail is tolerated (repair) unless `strict` (verify:
 * the read's coded error is thrown). An id that is not a safe file name has no log in a directory.
 */
export async function readChild(from: ChildLogSource, id: string, strict = false): Promise<{ header: LogHeader; events: LogEvent[]; file?: string } | undefined> {
  if (typeof from === 'string') {
    if (!isValidSessionId(id)) return undefined // a log names the file: never a path out of DIR
    const file = join(from, `${id}.jsonl`)
    if (!(await exists(file))) return undefined
    const r = await readLog(file, { tolerateTornTail: !strict })
    return { header: r.header, events: r.events as LogEvent[], file }
  }
  if (!(await from.has(id))) return undefined
  const r = await from.open(id, 'read')
  const events: LogEvent[] = []
  try {
    for await (const e of r.events()) events.push(e)
  } finally {
    await r.close()
  }
  return { header: r.header, events }
}

/**
 * The header is this call's child (L19): its id, and its `parent` naming the parent session, the
 * seq of the call's `child/spawned` and the call. Anything else under that name (a file copied in,
 * another family's session) is not this call's child: its answer is never taken.
 */
export function isChildOf(header: LogHeader, parentId: string, c: Pick<RunningChild, 'child' | 'seq' | 'callId'>): boolean {
  const p = header.parent
  return header.id === c.child && p !== undefined && p.session === parentId && p.seq === c.seq && p.callId === c.callId
}

/**
 * The outcomes of the finished children of `running` (the parent's running subagent calls,
 * `CloserState.runningChildren`), by call id, read from `from`. A child whose log is missing,
 * unreadable, not this call's child (`isChildOf`) or not ended has none: the closers then give the
 * call `TOOL_OUTCOME_UNKNOWN`.
 */
export async function finishedChildren(from: ChildLogSource, parentId: string, running: readonly RunningChild[]): Promise<Map<string, ChildOutcome>> {
  const out = new Map<string, ChildOutcome>()
  for (const c of running) {
    try {
      const log = await readChild(from, c.child)
      if (log === undefined || !isChildOf(log.header, parentId, c)) continue
      const o = childOutcome(log.events, c.child, c.name)
      if (o !== undefined) out.set(c.callId, o)
    } catch {
      // an unreadable child log: its outcome is unknown (the call's TOOL_OUTCOME_UNKNOWN)
    }
  }
  return out
}

/**
 * The outcomes `repairEvents` needs for a parent log held in memory (its `children` option):
 * `repairEvents(log, { children: await readChildOutcomes(store, log) })` repairs as `repair`,
 * `repairFile` and `repairSession` do. Reads nothing when no subagent call was running.
 */
export async function readChildOutcomes(from: ChildLogSource, log: { header: LogHeader; events: readonly LogEvent[] }): Promise<Map<string, ChildOutcome>> {
  const running = closerStateOf(log.events).runningChildren()
  if (running.length === 0) return new Map()
  return finishedChildren(from, log.header.id, running)
}

/**
 * Throws unless the stored log at a running call's child id is that call's child (L19; the
 * re-attachment of a resumed parent, docs/spec/lifecycle.md §10): a log naming another parent, another call, or
 * none (an unrelated session's log) is never resumed as the child, so its answer never becomes
 * the call's result. The call's result is then its `TOOL_ERROR` naming the mismatch.
 */
export async function assertChildOf(store: LogStore, child: string, parent: { session: string; seq: number; callId: string }): Promise<void> {
  const r = await store.open(child, 'read')
  const header = r.header
  await r.close()
  if (isChildOf(header, parent.session, { child, seq: parent.seq, callId: parent.callId })) return
  const names = header.parent === undefined ? 'no parent' : `parent ${header.parent.session} seq ${header.parent.seq} call ${header.parent.callId}`
  throw new TurnlogError('INVALID_HEADER', `the log at ${child} is not the child of call ${parent.callId} (session ${parent.session}, child/spawned at seq ${parent.seq}): its header names ${names} (invariant L19); it is not re-attached`, {
    sessionId: child, field: 'parent', seq: parent.seq, invariant: 'L19',
  })
}
