/**
 * The whole derived state (`ReplayState`) and the reducer of each of its slices. Kept apart from
 * index.ts so that projection.ts, which folds every slice, imports it without an import circle
 * through the folder index (issue 15 part 1).
 */
import { approvalsReducer, type ApprovalsState } from './approvals.js'
import { budgetReducer, type BudgetState } from './budget.js'
import { historyReducer, type HistoryState } from './history.js'
import { inboxReducer, type InboxState } from './inbox.js'
import { inputsReducer, type InputsState } from './inputs.js'
import { lifecycleReducer, type LifecycleState } from './lifecycle.js'
import { schedulesReducer, type SchedulesState } from './schedules.js'
import { surfaceReducer, type SurfaceState } from './surface.js'
import { transcriptReducer, type TranscriptState } from './transcript.js'
import { usageReducer, type UsageState } from './usage.js'

/** Every reducer, keyed by its slice of `ReplayState`. */
export const ALL_REDUCERS = {
  surface: surfaceReducer,
  history: historyReducer,
  transcript: transcriptReducer,
  inbox: inboxReducer,
  lifecycle: lifecycleReducer,
  usage: usageReducer,
  approvals: approvalsReducer,
  inputs: inputsReducer,
  budget: budgetReducer,
  schedules: schedulesReducer,
} as const

/** Everything derived from a log: what `replay` returns and the live agent keeps up to date. */
export interface ReplayState {
  surface: SurfaceState
  history: HistoryState
  transcript: TranscriptState
  inbox: InboxState
  lifecycle: LifecycleState
  usage: UsageState
  approvals: ApprovalsState
  /** Input rounds and their answers (docs/spec/lifecycle.md §11). */
  inputs: InputsState
  /** Tokens and tool calls per budget scope (docs/spec/lifecycle.md §10; events/budget.ts). */
  budget: BudgetState
  /** Pending wakeups and their due times (docs/spec/lifecycle.md §10). */
  schedules: SchedulesState
}
