/**
 * The step lifecycle (docs/spec/lifecycle.md §4) as an XState v5 machine. The driver performs each state's
 * effect and reports back; the machine decides where the step goes and which outcome
 * `step/end` records. A cancel (`ABORT`) never interrupts an effect half-way: the effect observes
 * the turn's AbortSignal and reports, and the machine routes to `aborting` at the next decision,
 * so no model request and no tool body starts after a cancel (R5).
 */
import { assign, setup } from 'xstate'
import type { Failure, StepOutcome } from '../events/index.js'

export interface StepContext {
  turn: number
  step: number
  aborted: boolean
  /** The outcome `step/end` records; set on the way to `ended`. */
  outcome: StepOutcome | null
  /** Whether visible text or reasoning streamed before a cancel (an interrupted message is owed). */
  visibleStreamed: boolean
  /** The success finish and the number of complete tool calls, from the stream. */
  finish: 'stop' | 'tool-calls' | 'max-tokens' | 'refusal' | null
  toolCalls: number
}

export type StepEvent =
  | { type: 'ENTERED' }
  | { type: 'ASSEMBLED' }
  | { type: 'REQUESTED' }
  | { type: 'HOOK_FAILED'; failure: Failure }
  | { type: 'STREAMED'; result: 'success'; finish: 'stop' | 'tool-calls' | 'max-tokens' | 'refusal'; toolCalls: number }
  | { type: 'STREAMED'; result: 'failure'; failure: Failure }
  | { type: 'STREAMED'; result: 'aborted'; visibleStreamed: boolean }
  | { type: 'COMMITTED' }
  | { type: 'TOOLS_DONE'; concluded: boolean; aborted: boolean }
  | { type: 'INTERRUPTED' }
  | { type: 'ABORT' }
  /** Only people's decisions are owed (`step/parked` appended; docs/spec/lifecycle.md §9) / the step goes on. */
  | { type: 'PARK' }
  | { type: 'UNPARK' }
  /** Restores a parked step from the log (docs/spec/lifecycle.md §9): straight to its tool phase. */
  | { type: 'RESTORE'; turn: number; step: number; toolCalls: number }
  /** Starts a step (the actor is reused from step to step: creating one per step cost ~10 µs, B2). */
  | { type: 'BEGIN'; turn: number; step: number; aborted: boolean }

export interface StepInput {
  turn?: number
  step?: number
}

