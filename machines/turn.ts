/**
 * The turn lifecycle (docs/spec/lifecycle.md §3) as an XState v5 machine. It only decides: the driver
 * performs each state's effect (append `turn/start`, claim and dispatch `agent/pre-step`, run a
 * step, dispatch `agent/turn-stopping` or `agent/request-error`, append `turn/end`) and reports
 * the result back as an event. The `turn/end` reason is decided here, as data in the context.
 */
import { and, assign, setup } from 'xstate'
import type { CancelCause, Failure, StepOutcome, TurnEndReason } from '../events/index.js'

export type ProposalKind = 'first' | 'after-tools' | 'after-stop'

export interface TurnContext {
  /** The last turn number in the log (turn numbering continues after resume and fork). */
  lastTurn: number
  /** The open (or last) turn's number. */
  turn: number
  /** Steps started in the open turn. */
  steps: number
  maxStepsPerTurn: number
  proposal: ProposalKind
  /** Set when this turn retries `retryOf` (its first proposal owes a request). */
  retryOf: number | null
  /** Set when this turn re-runs the interrupted turn `resumeOf` (docs/spec/lifecycle.md §8; its first proposal owes a request). */
  resumeOf: number | null
  /** `max-tokens` is sticky for the rest of the turn. */
  maxTokens: boolean
  /** The first cancel cause wins. */
  abortCause: CancelCause | null
  /** The failed step's failure, while recovering. */
  failure: Failure | null
  /** `agent/request-error` authorised a retry: open the retry turn right after `turn/end`. */
  retryRequested: boolean
  endReason: TurnEndReason | null
}

export type TurnEvent =
  | { type: 'WAKE'; resumeOf?: number }
  /** Restores the log's parked turn (docs/spec/lifecycle.md §9): running, in its step `steps`, without `turn/start`. */
  | { type: 'RESTORE'; turn: number; steps: number }
  | { type: 'OPENED' }
  | { type: 'PROPOSED'; decision: 'enter' | 'enter-empty' | 'reject' }
  | { type: 'PROPOSE_FAILED'; failure: Failure }
  /** A budget is spent (docs/spec/lifecycle.md §10): the request the proposal would make is not made. */
  | { type: 'BUDGET'; reason: Extract<TurnEndReason, { kind: 'budget' }> }
  | { type: 'STEP_DONE'; outcome: StepOutcome; nextStepPending: boolean }
  | { type: 'STOPPED'; nextStepPending: boolean }
  | { type: 'STOP_FAILED'; failure: Failure }
  | { type: 'RECOVERED'; retry: boolean }
  | { type: 'ABORT'; cause: CancelCause }
  | { type: 'CLOSED'; nextTurnPending: boolean; latched: boolean }
  | { type: 'MAINTAIN' }
  /** The running step parked (only people's decisions are owed; docs/spec/lifecycle.md §9) / it goes on. */
  | { type: 'PARK' }
  | { type: 'UNPARK' }
  | { type: 'MAINTAINED' }

export interface TurnInput {
  lastTurn?: number
  maxStepsPerTurn?: number
}

