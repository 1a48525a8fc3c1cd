/**
 * turnlog: an LLM agent's lifecycle as an event-sourced state machine, with a replay engine.
 *
 * The root export is what an app that embeds an agent needs, and nothing more (the rule is in
 * decision record "public-api" (docs/decisions/ in the repository)): make an agent, give it tools and a model, keep its log in a store,
 * decide its approvals, read its events and transcript, catch its coded errors. Everything else
 * lives under its subpath: `turnlog/events` (the log format: schemas, codec, checker),
 * `turnlog/reducers` (the folds), `turnlog/models` (writing a model adapter), `turnlog/stores` (the
 * store contract), `turnlog/machines`, `turnlog/replay`, `turnlog/testing`, `turnlog/evals`,
 * `turnlog/compaction`, `turnlog/stores/jsonl`, `turnlog/stores/postgres`, `turnlog/models/ai-sdk`,
 * `turnlog/otel`, `turnlog/http`.
 *
 * Hand-curated on purpose, one section per concern: a new name is added to the section it belongs
 * to, deliberately (test/package/api-report.test.ts fails until api/*.api.md is regenerated). The
 * root stays free of Node built-ins so it bundles for browsers.
 */

// ── The agent ───────────────────────────────────────────────────────────────────────────────
export { createAgent } from './agent/agent.js'
export type {
  Agent, AgentOptions, AgentSnapshot, AgentStatus, CancelOptions, InboxHandle, MessageInput, RetryOptions, Timers,
  TurnPhase, TurnStateValue,
} from './agent/types.js'

// ── Hooks and plugins ───────────────────────────────────────────────────────────────────────
export type { HookMap, HookName, AgentPlugin, PluginHost } from './agent/types.js'
export type { Next } from './agent/hooks.js'

// ── Approvals (docs/spec/lifecycle.md §9) ────────────────────────────────────────────────────────────────
export type { ApprovalDecisionInput, ApprovalOptions, OpenApproval } from './agent/approval-types.js'
export { decideInStore, type StoreDecisionInput, type StoreDecided, type StoreDecideOptions } from './stores/decide.js'

// ── Input requests: ask a person anything (docs/spec/lifecycle.md §11) ─────────────────────────────
// (the rest of the vocabulary, InputRequest, InputAnswer …, is in turnlog/events; ToolContext['input'])
export type { OpenInput, InputAnswerInput } from './agent/input-types.js'
export { askUser } from './tools/ask-user.js'
export type { InputRequests } from './events/index.js'

// ── Sub-agents, budgets, wakeups (docs/spec/lifecycle.md §10) ────────────────────────────────────────────
export { defineSubagent, type SubagentConfig, type SubagentOptions } from './agent/subagent.js'
export type { BudgetOptions, BudgetStatus, BudgetWarning } from './agent/budget.js'
export type { ScheduleSpec, ScheduleInfo, WakeupOptions, ScheduleToolOptions } from './agent/wakeup-types.js'

// ── Tools ───────────────────────────────────────────────────────────────────────────────────
export { defineTool, TOOL_ERROR_CODES, type ToolErrorCode } from './tools/define.js'
export { jsonSchema, type JsonSchema, type JsonSchemaDraft, type JsonSchemaOptions } from './tools/json-schema.js'
export type { ToolSchema, SchemaIssue } from './tools/schema.js'
export type {
  Tool, AnyTool, ToolContext, ToolOutcome, PreExecutePayload, PreExecuteDecision, PostExecutePayload, PostExecuteDecision,
} from './tools/types.js'

// ── Models ──────────────────────────────────────────────────────────────────────────────────
export type { ModelAdapter, ModelRequest, ModelInfo } from './models/types.js'
export { openaiCompatibleModel, type OpenAICompatibleOptions } from './models/openai.js'
export { scriptedModel, type ScriptedModelOptions, type ScriptedResponse } from './models/scripted.js'
export { ModelError } from './models/errors.js'

// ── Stores ──────────────────────────────────────────────────────────────────────────────────
export { memoryStore, type MemoryStoreOptions } from './stores/memory.js'
export { isValidSessionId } from './stores/ids.js'
export type { LogStore } from './stores/types.js'

// ── Reading the log: events, messages, the transcript, usage ────────────────────────────────
export type { SessionEvent, LogEvent, EventOf } from './events/envelope.js'
export type { EventDataMap } from './events/data.js'
export type { ModelMessage, UserMessage, AssistantMessage, Block, Usage, FailureCode } from './events/messages.js'
export type { TranscriptState, TranscriptMessage, TranscriptTurn, TranscriptStep } from './reducers/transcript.js'
export type { UsageRollUp } from './reducers/usage-tree.js'

// ── Errors ──────────────────────────────────────────────────────────────────────────────────
export { TurnlogError, ERROR_CODES, type ErrorCode, type ErrorDetails } from './events/errors.js'
export { FAILURE_CODES } from './events/messages.js'
