export { TurnlogError, ERROR_CODES, type ErrorCode, type ErrorDetails } from './errors.js'
export {
  Block, TextBlock, ReasoningBlock, ImageBlock, ToolCallBlock, MessageId, MessageSource, UserMessage, AssistantMessage,
  ToolResultMessage, Usage, Failure, FAILURE_CODES, ToolErrorInfo, ProviderData,
  SourceBlock, FileBlock, ToolResultBlock, CustomBlock, isRunnableCall, isProviderApproval,
  type ModelMessage, type FailureCode,
} from './messages.js'
export { StreamChunk, FinishChunk, type SuccessFinishReason } from './chunks.js'
export {
  EVENT_DATA, SURFACE_TYPES, TurnEndReason, StepOutcome, CancelCause, RetryCause, ResumeCause, TurnCause, InboxTarget, ToolSpec, ToolSource, RequestConfig,
  BudgetEndReason, type EventDataMap, type CoreEventType,
} from './data.js'
export { ScheduleDeliver, ScheduleWhenBusy, SCHEDULE_EVENT_DATA } from './schedules.js'
export {
  BUDGET_LIMITS, BUDGET_SCOPES, BudgetTracker, applyBudgetUsage, countedUsage, emptyCounts, initialBudgetUsage,
  type BudgetLimitName, type BudgetScope, type BudgetCounts, type BudgetUsageState, type BudgetCost, type CountedCall, type PriceFn,
} from './budget.js'
export {
  Envelope, SurfaceOp, isCore,
  type SessionEvent, type ExtensionEvent, type LogEvent, type EventOf, type EventDraft,
} from './envelope.js'
export {
  ApprovalId, ApprovalDecision, ApprovalBy, APPROVAL_EVENT_DATA, denialCode,
} from './approvals.js'
export {
  InputRequestId, InputRequest, InputRequests, InputAnswer, InputBy, INPUT_EVENT_DATA, clientRefusalCode,
} from './inputs.js'
export { EventRegistry, defaultRegistry, type EventTypeSpec } from './registry.js'
export { findLossy, deepFreeze, MAX_NESTING, type FindLossyOptions } from './lossless.js'
export { spliceAll, pushAll } from './splice.js'
export { StreamGrammar } from './grammar.js'
export { Session, type SessionOptions, type Clock, type EventObserver } from './session.js'
export { LogChecker } from './invariants/checker.js'
export type { Violation, CheckerOptions } from './invariants/types.js'
export {
  LogHeader, JSONL_FORMAT, DEFAULT_MAX_LINE_BYTES, encodeHeader, encodeEvent, crcHex, decodeLine, decodeHeader, JsonlDecoder,
  RecordDefect,
  type EncodeOptions, type DecodeContext, type JsonlDecoderOptions, type TornTail, type TornReason, type DecodeResult,
  type LineDefectCode,
} from './jsonl.js'
