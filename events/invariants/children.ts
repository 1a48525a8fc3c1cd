/**
 * Child sessions, the parent's side of L19 (docs/spec/lifecycle.md §10): `child/spawned` names a call of
 * the open step that has its `tool/call` and no `tool/result` yet, once per call, and a child id
 * is spawned once in the session. That each such call gets its `tool/result` is L5's rule for
 * every call. The child's side of L19 (its header names this session, the seq of this event and
 * the call) is checked across the two logs by `verifyChild` (replay/verify-child.ts).
 */
import type { SessionEvent } from '../envelope.js'
import type { TurnState } from './structure.js'
import type { Emit } from './types.js'

export class ChildState {
  /** The open step's calls that have a `tool/call` and no `tool/result` yet. */
  readonly #running = new Set<string>()
  /** The open step's calls that spawned a child. */
  readonly #spawned = new Set<string>()
  /** Every child id of the session. */
  readonly #children = new Set<string>()

  constructor(readonly turns: TurnState) {}

  check(e: SessionEvent, emit: Emit): void {
    if (e.type !== 'child/spawned') return
    const d = e.data
    if (this.turns.openStep === null || d.turn !== this.turns.openTurn || d.step !== this.turns.openStep) {
      emit('L19', `child/spawned ${d.child} names ${d.turn}.${d.step}, which is not the open step`)
      return
    }
    if (!this.#running.has(d.callId)) emit('L19', `child/spawned ${d.child} names call ${d.callId}, which is not running (no tool/call, or its tool/result is in)`)
    if (this.#spawned.has(d.callId)) emit('L19', `call ${d.callId} spawned a second child (${d.child})`)
    if (this.#children.has(d.child)) emit('L19', `child ${d.child} is spawned a second time`)
  }

  apply(e: SessionEvent): void {
    switch (e.type) {
      case 'step/start':
        this.#running.clear()
        this.#spawned.clear()
        break
      case 'tool/call':
        this.#running.add(e.data.callId)
        break
      case 'tool/result':
        this.#running.delete(e.data.callId)
        break
      case 'child/spawned':
        this.#spawned.add(e.data.callId)
        this.#children.add(e.data.child)
        break
    }
  }
}
