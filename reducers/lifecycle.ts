/**
 * The lifecycle position: where the log stands in the turn/step grammar (docs/spec/lifecycle.md §3–§4).
 * This is what resume, repair and fork read to know what is open and what is owed, and what the
 * driver reads for the next turn and step numbers and the last logged request header. Every update
 * is O(1) except `tool/result`, which looks the call up among the open step's pending calls.
 */
import type {
  EventDataMap, EventOf, LogEvent, StepOutcome, TurnEndReason,
} from '../events/index.js'
import { endsParking } from './approvals.js'
import type { Reducer } from './types.js'

/** `{kind: 'retry' | 'resume', of}`: why a turn opened (a retry of a failed one, or a re-run after a resume). */
export type RetryCause = NonNullable<EventDataMap['turn/start']['cause']>

export interface PendingToolCall {
  /** Seq of the `tool/call`. */
  seq: number
  callId: string
  name: string
  /** The raw JSON string the model produced. */
  arguments: string
}

export interface LifecycleState {
  /** Seq of the last event folded; -1 before any. */
  lastSeq: number
  /** The open turn's number, or null between turns. */
  openTurn: number | null
  /** Seq of the open turn's `turn/start`, or null. */
  openTurnSeq: number | null
  /** `{kind: 'retry', of}` when the open turn retries a failed one, `{kind: 'resume', of}` when it re-runs an interrupted one. */
  openTurnCause: RetryCause | null
  /** The open step's number, or null. */
  openStep: number | null
  /** Number of the last turn started (0 before any): the next turn is `lastTurn + 1`. */
  lastTurn: number
  /** Number of the last step started in the open or last turn (0 before any): the next is + 1. */
  lastStep: number
  /** True from the open step's first `assistant/chunk` until its `assistant/message` or `step/end`. */
  streaming: boolean
  /** Tool calls of the open step with no appended `tool/result` yet, in model order. */
  pendingToolCalls: PendingToolCall[]
  /** Outcome of the last `step/end` (kept across turns), or null. */
  lastStepOutcome: StepOutcome | null
  /** Reason of the last `turn/end`, or null. */
  lastTurnEndReason: TurnEndReason | null
  /** Id of the open compaction bracket, or null. */
  openCompaction: string | null
  /** The last `request/header` (config, system prompt, tools), or null. */
  header: EventDataMap['request/header'] | null
  /** Seq of that header, or null. */
  headerSeq: number | null
  /** Seq of `session/end-seed` (end of an inherited prefix), or null. */
  seedEndSeq: number | null
  /** Seq of the `step/parked` the log stands at (only inbox splices after it; docs/spec/lifecycle.md §9), or null. */
  parkedSeq: number | null
}

export const lifecycleReducer: Reducer<LifecycleState> = {
  name: 'lifecycle',
  initial: () => ({
    lastSeq: -1,
    openTurn: null,
    openTurnSeq: null,
    openTurnCause: null,
    openStep: null,
    lastTurn: 0,
    lastStep: 0,
    streaming: false,
    pendingToolCalls: [],
    lastStepOutcome: null,
    lastTurnEndReason: null,
    openCompaction: null,
    header: null,
    headerSeq: null,
    seedEndSeq: null,
    parkedSeq: null,
  }),
  apply(draft, event: LogEvent) {
    draft.lastSeq = event.seq
    if (draft.parkedSeq !== null && endsParking(event.type)) draft.parkedSeq = null
    switch (event.type) {
      case 'assistant/chunk':
        if (draft.openStep !== null) draft.streaming = true
        return
      case 'assistant/message':
        draft.streaming = false
        return
      case 'turn/start': {
        const d = (event as EventOf<'turn/start'>).data
        draft.openTurn = d.turn
        draft.openTurnSeq = event.seq
        draft.openTurnCause = d.cause ?? null
        draft.lastTurn = d.turn
        draft.lastStep = 0
        return
      }
      case 'turn/end': {
        const d = (event as EventOf<'turn/end'>).data
        draft.openTurn = null
        draft.openTurnSeq = null
        draft.openTurnCause = null
        draft.lastTurnEndReason = d.reason
        return
      }
      case 'step/start': {
        const d = (event as EventOf<'step/start'>).data
        draft.openStep = d.step
        draft.lastStep = d.step
        draft.streaming = false
        if (draft.pendingToolCalls.length > 0) draft.pendingToolCalls = []
        return
      }
      case 'step/end': {
        const d = (event as EventOf<'step/end'>).data
        draft.openStep = null
        draft.streaming = false
        draft.lastStepOutcome = d.outcome
        if (draft.pendingToolCalls.length > 0) draft.pendingToolCalls = []
        return
      }
      case 'tool/call': {
        const d = (event as EventOf<'tool/call'>).data
        draft.pendingToolCalls.push({ seq: event.seq, callId: d.callId, name: d.name, arguments: d.arguments })
        return
      }
      case 'tool/result': {
        if (event.surfaceOp !== 'append') return // a replacement answers nothing
        const callId = (event as EventOf<'tool/result'>).data.callId
        const pending = draft.pendingToolCalls
        for (let i = 0; i < pending.length; i++) {
          if (pending[i]!.callId === callId) {
            pending.splice(i, 1)
            return
          }
        }
        return
      }
      case 'request/header':
        draft.header = (event as EventOf<'request/header'>).data
        draft.headerSeq = event.seq
        return
      case 'compaction/start':
        draft.openCompaction = (event as EventOf<'compaction/start'>).data.compactionId
        return
      case 'compaction/end':
        draft.openCompaction = null
        return
      case 'session/end-seed':
        draft.seedEndSeq = event.seq
        return
      case 'step/parked':
        draft.parkedSeq = event.seq
        return
    }
  },
}
