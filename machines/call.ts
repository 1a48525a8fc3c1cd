/**
 * One tool call's lifecycle (docs/spec/lifecycle.md "The machines, as pictures"), as a small XState v5
 * machine: `queued → classifying → pre → executing → settled → committed`, with `denied`,
 * `failed`, `aborted` and `abortedBeforeDispatch` as the other ends. Pure decisions only: the
 * scheduler performs every effect (appends, hooks, the body) and reports back; the machine decides
 * whether the body runs and which error a call that does not run gets.
 *
 * A call in `denied`, `failed` or `aborted` has had its `tool/result` decided and committed (or,
 * after a scheduler failure, is being closed with `TOOL_OUTCOME_UNKNOWN`); `committed` is the end
 * of a call whose result is a success.
 *
 * The scheduler does not run one XState actor per call: an actor costs ~20 µs to create and drive
 * (measured: about half the scheduler's per-call overhead), and a step may carry many calls. It
 * runs `callTransition`, the same decisions as a plain function over a plain `{state, error}`;
 * `test/tools/call-machine.test.ts` checks on random event sequences that the function and the
 * machine agree, state for state and error for error.
 *
 * It lives with the other machines (the scheduler, tools/scheduler.ts, imports it through
 * tools/call-machine.ts) so that `turnlog/machines` can export it without importing the tools layer.
 */
import { assign, setup } from 'xstate'
import type { ToolErrorInfo } from '../events/index.js'

/** How a call runs: alongside the step's other parallel calls, or alone. */
export type ExecutionMode = 'parallel' | 'exclusive'

/** What came out of the serial `tools/pre-execute` stage. */
export type PreVerdict =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string }
  | { kind: 'ask'; question?: string }
  /** The hook threw or returned something that is not a decision. */
  | { kind: 'hook-error'; message: string }
  /** The turn was cancelled before the body could start. */
  | { kind: 'cancelled' }
  /** An `ask` that was denied (by a person, the clock, new input or a cancel), or a `needsApproval` that threw. */
  | { kind: 'refused'; error: ToolErrorInfo }

export interface CallContext {
  callId: string
  name: string
  mode: ExecutionMode | null
  /** The error the call settled with (null: a success so far). */
  error: ToolErrorInfo | null
}

export type CallEvent =
  | { type: 'CLASSIFY'; mode: ExecutionMode }
  /** Classified, but it cannot start yet (the pool is full): back to the queue, reclassified later. */
  | { type: 'DEFER' }
  /** `tool/call` was appended. */
  | { type: 'START' }
  | { type: 'PRE_DONE'; verdict: PreVerdict; problem?: ToolErrorInfo | undefined }
  | { type: 'SETTLE'; error?: ToolErrorInfo | undefined }
  /** `tool/result` was appended with this error (post-execute may have blocked a success). */
  | { type: 'COMMIT'; error?: ToolErrorInfo | undefined }
  /** Never started: the synthetic `tool/call` + `tool/result` pair. */
  | { type: 'NOT_DISPATCHED' }
  /** The scheduler failed while this started call was unsettled. */
  | { type: 'LOST' }
  /** A call denied before it started (docs/spec/lifecycle.md §9): its `tool/call` + `tool/result` pair with this error. */
  | { type: 'REFUSED'; error: ToolErrorInfo }

export interface CallInput {
  callId: string
  name: string
}

/** The error of a call that does not run, decided from the pre-execute verdict. Pure. */
export function preVerdictError(name: string, verdict: PreVerdict, problem: ToolErrorInfo | undefined): ToolErrorInfo | null {
  switch (verdict.kind) {
    case 'cancelled':
      return { code: 'ABORTED', message: `Tool '${name}' was not run: the turn was cancelled before its body started.` }
    case 'hook-error':
      return { code: 'HOOK_ERROR', message: `Tool '${name}' was not run: the tools/pre-execute hook failed: ${verdict.message}` }
    case 'deny':
      return { code: 'DENIED', message: `Tool '${name}' was denied: ${verdict.reason}` }
    case 'ask':
      return {
        code: 'DENIED',
        message: `Tool '${name}' was denied: it needs approval${verdict.question ? ` (${verdict.question})` : ''} and nobody answered.`,
      }
    case 'refused':
      return verdict.error
    case 'allow':
      return problem ?? null
  }
}

function lostError(name: string): ToolErrorInfo {
  return { code: 'TOOL_OUTCOME_UNKNOWN', message: `The outcome of tool '${name}' is unknown: the tool scheduler failed while it ran.` }
}

function notDispatchedError(name: string): ToolErrorInfo {
  return { code: 'ABORTED_BEFORE_DISPATCH', message: `Tool '${name}' was not started.` }
}

function endFor(error: ToolErrorInfo | null | undefined): 'committed' | 'denied' | 'aborted' | 'failed' {
  if (!error) return 'committed'
  if (error.code === 'DENIED') return 'denied'
  if (error.code === 'ABORTED' || error.code === 'ABORTED_BEFORE_DISPATCH') return 'aborted'
  return 'failed'
}

