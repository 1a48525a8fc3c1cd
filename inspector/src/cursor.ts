/**
 * The state at the selected seq, computed by the project's reducers (issue "See a session": no
 * second implementation in the page). A live projection (`createLiveProjection`, the agent's own
 * fold) is moved forward event by event; moving back folds again from seq 0. Either way the state
 * equals `stateAt(events, seq)` (P2), which the browser test checks against Node's `stateAt`.
 */
import type { LogEvent } from '../../events/envelope.js'
import type { ReplayState } from '../../reducers/index.js'
import { createLiveProjection, type LiveProjection } from '../../reducers/projection.js'

export class StateCursor {
  #proj: LiveProjection = createLiveProjection()

  constructor(private readonly events: () => readonly LogEvent[]) {}

  /** The state as of and including `seq` (mutable, owned by the cursor: read it before the next move). */
  at(seq: number): ReplayState {
    const events = this.events()
    const want = seq + 1
    if (want < this.#proj.count) this.#proj = createLiveProjection()
    for (let i = this.#proj.count; i < want && i < events.length; i++) this.#proj.apply(events[i]!)
    return this.#proj.state
  }

  get count(): number {
    return this.#proj.count
  }
}
