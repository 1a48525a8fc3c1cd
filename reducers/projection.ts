/**
 * Running the recipes: live (one event at a time) and in bulk (a whole log).
 *
 * Why two runners and not immer `produce` per event: `produce` copies every container it touches,
 * so per event over a growing surface, history or transcript it is quadratic (benchmark B1 measured
 * 2,100 events/s after 100k events). So:
 *
 * - `createLiveProjection()` applies the recipes straight to a plain mutable state: O(1) amortised
 *   per event, no copies, no proxies. Its `state` is the live object (read it, never write it).
 * - `foldEvents()` folds a whole log for replay. It runs the same recipes on a plain draft (a fresh
 *   state nobody else sees yet) and deep-freezes the result once at the end.
 *
 * Measured with a quick script on this kind of machine (agent-shaped log with tool calls, prunes
 * and compactions, frozen events, medians of 3): plain draft + freeze 3.7M events/s at 1M events
 * and 2.7–3.6M/s at 100k; the live projection without the freeze ~5–6M/s; one immer `produce` per
 * 10,000 events 0.27M/s with `autoFreeze`, 0.34M/s without (and 0.08M/s without immer's
 * `enableArrayMethods`); bare `JSON.parse` of the same lines 1.35M/s. So the plain draft is the
 * default, at about a third of the parse cost (the B1 budget is one parse); the immer runner stays
 * as a reference and a P1 cross-check.
 *
 * Both runners apply exactly the same recipes in the same order, so their states are deep-equal
 * (P1) and serialise to the same bytes (P7).
 */
import { enableArrayMethods, Immer } from 'immer'
import type { LogEvent } from '../events/index.js'
import { budgetReducer } from './budget.js'
import { historyReducer } from './history.js'
import type { ReplayState } from './state.js'
import { inboxReducer } from './inbox.js'
import { lifecycleReducer } from './lifecycle.js'
import { schedulesReducer } from './schedules.js'
import { surfaceReducer } from './surface.js'
import { transcriptReducer } from './transcript.js'
import { usageReducer } from './usage.js'
import { approvalsReducer } from './approvals.js'
import { inputsReducer } from './inputs.js'

/** A fresh, empty, mutable state. */
export function initialReplayState(): ReplayState {
  return {
    surface: surfaceReducer.initial(),
    history: historyReducer.initial(),
    transcript: transcriptReducer.initial(),
    inbox: inboxReducer.initial(),
    lifecycle: lifecycleReducer.initial(),
    usage: usageReducer.initial(),
    approvals: approvalsReducer.initial(),
    inputs: inputsReducer.initial(),
    budget: budgetReducer.initial(),
    schedules: schedulesReducer.initial(),
  }
}

/** The combined recipe: every reducer, in a fixed order, on its own slice of `draft`. */
export function applyEvent(draft: ReplayState, event: LogEvent): void {
  surfaceReducer.apply(draft.surface, event)
  historyReducer.apply(draft.history, event)
  transcriptReducer.apply(draft.transcript, event)
  inboxReducer.apply(draft.inbox, event)
  lifecycleReducer.apply(draft.lifecycle, event)
  usageReducer.apply(draft.usage, event)
  approvalsReducer.apply(draft.approvals, event)
  inputsReducer.apply(draft.inputs, event)
  budgetReducer.apply(draft.budget, event)
  schedulesReducer.apply(draft.schedules, event)
}

/**
 * Deep-freezes a state in place and returns it. Stops at objects already frozen (the events'
 * messages, shared by reference), and walks arrays by index (no key strings for big number arrays).
 */
export function freezeState<T>(value: T): T {
  freezeValue(value)
  return value
}

function freezeValue(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return
  Object.freeze(v)
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i]
      if (typeof x === 'object' && x !== null) freezeValue(x)
    }
  } else {
    for (const k in v) {
      const x = (v as Record<string, unknown>)[k]
      if (typeof x === 'object' && x !== null) freezeValue(x)
    }
  }
}

export interface LiveProjection {
  /** Folds one more event (the next seq), O(1) amortised. */
  apply(event: LogEvent): void
  /** The live state, updated in place by `apply`. Read it; never write to it or keep parts of it
   * across appends expecting them not to change (take `structuredClone` for a snapshot). */
  readonly state: ReplayState
  /** How many events were folded. */
  readonly count: number
}

/** A live fold for the agent: plain mutable state, recipes applied directly. `prefix` (an inherited
 * or stored log) is folded first. */
export function createLiveProjection(prefix: Iterable<LogEvent> = []): LiveProjection {
  const state = initialReplayState()
  let count = 0
  const apply = (event: LogEvent): void => {
    applyEvent(state, event)
    count++
  }
  for (const e of prefix) apply(e)
  return {
    apply,
    get state() {
      return state
    },
    get count() {
      return count
    },
  }
}

export interface FoldOptions {
  /** Fold `events[0 .. end)` only (default: all). `stateAt` uses it instead of copying a prefix. */
  end?: number
  /** `'plain'` (default): recipes on a plain draft, one deep freeze at the end. `'immer'`: one
   * `produce` per `batchSize` events — a reference runner, about 10× slower (see the file comment). */
  runner?: 'plain' | 'immer'
  /** Events per `produce` for the immer runner (default 10,000). Ignored by the plain runner. */
  batchSize?: number
}

/**
 * Folds a log in one pass and returns the deep-frozen state. The state shares the events' own
 * objects (messages, usage, outcomes, headers) by reference, never copies them; turnlog's events
 * are deep-frozen already (a session freezes on append), and for events that are not, freezing the
 * result freezes those shared parts too — their values are never changed (P7).
 */
export function foldEvents(events: readonly LogEvent[], options: FoldOptions = {}): ReplayState {
  const n = Math.min(options.end ?? events.length, events.length)
  if (options.runner === 'immer') return foldEventsWithImmer(events, options.batchSize ?? 10_000, n)
  const state = initialReplayState()
  for (let i = 0; i < n; i++) applyEvent(state, events[i]!)
  return freezeState(state)
}

let immerReady = false
let immerFreezing: Immer
let immerPlain: Immer

/**
 * The same fold through immer: one `produce` per `batchSize` events, each applying the recipes to
 * the draft. With `autoFreeze` (immer's default) each batch's finalize freezes what changed;
 * without it, the result is frozen once at the end. Private `Immer` instances are used, so the
 * process-wide `setAutoFreeze` of other immer users is left alone. immer's `enableArrayMethods`
 * plugin is switched on (process-wide, a pure optimisation): without it a replace's `splice` on a
 * drafted array reads every shifted element through the proxy and drafts each message object,
 * which made this runner 4× slower again on logs with compactions.
 */
export function foldEventsWithImmer(
  events: readonly LogEvent[],
  batchSize = 10_000,
  end = events.length,
  autoFreeze = true,
): ReplayState {
  if (!immerReady) {
    enableArrayMethods()
    immerFreezing = new Immer({ autoFreeze: true })
    immerPlain = new Immer({ autoFreeze: false })
    immerReady = true
  }
  const im = autoFreeze ? immerFreezing : immerPlain
  let state = initialReplayState()
  const n = Math.min(end, events.length)
  const size = Math.max(1, Math.floor(batchSize))
  for (let from = 0; from < n; from += size) {
    const to = Math.min(n, from + size)
    state = im.produce(state, (draft: ReplayState) => {
      for (let i = from; i < to; i++) applyEvent(draft, events[i]!)
    })
  }
  return autoFreeze ? state : freezeState(state)
}