export const callMachine = setup({
  types: {} as { context: CallContext; events: CallEvent; input: CallInput },
  guards: {
    runs: ({ context, event }) => event.type === 'PRE_DONE' && preVerdictError(context.name, event.verdict, event.problem) === null,
    endsCommitted: ({ event }) => event.type === 'COMMIT' && endFor(event.error) === 'committed',
    endsDenied: ({ event }) => event.type === 'COMMIT' && endFor(event.error) === 'denied',
    endsAborted: ({ event }) => event.type === 'COMMIT' && endFor(event.error) === 'aborted',
    refusedDenied: ({ event }) => event.type === 'REFUSED' && endFor(event.error) === 'denied',
    refusedAborted: ({ event }) => event.type === 'REFUSED' && endFor(event.error) === 'aborted',
  },
  actions: {
    noteMode: assign({ mode: ({ event }) => (event.type === 'CLASSIFY' ? event.mode : null) }),
    notePreError: assign({
      error: ({ context, event }) => (event.type === 'PRE_DONE' ? preVerdictError(context.name, event.verdict, event.problem) : null),
    }),
    noteSettle: assign({ error: ({ event }) => (event.type === 'SETTLE' ? (event.error ?? null) : null) }),
    noteCommit: assign({ error: ({ event }) => (event.type === 'COMMIT' ? (event.error ?? null) : null) }),
    noteLost: assign({ error: ({ context }) => lostError(context.name) }),
    noteNotDispatched: assign({ error: ({ context }) => notDispatchedError(context.name) }),
    noteRefused: assign({ error: ({ event }) => (event.type === 'REFUSED' ? event.error : null) }),
  },
}).createMachine({
  id: 'toolCall',
  context: ({ input }) => ({ callId: input.callId, name: input.name, mode: null, error: null }),
  initial: 'queued',
  states: {
    queued: {
      on: {
        CLASSIFY: { target: 'classifying', actions: 'noteMode' },
        NOT_DISPATCHED: { target: 'abortedBeforeDispatch', actions: 'noteNotDispatched' },
        REFUSED: [
          { guard: 'refusedDenied', target: 'denied', actions: 'noteRefused' },
          { guard: 'refusedAborted', target: 'aborted', actions: 'noteRefused' },
          { target: 'failed', actions: 'noteRefused' },
        ],
      },
    },
    classifying: {
      on: {
        CLASSIFY: { target: 'classifying', actions: 'noteMode' },
        DEFER: 'queued',
        START: 'pre',
        NOT_DISPATCHED: { target: 'abortedBeforeDispatch', actions: 'noteNotDispatched' },
        REFUSED: [
          { guard: 'refusedDenied', target: 'denied', actions: 'noteRefused' },
          { guard: 'refusedAborted', target: 'aborted', actions: 'noteRefused' },
          { target: 'failed', actions: 'noteRefused' },
        ],
      },
    },
    pre: {
      on: {
        PRE_DONE: [
          { guard: 'runs', target: 'executing' },
          { target: 'settled', actions: 'notePreError' },
        ],
        LOST: { target: 'failed', actions: 'noteLost' },
      },
    },
    executing: {
      on: {
        SETTLE: { target: 'settled', actions: 'noteSettle' },
        LOST: { target: 'failed', actions: 'noteLost' },
      },
    },
    settled: {
      on: {
        COMMIT: [
          { guard: 'endsCommitted', target: 'committed', actions: 'noteCommit' },
          { guard: 'endsDenied', target: 'denied', actions: 'noteCommit' },
          { guard: 'endsAborted', target: 'aborted', actions: 'noteCommit' },
          { target: 'failed', actions: 'noteCommit' },
        ],
        LOST: { target: 'failed', actions: 'noteLost' },
      },
    },
    committed: { type: 'final' },
    denied: { type: 'final' },
    failed: { type: 'final' },
    aborted: { type: 'final' },
    abortedBeforeDispatch: { type: 'final' },
  },
})

export type CallState = 'queued' | 'classifying' | 'pre' | 'executing' | 'settled' | 'committed' | 'denied' | 'failed' | 'aborted' | 'abortedBeforeDispatch'

export interface CallSnapshot {
  state: CallState
  mode: ExecutionMode | null
  error: ToolErrorInfo | null
}

export function initialCallSnapshot(): CallSnapshot {
  return { state: 'queued', mode: null, error: null }
}

/**
 * `callMachine` as a pure function: the next snapshot for an event, or the same object when the
 * machine ignores the event in that state. `name` is the tool name (for error messages).
 */
export function callTransition(s: CallSnapshot, name: string, e: CallEvent): CallSnapshot {
  switch (s.state) {
    case 'queued':
      if (e.type === 'CLASSIFY') return { ...s, state: 'classifying', mode: e.mode }
      if (e.type === 'NOT_DISPATCHED') return { ...s, state: 'abortedBeforeDispatch', error: notDispatchedError(name) }
      if (e.type === 'REFUSED') return { ...s, state: endFor(e.error) as CallState, error: e.error }
      return s
    case 'classifying':
      if (e.type === 'CLASSIFY') return { ...s, mode: e.mode }
      if (e.type === 'DEFER') return { ...s, state: 'queued' }
      if (e.type === 'START') return { ...s, state: 'pre' }
      if (e.type === 'NOT_DISPATCHED') return { ...s, state: 'abortedBeforeDispatch', error: notDispatchedError(name) }
      if (e.type === 'REFUSED') return { ...s, state: endFor(e.error) as CallState, error: e.error }
      return s
    case 'pre':
      if (e.type === 'PRE_DONE') {
        const error = preVerdictError(name, e.verdict, e.problem)
        return error === null ? { ...s, state: 'executing' } : { ...s, state: 'settled', error }
      }
      if (e.type === 'LOST') return { ...s, state: 'failed', error: lostError(name) }
      return s
    case 'executing':
      if (e.type === 'SETTLE') return { ...s, state: 'settled', error: e.error ?? null }
      if (e.type === 'LOST') return { ...s, state: 'failed', error: lostError(name) }
      return s
    case 'settled':
      if (e.type === 'COMMIT') return { ...s, state: endFor(e.error), error: e.error ?? null }
      if (e.type === 'LOST') return { ...s, state: 'failed', error: lostError(name) }
      return s
    default:
      return s
  }
}
