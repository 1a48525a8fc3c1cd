/** What `agent.snapshot()` returns (split from types.ts): the machines' positions, the inbox, the log's open turn. */
import type { UserMessage } from '../events/index.js'

/** `parked`: the running turn's step waits for people's decisions and nothing else (docs/spec/lifecycle.md §9). */
export type AgentStatus = 'idle' | 'running' | 'parked'

/** A phase of a running turn (the turn machine's `running` substates, docs/spec/lifecycle.md pictures). */
export type TurnPhase = 'opening' | 'proposing' | 'stepping' | 'parked' | 'stopping' | 'recovering' | 'closing'
/** The turn machine's state value: `'idle'`, `'maintaining'` (in `runMaintenance`) or `{ running: phase }`. */
export type TurnStateValue = 'idle' | 'maintaining' | { running: TurnPhase }

export interface AgentSnapshot {
  status: AgentStatus
  turn: { state: TurnStateValue; context: Record<string, unknown> }
  step: { state: string; turn: number; step: number } | null
  inbox: { nextTurn: readonly UserMessage[]; nextStep: readonly UserMessage[]; latched: boolean }
  /** From the log: the open turn and step, and the tool calls of the open step still without a result. */
  openTurn: number | null
  openStep: number | null
  pendingToolCalls: ReadonlyArray<{ seq: number; callId: string; name: string; arguments: string }>
  lastSeq: number
}
