/**
 * The state at the selected seq, computed by the project's reducers (issue "See a session": no
 * second implementation in the page): `applyEvent` (the recipe `createLiveProjection` and `stateAt`
 * run) applied inside immer `produce`, so every state is a structurally shared snapshot.
 *
 * Checkpoints: the state after every `every` events (0, N, 2N, …), built in the background in
 * chunks of N events (`step()`). A seq is reached by folding at most N events from the nearest
 * checkpoint at or before it — or from the state shown last, when that is closer and before it
 * (stepping forward folds one event). Snapshots share every object they did not change (immer), so
 * a checkpoint costs roughly the arrays an N-event chunk appended to (history, surface, transcript
 * items), not a copy of the state: the 50 checkpoints of a 100k-event log took ~21 MB in Node
 * (decision record "inspector" (docs/decisions/ in the repository), "The inspector on big logs"). immer runs without autoFreeze: the states are
 * only ever changed through `produce`, and freezing walked the whole tree at every chunk
 * (measured 1.5–2× slower).
 *
 * Every state equals `stateAt(events, seq)` (P2); the browser test checks it against Node's.
 */
import { enableArrayMethods, Immer } from 'immer'
import type { LogEvent } from '../../events/envelope.js'
import type { ReplayState } from '../../reducers/index.js'
import { applyEvent, initialReplayState } from '../../reducers/projection.js'

/** Events between two checkpoints (the most a scrub folds) on big or growing logs. */
export const CHECKPOINT_EVERY = 2000

/** The interval for a log of `n` events: about 40 checkpoints, between 250 and 2,000 events apart
 * (a small log scrubs from a near checkpoint; a big one keeps memory bounded). A live log grows, so
 * it gets the big-log interval from the start. */
export function checkpointEveryFor(n: number, live: boolean): number {
  return live ? CHECKPOINT_EVERY : Math.min(CHECKPOINT_EVERY, Math.max(250, Math.ceil(n / 40)))
}

let immer: Immer | null = null
function im(): Immer {
  if (!immer) {
    // a splice on a drafted array otherwise drafts every shifted element (reducers/projection.ts)
    enableArrayMethods()
    immer = new Immer({ autoFreeze: false })
  }
  return immer
}

interface Snap { state: ReplayState; count: number }

export class StateCursor {
  readonly every: number
  /** checkpoints[k]: the state after k × every events. */
  readonly #checkpoints: ReplayState[] = [initialReplayState()]
  #current: Snap
  #lastFolded = 0

  constructor(private readonly events: () => readonly LogEvent[], every = CHECKPOINT_EVERY) {
    this.every = Math.max(1, Math.floor(every))
    this.#current = { state: this.#checkpoints[0]!, count: 0 }
  }

  /** How many events the built checkpoints cover. */
  get covered(): number {
    return (this.#checkpoints.length - 1) * this.every
  }

  /** How many checkpoints exist (including the empty state). */
  get checkpoints(): number {
    return this.#checkpoints.length
  }

  /** How many events the last `at` folded (≤ `every` once `ready`). */
  get lastFolded(): number {
    return this.#lastFolded
  }

  /** True when every full chunk of the log has its checkpoint (what is left is < `every` events). */
  get complete(): boolean {
    return this.covered + this.every > this.events().length
  }

  /** Builds the next checkpoint (one chunk of `every` events); false when `complete`. */
  step(): boolean {
    const events = this.events()
    const from = this.covered
    const to = from + this.every
    if (to > events.length) return false
    const base = this.#checkpoints[this.#checkpoints.length - 1]!
    // forward from the state shown last when it is inside this chunk: fewer events to fold
    const start = this.#current.count >= from && this.#current.count <= to ? this.#current : { state: base, count: from }
    this.#checkpoints.push(fold(start, to, events))
    return true
  }

  /** True when `seq` can be shown by folding at most `every` events (its checkpoint is built). */
  ready(seq: number): boolean {
    return Math.floor((seq + 1) / this.every) < this.#checkpoints.length
  }

  /** The state as of and including `seq`: an immutable snapshot (keep it; it never changes). */
  at(seq: number): ReplayState {
    const events = this.events()
    const want = Math.min(Math.max(0, seq + 1), events.length)
    if (want === this.#current.count) {
      this.#lastFolded = 0
      return this.#current.state
    }
    const k = Math.min(Math.floor(want / this.every), this.#checkpoints.length - 1)
    const cp: Snap = { state: this.#checkpoints[k]!, count: k * this.every }
    const base = this.#current.count < want && this.#current.count >= cp.count ? this.#current : cp
    this.#lastFolded = want - base.count
    this.#current = { state: fold(base, want, events), count: want }
    return this.#current.state
  }
}

function fold(base: Snap, to: number, events: readonly LogEvent[]): ReplayState {
  if (to === base.count) return base.state
  return im().produce(base.state, (draft) => {
    for (let i = base.count; i < to; i++) applyEvent(draft as ReplayState, events[i]!)
  }) as ReplayState
}