export const turnMachine = setup({
  types: {} as { context: TurnContext; events: TurnEvent; input: TurnInput },
  guards: {
    aborted: ({ context }) => context.abortCause !== null,
    stepBudgetSpent: ({ context }) => context.steps >= context.maxStepsPerTurn,
    rejected: ({ event }) => event.type === 'PROPOSED' && event.decision === 'reject',
    /** An empty batch ends the turn, except where a request is owed (after tools; a retry turn's first proposal). */
    emptyEndsTurn: ({ context, event }) =>
      event.type === 'PROPOSED' &&
      event.decision === 'enter-empty' &&
      context.proposal !== 'after-tools' &&
      !(context.proposal === 'first' && (context.retryOf !== null || context.resumeOf !== null)),
    stepFailedByHook: ({ event }) =>
      event.type === 'STEP_DONE' && event.outcome.kind === 'failed' && event.outcome.failure.code === 'HOOK_ERROR',
    stepFailed: ({ event }) => event.type === 'STEP_DONE' && event.outcome.kind === 'failed',
    toolsOwed: ({ event }) => event.type === 'STEP_DONE' && event.outcome.kind === 'tools',
    nextStepPending: ({ event }) => (event.type === 'STEP_DONE' || event.type === 'STOPPED') && event.nextStepPending,
    retryAuthorised: ({ event }) => event.type === 'RECOVERED' && event.retry,
    retryRequested: ({ context }) => context.retryRequested,
    turnWasAborted: ({ context }) => context.endReason?.kind === 'aborted',
    latched: ({ event }) => event.type === 'CLOSED' && event.latched,
    moreWork: ({ event }) => event.type === 'CLOSED' && (event.nextTurnPending || event.latched),
  },
  actions: {
    openTurn: assign(({ context, event }) => ({
      turn: context.lastTurn + 1,
      lastTurn: context.lastTurn + 1,
      steps: 0,
      proposal: 'first' as const,
      retryOf: context.retryRequested ? context.turn : null,
      // only the wake from idle of a resumed agent carries it (agent.ts #wake)
      resumeOf: event.type === 'WAKE' ? event.resumeOf ?? null : null,
      maxTokens: false,
      abortCause: null,
      failure: null,
      retryRequested: false,
      endReason: null,
    })),
    restoreTurn: assign(({ context, event }) =>
      event.type === 'RESTORE'
        ? { turn: event.turn, lastTurn: event.turn, steps: event.steps, proposal: 'first' as const, retryOf: null, resumeOf: null, maxTokens: false, abortCause: null, failure: null, retryRequested: false, endReason: null }
        : { turn: context.turn },
    ),
    countStep: assign({ steps: ({ context }) => context.steps + 1 }),
    proposeAfterTools: assign({ proposal: 'after-tools' as const }),
    proposeAfterStop: assign({ proposal: 'after-stop' as const }),
    noteMaxTokens: assign({
      maxTokens: ({ context, event }) => context.maxTokens || (event.type === 'STEP_DONE' && event.outcome.kind === 'max-tokens'),
    }),
    rememberAbort: assign({
      abortCause: ({ context, event }) => context.abortCause ?? (event.type === 'ABORT' ? event.cause : null),
    }),
    rememberFailure: assign({
      failure: ({ event }) => (event.type === 'STEP_DONE' && event.outcome.kind === 'failed' ? event.outcome.failure : null),
    }),
    requestRetry: assign({ retryRequested: true }),
    endAborted: assign({ endReason: ({ context: c }): TurnEndReason => ({ kind: 'aborted', cause: c.abortCause ?? { kind: 'user' } }) }),
    endBlocked: assign({ endReason: (): TurnEndReason => ({ kind: 'blocked' }) }),
    endBudget: assign({ endReason: ({ event }): TurnEndReason | null => (event.type === 'BUDGET' ? event.reason : null) }),
    endStepLimit: assign({ endReason: (): TurnEndReason => ({ kind: 'step-limit' }) }),
    endCompleted: assign({ endReason: ({ context: c }): TurnEndReason => (c.maxTokens ? { kind: 'max-tokens' } : { kind: 'completed' }) }),
    endHookError: assign({
      endReason: ({ event }) => ({
        kind: 'error' as const,
        failure:
          event.type === 'PROPOSE_FAILED' || event.type === 'STOP_FAILED'
            ? event.failure
            : { code: 'HOOK_ERROR', message: 'a hook failed' },
      }),
    }),
    endStepFailure: assign({
      endReason: ({ event }) => ({
        kind: 'error' as const,
        failure: event.type === 'STEP_DONE' && event.outcome.kind === 'failed' ? event.outcome.failure : { code: 'UNKNOWN', message: '' },
      }),
    }),
    endRecoveryFailure: assign({ endReason: ({ context: c }): TurnEndReason => ({ kind: 'error', failure: c.failure ?? { code: 'UNKNOWN', message: 'unknown failure' } }) }),
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => ({
    lastTurn: input.lastTurn ?? 0,
    turn: input.lastTurn ?? 0,
    steps: 0,
    maxStepsPerTurn: input.maxStepsPerTurn ?? 64,
    proposal: 'first',
    retryOf: null,
    resumeOf: null,
    maxTokens: false,
    abortCause: null,
    failure: null,
    retryRequested: false,
    endReason: null,
  }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        WAKE: { target: 'running' },
        RESTORE: { target: '#turn.running.stepping', actions: 'restoreTurn' },
        MAINTAIN: { target: 'maintaining' },
      },
    },
    /** `runMaintenance`: status stays idle; waking input is latched by the inbox machine. */
    maintaining: {
      on: { MAINTAINED: { target: 'idle' } },
    },
    running: {
      initial: 'opening',
      on: {
        ABORT: { actions: 'rememberAbort' },
      },
      states: {
        /** Driver: append `turn/start` (with the retry cause when `retryOf` is set). */
        opening: {
          entry: 'openTurn',
          on: { OPENED: { target: 'proposing' } },
        },
        /**
         * Driver: claim the batch, dispatch `agent/pre-step`. A cancel while the hook runs moves on
         * to closing at once (the `always` re-evaluates after ABORT); the hook's late answer is ignored.
         */
        proposing: {
          always: [
            { guard: 'aborted', target: 'closing', actions: 'endAborted' },
            { guard: 'stepBudgetSpent', target: 'closing', actions: 'endStepLimit' },
          ],
          on: {
            PROPOSED: [
              { guard: 'rejected', target: 'closing', actions: 'endBlocked' },
              { guard: 'emptyEndsTurn', target: 'closing', actions: 'endCompleted' },
              { target: 'stepping', actions: 'countStep' },
            ],
            PROPOSE_FAILED: { target: 'closing', actions: 'endHookError' },
            BUDGET: { target: 'closing', actions: 'endBudget' },
          },
        },
        /** Driver: run the step machine to its end. */
        stepping: {
          on: {
            PARK: { target: 'parked' },
            STEP_DONE: [
              // Cancellation wins over every other ending, also over a failure seen after it (R5).
              { guard: 'aborted', target: 'closing', actions: 'endAborted' },
              { guard: 'stepFailedByHook', target: 'closing', actions: 'endStepFailure' },
              { guard: 'stepFailed', target: 'recovering', actions: 'rememberFailure' },
              { guard: 'toolsOwed', target: 'proposing', actions: 'proposeAfterTools' },
              { guard: 'nextStepPending', target: 'proposing', actions: ['noteMaxTokens', 'proposeAfterStop'] },
              { target: 'stopping', actions: 'noteMaxTokens' },
            ],
          },
        },
        /**
         * The step is parked (docs/spec/lifecycle.md §9): status `parked`, nothing runs. A decision, an expiry,
         * a steer or a cancel (remembered by `ABORT` above) lets the step go on.
         */
        parked: {
          on: { UNPARK: { target: 'stepping' } },
        },
        /** Driver: dispatch the serial `agent/turn-stopping` checkpoint. */
        stopping: {
          on: {
            STOPPED: [
              { guard: 'aborted', target: 'closing', actions: 'endAborted' },
              { guard: 'nextStepPending', target: 'proposing', actions: 'proposeAfterStop' },
              { target: 'closing', actions: 'endCompleted' },
            ],
            STOP_FAILED: [
              { guard: 'aborted', target: 'closing', actions: 'endAborted' },
              { target: 'closing', actions: 'endHookError' },
            ],
          },
        },
        /** Driver: dispatch `agent/request-error` for the failed step. Cancellation beats retry. */
        recovering: {
          on: {
            RECOVERED: [
              { guard: 'aborted', target: 'closing', actions: 'endAborted' },
              { guard: 'retryAuthorised', target: 'closing', actions: ['requestRetry', 'endRecoveryFailure'] },
              { target: 'closing', actions: 'endRecoveryFailure' },
            ],
          },
        },
        /** Driver: append `turn/end` with `endReason`, then report what is queued. */
        closing: {
          on: {
            // A cancel that arrives before the driver writes `turn/end` still wins over the ending
            // decided already (a budget, a completion, a failure, a retry): R5, the turn ends aborted
            // with the first cause.
            ABORT: { actions: ['rememberAbort', 'endAborted'] },
            CLOSED: [
              { guard: 'retryRequested', target: 'opening', reenter: true },
              // After an aborted turn queued work is parked: only a wake latched during the abort goes on.
              { guard: and(['turnWasAborted', 'latched']), target: 'opening', reenter: true },
              { guard: 'turnWasAborted', target: '#turn.idle' },
              { guard: 'moreWork', target: 'opening', reenter: true },
              { target: '#turn.idle' },
            ],
          },
        },
      },
    },
  },
})

export type TurnMachine = typeof turnMachine
