/**
 * The agent's live folds and its read-only views: what the handle shows of the log without owning
 * any state of its own (agent.ts keeps the state; these only read it).
 */
import type { LogEvent } from '../events/index.js'
import type { MachineRunner } from '../machines/lean-actor.js'
import type { TurnContext, TurnEvent } from '../machines/turn.js'
import { historyReducer } from '../reducers/history.js'
import { lifecycleReducer } from '../reducers/lifecycle.js'
import { approvalsReducer } from '../reducers/approvals.js'
import { inputsReducer } from '../reducers/inputs.js'
import { transcriptReducer, type TranscriptState } from '../reducers/transcript.js'
import type { InboxDriver } from './inbox-driver.js'
import type { StepRun } from './step-driver.js'
import type { AgentSnapshot, AgentStatus, TurnStateValue } from './types.js'

/** What the live folds write: the agent's projections (a narrow view of the agent, no import of it). */
export interface LiveFolds {
  readonly historyState: ReturnType<typeof historyReducer.initial>
  readonly lifecycle: ReturnType<typeof lifecycleReducer.initial>
  readonly approvalsState: ReturnType<typeof approvalsReducer.initial>
  readonly inputsState: ReturnType<typeof inputsReducer.initial>
  retriesInChain: number
}

/** What a snapshot reads. */
export interface SnapshotSource extends LiveFolds {
  readonly turnActor: MachineRunner<TurnContext, TurnEvent>
  readonly inboxDriver: InboxDriver
  readonly step: StepRun | null
  readonly session: { readonly length: number }
}

/** Folds one committed event into the agent's live projections (history, lifecycle, retry chain). */
export function foldLive(agent: LiveFolds, e: LogEvent): void {
  // Requests hold the history array zero-copy (step-driver freezeRequest), so it may only ever
  // be appended to: a replacement (rare: compaction) splices a fresh copy instead.
  if (e.surfaceOp !== undefined && e.surfaceOp !== 'append') agent.historyState.messages = agent.historyState.messages.slice()
  historyReducer.apply(agent.historyState, e)
  lifecycleReducer.apply(agent.lifecycle, e)
  approvalsReducer.apply(agent.approvalsState, e)
  inputsReducer.apply(agent.inputsState, e)
  if (e.type === 'llm/retry') agent.retriesInChain = (e.data as { attempt: number }).attempt
  // a failure chain is linked by retry causes only (L16)
  else if (e.type === 'turn/start' && (e.data as { cause?: { kind: string } }).cause?.kind !== 'retry') agent.retriesInChain = 0
}

/** The agent's snapshot: machine states, inbox lists, lifecycle position (`Agent.snapshot`). */
export function agentSnapshot(agent: SnapshotSource, status: AgentStatus): AgentSnapshot {
  const ts = agent.turnActor.getSnapshot()
  const ib = agent.inboxDriver.snapshot()
  return {
    status,
    turn: { state: ts.value as TurnStateValue, context: { ...ts.context } },
    step: agent.step ? { state: agent.step.state(), turn: agent.step.turn, step: agent.step.step } : null,
    inbox: { nextTurn: ib.context.nextTurn, nextStep: ib.context.nextStep, latched: ib.matches('latched') },
    openTurn: agent.lifecycle.openTurn,
    openStep: agent.lifecycle.openStep,
    pendingToolCalls: agent.lifecycle.pendingToolCalls.map((c) => ({ ...c })),
    lastSeq: agent.session.length - 1,
  }
}

/** The transcript folded from the log (`Agent.transcript`). */
export function foldTranscript(events: readonly LogEvent[]): TranscriptState {
  const t = transcriptReducer.initial()
  for (const e of events) transcriptReducer.apply(t, e)
  return t
}
