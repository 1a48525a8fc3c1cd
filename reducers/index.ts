/**
 * The reducers: pure folds over the event log (README "Data flows one way"). Everything the agent
 * and the replay engine know besides the log itself — the surface and the model history, the
 * human transcript, the inbox, the lifecycle position, usage — is derived here, by draft recipes
 * that never do I/O, never read the log and never mutate an event.
 *
 * One recipe per slice, two ways to run them (projection.ts): the live agent applies them to a
 * plain mutable state, O(1) amortised per event; bulk replay folds a whole log and freezes the
 * result once. Both give deep-equal state (P1), byte-identical for the same log (P7).
 */
export type { Reducer } from './types.js'
export { surfaceReducer, isSurfaceEvent, type SurfaceState } from './surface.js'
export { historyReducer, visibleMessage, type HistoryState } from './history.js'
export {
  transcriptReducer, findTranscriptMessage,
  type TranscriptState, type TranscriptMessage, type TranscriptStep, type TranscriptTurn, type TranscriptCompaction,
  type TranscriptPrune, type TranscriptRetry, type TranscriptSeedEnd, type TopItem, type TurnItem, type ReplacedAs,
  type TranscriptApproval, type TranscriptInput, type TranscriptParked, type TranscriptChild,
} from './transcript.js'
export { inboxReducer, type InboxState } from './inbox.js'
export { lifecycleReducer, type LifecycleState, type PendingToolCall } from './lifecycle.js'
export { approvalsReducer, openApprovals, endsParking, type ApprovalsState, type ApprovalRecord } from './approvals.js'
export { inputsReducer, openInputs, roundsOf, type InputsState, type InputRecord } from './inputs.js'
export { usageReducer, addUsage, emptyTotals, type UsageState, type UsageTotals } from './usage.js'
export { rollUpUsage, ownUsage, sumTotals, spawnedChildren, type UsageRollUp } from './usage-tree.js'
export { budgetReducer, type BudgetState } from './budget.js'
export { schedulesReducer, nextDue, firingAt, type SchedulesState, type PendingSchedule } from './schedules.js'
export {
  createLiveProjection, foldEvents, initialReplayState, applyEvent, freezeState, type LiveProjection, type FoldOptions,
} from './projection.js'

export { ALL_REDUCERS, type ReplayState } from './state.js'
