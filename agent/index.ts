export { createAgent, TurnlogAgent, DEFAULT_CANCEL_GRACE_MS } from './agent.js'
export { HookRegistry, type Next, type WaterfallListener, type SerialListener, type EmitListener } from './hooks.js'
export { retryDelay, resolveRetry, DEFAULT_RETRY_ON, realTimers, type ResolvedRetry } from './retry-policy.js'
export { defineSubagent, type SubagentConfig, type SubagentOptions } from './subagent.js'
export type {
  Agent, AgentOptions, AgentPlugin, AgentSnapshot, AgentStatus, AssemblePayload, AssembleResult, CancelOptions, HookMap,
  HookName, InboxHandle, MessageInput, PluginHost, PreStepDecision, PreStepPayload, ProposalKind, RequestErrorDecision,
  RequestErrorPayload, RequestPayload, RetryOptions, StreamPayload, Timers, TurnPhase, TurnStateValue, TurnStoppingPayload,
} from './types.js'
export type { ScheduleSpec, ScheduleInfo, WakeupHandle, WakeupOptions, ScheduleToolOptions } from './wakeup-types.js'
export type { BudgetOptions, BudgetStatus, BudgetWarning } from './budget.js'
