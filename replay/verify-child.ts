/**
 * L19 across two logs (docs/spec/invariants.md): a child session's header names its parent session, the
 * seq of the parent's `child/spawned` for it and the call. The parent's side (where that event may
 * stand) is the log checker's (events/invariants/children.ts); this is the link between the logs.
 */
import type { EventOf, LogEvent } from '../events/index.js'
import type { Violation } from '../events/invariants/types.js'

/** The parts of a child's header that L19 reads. */
export interface ChildHeaderLike {
  id: string
  parent?: { session: string; seq: number; callId?: string }
}

/**
 * The L19 violations of `child` against its parent's log (`parentId`, `parentEvents`): none when
 * the header's `parent` names `parentId`, a `child/spawned` at `parent.seq` for this child, and
 * that event's call. Each violation is reported at seq 0 of the child (its header).
 */
export function verifyChild(parentId: string, parentEvents: readonly LogEvent[], child: ChildHeaderLike): Violation[] {
  const out: Violation[] = []
  const bad = (message: string) => out.push({ invariant: 'L19', seq: 0, message: `child ${child.id}: ${message}` })
  const p = child.parent
  if (p === undefined) {
    bad('its header names no parent')
    return out
  }
  if (p.session !== parentId) bad(`its header names parent ${p.session}, not ${parentId}`)
  const e = parentEvents[p.seq]
  if (e === undefined || e.type !== 'child/spawned') {
    bad(`the parent's seq ${p.seq} is ${e === undefined ? 'past its log' : `a ${e.type}`}, not its child/spawned`)
    return out
  }
  const d = (e as EventOf<'child/spawned'>).data
  if (d.child !== child.id) bad(`the parent's child/spawned at seq ${p.seq} names ${d.child}`)
  if (p.callId !== d.callId) bad(`its header names call ${p.callId ?? '(none)'}, the parent's child/spawned call ${d.callId}`)
  return out
}
