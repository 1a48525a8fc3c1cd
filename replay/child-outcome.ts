/**
 * A finished child's outcome from its log (lifecycle §10, repair of a parent whose subagent call
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
import { join } from 'node:path'
import { exists } from './atomic-file.js'
import { isValidSessionId } from '../stores/ids.js'
import { closerStateOf, type ChildOutcome } from './closers.js'
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
 * The outcomes of the finished children of the log's running subagent calls, read from `store`
 * (a child whose log is missing or unreadable has none). Reads nothing when no such call runs.
 */
export async function finishedChildren(store: LogStore, events: readonly LogEvent[]): Promise<Map<string, ChildOutcome>> {
  const out = new Map<string, ChildOutcome>()
  for (const c of closerStateOf(events).runningChildren()) {
    try {
      if (!(await store.has(c.child))) continue
      const r = await store.open(c.child, 'read')
      const evs: LogEvent[] = []
      try {
        for await (const e of r.events()) evs.push(e)
      } finally {
        await r.close()
      }
      const o = childOutcome(evs, c.child, c.name)
      if (o !== undefined) out.set(c.callId, o)
    } catch {
      // an unreadable child log: its outcome is unknown (the call's TOOL_OUTCOME_UNKNOWN)
    }
  }
  return out
}

/**
 * As `finishedChildren`, for a JSONL log repaired as a file (`turnlog repair`): each child's log
 * is `<dir>/<child>.jsonl` beside it (a torn tail tolerated; missing or unreadable: no outcome).
 */
export async function finishedChildrenBeside(dir: string, running: ReadonlyArray<{ callId: string; child: string; name: string }>): Promise<Map<string, ChildOutcome>> {
  const out = new Map<string, ChildOutcome>()
  for (const c of running) {
    try {
      if (!isValidSessionId(c.child)) continue // a log names the file: never a path out of DIR
      const file = join(dir, `${c.child}.jsonl`)
      if (!(await exists(file))) continue
      const o = childOutcome((await readLog(file, { tolerateTornTail: true })).events as LogEvent[], c.child, c.name)
      if (o !== undefined) out.set(c.callId, o)
    } catch {
      // an unreadable child log: its outcome is unknown
    }
  }
  return out
}
