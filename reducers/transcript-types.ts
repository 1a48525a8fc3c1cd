/**
 * The shapes of the human transcript (reducers/transcript.ts holds the fold). Split from the fold
 * so that the fold and the approvals/children part of it (transcript-waits.ts) stay small files.
 */
import type { ApprovalBy, Failure, ModelMessage, StepOutcome, ToolErrorInfo, TurnEndReason, Usage } from '../events/index.js'
import type { Anchors } from './order.js'
import type { RetryCause } from './lifecycle.js'

/** How a message left the model's view. */
export type ReplacedAs =
  /** hidden by a compaction summary (`user/message` with source `compaction`) */
  | 'compacted'
  /** hidden by a pruned copy of a tool result (`tool/result` right after `compaction/prune`) */
  | 'pruned'
  /** any other replacement */
  | 'replaced'

export interface TranscriptMessage {
  kind: 'message'
  seq: number
  time: number
  type: 'user/message' | 'assistant/message' | 'tool/result'
  /** The logged message, verbatim (the event's frozen object). */
  message: ModelMessage
  /** How it entered the surface. A replacement lists the surface seqs it hid in `replaces`. */
  surfaceOp: 'append' | 'replace'
  /** For a replacement: the seqs it hid from the model, in surface order. */
  replaces?: number[]
  /** `assistant/message`: finish reason, usage, `interrupted: true` when cancelled mid-stream. */
  finish?: 'stop' | 'tool-calls' | 'max-tokens' | 'refusal'
  /** A refusal's explanation by the provider (issue 23), when it gave one. */
  explanation?: string
  usage?: Usage
  interrupted?: true
  /** `tool/result`: the call it answers and the tool error, if any. */
  callId?: string
  error?: ToolErrorInfo
  /** Set when a later replacement hid this message from the model. */
  replaced?: true
  replacedBy?: number
  replacedAs?: ReplacedAs
}

export interface TranscriptStep {
  kind: 'step'
  seq: number
  time: number
  turn: number
  step: number
  /** Entered user messages, the assistant message, the tool results: in log order. */
  messages: TranscriptMessage[]
  /** The request's usage: its `assistant/message.usage`, else its stream's `usage` chunk (failed requests). */
  usage: Usage | null
  /** Seq of the `request/header` logged in this step, if the request changed it. */
  headerSeq: number | null
  /** Null while the step is open. A failed step's `outcome` carries the failure. */
  end: { seq: number; time: number; outcome: StepOutcome } | null
  /** The step's approval requests (docs/spec/lifecycle.md §9), in request order, each with its decision.
   * Present only on a step that asked (transcript-waits.ts). */
  approvals?: TranscriptApproval[]
  /** The step's input rounds (docs/spec/lifecycle.md §11), each with its answer. */
  inputs?: TranscriptInput[]
  /** The times the step stood parked, waiting for people only (present only on a step that parked). */
  parked?: TranscriptParked[]
  /** The child sessions the step's calls ran (docs/spec/lifecycle.md §10; present only on a step that spawned one). */
  children?: TranscriptChild[]
}

/** An approval request (`tool/approval-requested`) and, once made, its decision. */
/** One input round of a step (docs/spec/lifecycle.md §11): what was asked, and who answered how, when. */
export interface TranscriptInput {
  kind: 'input'
  seq: number
  time: number
  requestId: string
  callId: string
  /** The tool and the call's arguments (raw JSON), from the step's assistant message ('' when it has no such call). */
  name: string
  arguments: string
  round: number
  /** What was asked, by key, in request order: `form`, `text`, `choice`, `url`, or `client` (a client tool's result). */
  asked: Array<{ key: string; kind: string }>
  expiresAt?: number
  /** Null while open. `by`: `user` (a person or the client), `expired`, `superseded`, `canceled`. */
  answer: { seq: number; time: number; action: 'accept' | 'decline' | 'cancel'; by: ApprovalBy } | null
}

export interface TranscriptApproval {
  kind: 'approval'
  seq: number
  time: number
  approvalId: string
  callId: string
  /** The tool and the requested arguments (raw JSON), from the step's assistant message ('' when it has no such call). */
  name: string
  arguments: string
  question?: string
  expiresAt?: number
  /** Null while open. `arguments` is set when the person edited them (the raw JSON the call then carries). */
  decision: {
    seq: number
    time: number
    kind: 'approve' | 'deny'
    by: ApprovalBy
    arguments?: string
    reason?: string
  } | null
}

/**
 * A time the step stood parked: from a `step/parked` to the first event that ends the wait (a
 * `tool/call`, a result, the step's end …); the decisions and re-parkings in between belong to it.
 * `end` is null while the log stands parked.
 */
export interface TranscriptParked {
  kind: 'parked'
  seq: number
  time: number
  /** The approvals the first `step/parked` named. */
  approvals: string[]
  end: { seq: number; time: number } | null
}

/** `child/spawned`: a call of the step ran a child session (its id). */
export interface TranscriptChild {
  kind: 'child'
  seq: number
  time: number
  callId: string
  child: string
}

export interface TranscriptPrune {
  kind: 'prune'
  seq: number
  time: number
  callId: string
  shadowedSeq: number
  originalChars: number
}

export interface TranscriptRetry {
  kind: 'retry'
  seq: number
  time: number
  turn: number
  step: number
  attempt: number
  delayMs: number
  failure: Failure
}

export interface TranscriptCompaction {
  kind: 'compaction'
  seq: number
  time: number
  compactionId: string
  turn: number
  summary: { seq: number; summary: string; shadowedSeqs: readonly number[]; usage?: Usage } | null
  /** The replacing `user/message` (and anything else logged inside the bracket). */
  items: Array<TranscriptMessage | TranscriptPrune>
  /** Null while the bracket is open. */
  end: { seq: number; time: number; error?: ToolErrorInfo } | null
}

export type TurnItem = TranscriptStep | TranscriptCompaction | TranscriptPrune | TranscriptRetry | TranscriptMessage

export interface TranscriptTurn {
  kind: 'turn'
  seq: number
  time: number
  turn: number
  cause: RetryCause | null
  items: TurnItem[]
  /** Null while the turn is open. */
  end: { seq: number; time: number; reason: TurnEndReason } | null
}

/** `session/end-seed`: everything before it was inherited (fork, resume). */
export interface TranscriptSeedEnd {
  kind: 'seed-end'
  seq: number
  time: number
}

export type TopItem = TranscriptTurn | TranscriptCompaction | TranscriptPrune | TranscriptRetry | TranscriptMessage | TranscriptSeedEnd

export interface TranscriptState {
  items: TopItem[]
  /** The fold's own copy of the surface order (internal; see the file comment). */
  surface: number[]
  anchors: Anchors
}
