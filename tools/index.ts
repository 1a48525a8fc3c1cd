/** The tools surface: definitions, classification, the scheduler and the seam types. */
export {
  defineTool, toolSpec, parseArguments, prepareCall, validateArguments, outputToOutcome, outputToContent, errorOutcome,
  TOOL_ERROR_CODES, type ToolErrorCode, type PreparedCall, type ClientToolDefinition,
} from './define.js'
export { askUser, type AskUserOptions } from './ask-user.js'
export { checkAnswer } from './input-answer.js'
export { jsonSchema, type JsonSchema, type JsonSchemaDraft, type JsonSchemaObject, type JsonSchemaOptions } from './json-schema.js'
export type { ToolSchema, SchemaIssue } from './schema.js'
export { classify, classifyPrepared, type ExecutionMode } from './classify.js'
export { runToolCalls } from './scheduler.js'
export { assertMaxParallelToolCalls, DEFAULT_MAX_PARALLEL_TOOL_CALLS } from './pool-size.js'
export { callMachine, preVerdictError, type CallContext, type CallEvent, type CallInput, type CallState, type PreVerdict } from './call-machine.js'
export type {
  Tool, AnyTool, ToolArgs, ToolContext, ToolEnv, ToolOutcome, ToolRunResult, PreExecuteDecision, PostExecuteDecision,
  PreExecutePayload, ExecutePayload, PostExecutePayload, InputContext, InputRequiredSpec, InputRequired,
} from './types.js'
