/**
 * The family oracle (docs/spec/lifecycle.md §10, L19, L20): after a run with children, every session the
 * parent spawned (and theirs) is read back from the run's store and checked against its parent.
 * - L19: the child's log exists and its header names the parent session, the seq of the parent's
 *   `child/spawned` and the call (`verifyChild`); each spawning call has exactly one `tool/result`
 *   in the parent, after the `child/spawned`.
 * - Every L invariant on the child's own log (`verify`: L20 for its budget ends among them).
 * - The call's result is the child's answer: a result without error is the text of the child's
 *   last answer, and a child whose last turn did not complete gives an error result (never a
 *   made-up answer).
 * - No orphan: the child's log ends with no open turn, and nothing starts in the child (a turn, a
 *   step, a model request, a tool call) after its parent's call got its result; a child that ended
 *   `aborted {cause: parent}` has a parent whose turn was cancelled or whose call was cut off.
 * The clock is shared by the whole family (one fake clock), so "after" is read from `time`.
 */
import type { EventOf, LogEvent } from '../../events/index.js'
import { lastAnswer } from '../../agent/subagent.js'
import { verify } from '../../replay/verify.js'
import { verifyChild } from '../../replay/verify-child.js'
import type { LogStore } from '../../stores/types.js'
import { bump } from './census.js'
import { FuzzViolation } from './failure.js'

const STARTS = new Set(['turn/start', 'step/start', 'request/header', 'tool/call'])

async function readSession(store: LogStore, id: string): Promise<{ header: { id: string; parent?: { session: string; seq: number; callId?: string } }; events: LogEvent[] } | undefined> {
  if (!(await store.list()).includes(id)) return undefined
  const r = await store.open(id, 'read')
  try {
    const events: LogEvent[] = []
    for await (const e of r.events()) events.push(e)
    return { header: r.header as never, events }
  } finally {
    await r.close()
  }
}

/**
 * Checks the family under `rootId` (recursively) in `store`; throws a `FuzzViolation` carrying
 * the root's log. Counts what the children did into `tally` (`child <how it ended>`, `grandchild`).
 */
export async function checkChildren(store: LogStore, rootId: string, rootEvents: readonly LogEvent[], tally: Record<string, number>, maxSteps = 6): Promise<void> {
  const fail = (msg: string, inv = 'L19'): FuzzViolation => new FuzzViolation(inv, msg, [...rootEvents])
  const walk = async (parentId: string, events: readonly LogEvent[], depth: number): Promise<void> => {
    for (const e of events) {
      if (e.type !== 'child/spawned') continue
      const sp = (e as EventOf<'child/spawned'>).data
      const results = events.filter((x): x is EventOf<'tool/result'> => {
        if (x.type !== 'tool/result') return false
        const d = (x as EventOf<'tool/result'>).data
        return d.callId === sp.callId && d.turn === sp.turn && d.step === sp.step
      })
      if (results.length !== 1) throw fail(`call ${sp.callId} of ${parentId} spawned ${sp.child} and has ${results.length} tool/result(s)`)
      const result = results[0]!
      if (result.seq < e.seq) throw fail(`call ${sp.callId} of ${parentId} has its tool/result (seq ${result.seq}) before its child/spawned (seq ${e.seq})`)
      const child = await readSession(store, sp.child)
      if (child === undefined) throw fail(`${parentId} spawned ${sp.child} at seq ${e.seq}, which is not in the store`)
      const v19 = verifyChild(parentId, events, child.header)
      if (v19.length > 0) throw fail(v19[0]!.message)
      const v = verify(child.events, { maxStepsPerTurn: maxSteps, maxRetries: 5 })
      if (!v.ok) {
        const x = v.violations[0]!
        throw fail(`child ${sp.child}: ${x.invariant}@${x.seq} ${x.message}`, x.invariant)
      }
      // no orphan: nothing starts in the child once its parent's call has its result
      const late = child.events.find((c) => STARTS.has(c.type) && c.time > result.time)
      if (late !== undefined) throw fail(`child ${sp.child} logged ${late.type} (seq ${late.seq}) after its parent's call ${sp.callId} got its result`)
      const ends = child.events.filter((c): c is EventOf<'turn/end'> => c.type === 'turn/end')
      const opened = child.events.filter((c) => c.type === 'turn/start').length
      if (opened !== ends.length) throw fail(`child ${sp.child} is left with an open turn (its parent's call ${sp.callId} has its result)`)
      const last = ends.at(-1)?.data.reason
      const how = last === undefined ? 'no turn' : last.kind === 'aborted' ? `aborted ${(last as { cause?: { kind?: string } }).cause?.kind ?? '?'}` : last.kind
      bump(tally, `${depth > 1 ? 'grandchild' : 'child'} ${how}`)
      // the result is the child's answer, never a made-up one
      const text = result.data.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')
      if (result.data.error === undefined) {
        let answer: string
        try {
          answer = lastAnswer(child.events, sp.child)
        } catch (err) {
          throw fail(`call ${sp.callId} of ${parentId} has a result without error, but ${err instanceof Error ? err.message : String(err)}`)
        }
        if (text !== answer) throw fail(`call ${sp.callId} of ${parentId} has the result ${JSON.stringify(text)}, its child answered ${JSON.stringify(answer)}`)
      } else if (last?.kind === 'completed' && !cutOff(events, sp, result)) {
        throw fail(`call ${sp.callId} of ${parentId} is an error (${result.data.error.code}) though its child ${sp.child} completed and the call was not cut off`)
      }
      if (last?.kind === 'aborted' && (last as { cause?: { kind?: string } }).cause?.kind === 'parent' && !cutOff(events, sp, result)) {
        throw fail(`child ${sp.child} ended aborted with cause parent, but its parent's call ${sp.callId} was not cancelled`)
      }
      await walk(sp.child, child.events, depth + 1)
    }
  }
  await walk(rootId, rootEvents, 1)
}

/** The call was cut off: its turn ended aborted, or its result is an abort/timeout/abandon error. */
function cutOff(events: readonly LogEvent[], sp: EventOf<'child/spawned'>['data'], result: EventOf<'tool/result'>): boolean {
  const code = result.data.error?.code
  if (code !== undefined && code !== 'TOOL_ERROR') return true
  return events.some((e) => e.type === 'turn/end' && (e as EventOf<'turn/end'>).data.turn === sp.turn && (e as EventOf<'turn/end'>).data.reason.kind === 'aborted')
}
