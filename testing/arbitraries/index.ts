/** fast-check arbitraries of valid turnlog logs, their building blocks, and one-invariant mutators. */
export {
  arbText, arbBlock, arbUserMessage, arbUsage, arbFailure, arbToolArguments, arbBlockPlan, arbStreamPlan, arbStreamChunks,
  arbWholeBlocks,
  renderStream, renderPartialStream, assembleContent, hasVisibleText, blockChunks, TOOL_NAMES, TRANSIENT_FAILURE_CODES,
  type BlockPlan, type StreamPlan, type ArbBlockOptions, type ArbUserMessageOptions, type ArbFailureOptions,
  type ArbStreamPlanOptions,
} from './blocks.js'
export { arbProviderStream } from './provider-stream.js'
export {
  arbLogPlan, arbTurnPlan, arbStepPlan, arbInboxOp, arbCompactionPlan, arbIdleItem, arbMsgSeed, DEFAULT_STEP_WEIGHTS,
  TOOL_ERROR_CODES,
  type LogPlan, type TurnPlan, type StepPlan, type StepKind, type InboxOpPlan, type CompactionPlan, type IdleItem,
  type MsgSeed, type ToolPlan, type PlanOptions,
} from './plan.js'
export { buildLog, LogBuilder, SYSTEM_PROMPT, TOOL_SPECS, type BuildOptions } from './builder.js'
export {
  arbValidLog, arbValidLogWithPlan, checkerOptionsFor, DEFAULT_MAX_STEPS_PER_TURN, DEFAULT_MAX_RETRIES,
  type ValidLogOptions,
} from './valid-log.js'
export {
  mutateToBreak, arbLogMutation, arbAnyLogMutation, LOG_INVARIANTS, type LogMutation,
} from './mutations.js'