export const stepMachine = setup({
  types: {} as { context: StepContext; events: StepEvent; input: StepInput },
  guards: {
    aborted: ({ context }) => context.aborted,
    streamAborted: ({ event }) => event.type === 'STREAMED' && event.result === 'aborted',
    streamFailed: ({ event }) => event.type === 'STREAMED' && event.result === 'failure',
    /** Truncated tool calls never run (§4.5). */
    hasToolCalls: ({ context }) => context.finish !== 'max-tokens' && context.toolCalls > 0,
    truncated: ({ context }) => context.finish === 'max-tokens',
    toolsAborted: ({ event }) => event.type === 'TOOLS_DONE' && event.aborted,
    concluded: ({ event }) => event.type === 'TOOLS_DONE' && event.concluded,
  },
  actions: {
    markAborted: assign({ aborted: true }),
    restore: assign(({ event }) =>
      event.type === 'RESTORE'
        ? { turn: event.turn, step: event.step, aborted: false, outcome: null, visibleStreamed: false, finish: 'tool-calls' as const, toolCalls: event.toolCalls }
        : {},
    ),
    begin: assign(({ event }) =>
      event.type === 'BEGIN'
        ? { turn: event.turn, step: event.step, aborted: event.aborted, outcome: null, visibleStreamed: false, finish: null, toolCalls: 0 }
        : {},
    ),
    noteFinish: assign(({ event }) =>
      event.type === 'STREAMED' && event.result === 'success' ? { finish: event.finish, toolCalls: event.toolCalls } : {},
    ),
    noteVisible: assign({
      visibleStreamed: ({ event }) => event.type === 'STREAMED' && event.result === 'aborted' && event.visibleStreamed,
    }),
    outcomeStop: assign({ outcome: { kind: 'stop' } as StepOutcome }),
    outcomeMaxTokens: assign({ outcome: { kind: 'max-tokens' } as StepOutcome }),
    outcomeTools: assign({ outcome: { kind: 'tools' } as StepOutcome }),
    outcomeConcluded: assign({ outcome: { kind: 'concluded' } as StepOutcome }),
    outcomeAborted: assign({ outcome: { kind: 'aborted' } as StepOutcome }),
    outcomeFailed: assign({
      outcome: ({ event }): StepOutcome => ({
        kind: 'failed',
        failure:
          event.type === 'HOOK_FAILED' || (event.type === 'STREAMED' && event.result === 'failure')
            ? event.failure
            : { code: 'UNKNOWN', message: 'unknown failure' },
      }),
    }),
  },
}).createMachine({
  id: 'step',
  context: ({ input }) => ({ turn: input.turn ?? 0, step: input.step ?? 0, aborted: false, outcome: null, visibleStreamed: false, finish: null, toolCalls: 0 }),
  initial: 'idle',
  on: { ABORT: { actions: 'markAborted' } },
  states: {
    /** No step yet. */
    idle: {
      on: {
        BEGIN: { target: 'entering', actions: 'begin' },
        RESTORE: { target: 'runningTools', actions: 'restore' },
      },
    },
    /** Driver: append `step/start` and one `user/message` per entered message. */
    entering: {
      on: {
        ENTERED: [{ guard: 'aborted', target: 'aborting' }, { target: 'assembling' }],
      },
    },
    /** Driver: dispatch `system-prompt/assemble`. */
    assembling: {
      on: {
        ASSEMBLED: [{ guard: 'aborted', target: 'aborting' }, { target: 'requesting' }],
        HOOK_FAILED: [{ guard: 'aborted', target: 'aborting' }, { target: 'failed', actions: 'outcomeFailed' }],
      },
    },
    /** Driver: dispatch `agent/request`, append `request/header` if changed, freeze and check the request (R3). */
    requesting: {
      on: {
        REQUESTED: [{ guard: 'aborted', target: 'aborting' }, { target: 'streaming' }],
        HOOK_FAILED: [{ guard: 'aborted', target: 'aborting' }, { target: 'failed', actions: 'outcomeFailed' }],
      },
    },
    /** Driver: dispatch `llm/stream` around the model call; append each chunk as `assistant/chunk`. */
    streaming: {
      on: {
        STREAMED: [
          { guard: 'streamAborted', target: 'aborting', actions: 'noteVisible' },
          { guard: 'streamFailed', target: 'failed', actions: 'outcomeFailed' },
          { target: 'committing', actions: 'noteFinish' },
        ],
        HOOK_FAILED: [{ guard: 'aborted', target: 'aborting' }, { target: 'failed', actions: 'outcomeFailed' }],
      },
    },
    /** Driver: append the `assistant/message`. */
    committing: {
      on: {
        COMMITTED: [
          { guard: 'hasToolCalls', target: 'runningTools' },
          { guard: 'truncated', target: 'ended', actions: 'outcomeMaxTokens' },
          { target: 'ended', actions: 'outcomeStop' },
        ],
      },
    },
    /** Driver: run the tool calls; every started call commits a result, in model order. */
    runningTools: {
      on: {
        PARK: { target: 'parked' },
        TOOLS_DONE: [
          { guard: 'toolsAborted', target: 'aborting' },
          { guard: 'concluded', target: 'ended', actions: 'outcomeConcluded' },
          { target: 'ended', actions: 'outcomeTools' },
        ],
      },
    },
    /**
     * Parked (docs/spec/lifecycle.md §9): nothing runs, no stream is open; the step waits for a decision, an
     * expiry, a steer or a cancel, each of which the tool scheduler turns into `UNPARK`.
     */
    parked: {
      on: { UNPARK: { target: 'runningTools' } },
    },
    /** The request failed; `step/end {failed}` follows, then the turn dispatches `agent/request-error`. */
    failed: {
      always: { target: 'ended' },
    },
    /** Driver: append `assistant/message {interrupted}` when visible text streamed. */
    aborting: {
      entry: 'outcomeAborted',
      on: { INTERRUPTED: { target: 'ended' } },
    },
    /** Driver: append `step/end {outcome}`. The next step begins from here. */
    ended: {
      on: { BEGIN: { target: 'entering', actions: 'begin' } },
    },
  },
})

export type StepMachine = typeof stepMachine
