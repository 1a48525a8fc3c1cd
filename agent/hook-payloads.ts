/**
 * The payloads and decisions of the turn's hooks (pre-step, assemble, request, stream, request
 * error, turn-stopping), split from types.ts; the tool hooks' payloads are in tools/types.ts.
 * `HookMap` (types.ts) says what each listener may return and what happens when it throws.
 */
import type { Failure, RequestConfig, StepOutcome, ToolSpec, UserMessage } from '../events/index.js'
import type { ModelRequest } from '../models/index.js'
import type { Agent } from './types.js'

export type ProposalKind = 'first' | 'after-tools' | 'after-stop'

export interface PreStepPayload {
  turn: number
  /** The step that would start. */
  step: number
  /** The claimed batch: next-step items, then (first proposal) the next-turn prompt. */
  messages: readonly UserMessage[]
  proposal: ProposalKind
  /** True in the first proposal of a retry turn (a request is owed even with no messages). */
  retry: boolean
  /**
   * True in the first proposal of a resume turn (`turn/start {cause: {kind: 'resume'}}`, lifecycle
   * §8): the interrupted turn's input is re-requested; a request is owed even with no messages.
   * A listener may reject it like any proposal.
   */
  resume: boolean
  signal: AbortSignal
  agent: Agent
}
export type PreStepDecision = { kind: 'enter'; messages: readonly UserMessage[] } | { kind: 'reject'; reason?: string }

/** `signal`: the turn's cancel signal (every hook gets it; see `AgentOptions.cancelGraceMs`). */
export interface AssemblePayload { turn: number; step: number; system: string; tools: readonly ToolSpec[]; signal: AbortSignal }
export interface AssembleResult { system: string; tools: readonly ToolSpec[] }

export interface RequestPayload { turn: number; step: number; config: RequestConfig; system: string; tools: readonly ToolSpec[]; signal: AbortSignal }

export interface StreamPayload { turn: number; step: number; request: ModelRequest; signal: AbortSignal }

export interface RequestErrorPayload {
  turn: number
  step: number
  failure: Failure
  /** `llm/retry` events already written in this failure chain. */
  retries: number
  signal: AbortSignal
  agent: Agent
}
export type RequestErrorDecision = { kind: 'retry' } | undefined

export interface TurnStoppingPayload { turn: number; step: number; outcome: StepOutcome; signal: AbortSignal; agent: Agent }
