/**
 * The payloads and decisions of the turn's hooks that need no `Agent` (assemble, request, stream;
 * the decisions), split from types.ts; the payloads that carry the agent (pre-step, request error,
 * turn-stopping) stay in types.ts, beside `Agent`; the tool hooks' payloads are in tools/types.ts.
 * `HookMap` (types.ts) says what each listener may return and what happens when it throws.
 */
import type { RequestConfig, ToolSpec, UserMessage } from '../events/index.js'
import type { ModelRequest } from '../models/index.js'

export type ProposalKind = 'first' | 'after-tools' | 'after-stop'

export type PreStepDecision = { kind: 'enter'; messages: readonly UserMessage[] } | { kind: 'reject'; reason?: string }

/** `signal`: the turn's cancel signal (every hook gets it; see `AgentOptions.cancelGraceMs`). */
export interface AssemblePayload { turn: number; step: number; system: string; tools: readonly ToolSpec[]; signal: AbortSignal }
export interface AssembleResult { system: string; tools: readonly ToolSpec[] }

export interface RequestPayload { turn: number; step: number; config: RequestConfig; system: string; tools: readonly ToolSpec[]; signal: AbortSignal }

export interface StreamPayload { turn: number; step: number; request: ModelRequest; signal: AbortSignal }

export type RequestErrorDecision = { kind: 'retry' } | undefined

