/**
 * Input requests (docs/spec/lifecycle.md §11): every round of the log with its answer, and the open
 * ones. What `agent.inputs()`, `turnlog inputs`, `store.answer`, resume and the transcript read.
 * O(1) per event (an answer looks its request up by id).
 */
import { isRunnableCall, type AssistantMessage, type EventOf, type InputAnswer, type InputBy, type InputRequests, type LogEvent } from '../events/index.js'
import type { Reducer } from './types.js'

/** One round and, once given, its answer. */
export interface InputRecord {
  requestId: string
  callId: string
  turn: number
  step: number
  round: number
  /** Seq and time of the `tool/input-requested`. */
  seq: number
  time: number
  /** The tool name and the call's arguments (raw JSON), from the step's assistant message. */
  name: string
  arguments: string
  requests: InputRequests
  /** The body's state for the next round, when it gave one. */
  state?: unknown
  expiresAt?: number
  answer: { answer: InputAnswer; by: InputBy; seq: number; time: number } | null
}

export interface InputsState {
  /** Every round, keyed by request id (insertion order is log order). */
  byId: Record<string, InputRecord>
  /** The ids of the open rounds, in request order. */
  open: string[]
  /**
   * The open step's appended assistant contents (most often one), whose tool-call blocks name a
   * round's call. Kept by reference and searched only when a round is requested: a session that
   * asks for no input pays one assignment per step, not an entry per call (benchmark B5).
   */
  contents: Array<AssistantMessage['content']>
}

export const inputsReducer: Reducer<InputsState> = {
  name: 'inputs',
  initial: () => ({ byId: {}, open: [], contents: [] }),
  apply(draft, event: LogEvent) {
    switch (event.type) {
      case 'step/start':
        if (draft.contents.length > 0) draft.contents = []
        return
      case 'assistant/message': {
        const d = (event as EventOf<'assistant/message'>).data
        if (event.surfaceOp !== 'append' || d.interrupted) return
        draft.contents.push(d.message.content)
        return
      }
      case 'tool/input-requested': {
        const d = (event as EventOf<'tool/input-requested'>).data
        if (Object.hasOwn(draft.byId, d.requestId)) return // a log the checker refuses; the fold stays total
        const call = callOf(draft.contents, d.callId)
        draft.byId[d.requestId] = {
          requestId: d.requestId, callId: d.callId, turn: d.turn, step: d.step, round: d.round, seq: event.seq, time: event.time,
          name: call.name, arguments: call.arguments, requests: d.requests,
          ...(d.state !== undefined ? { state: d.state } : {}),
          ...(d.expiresAt !== undefined ? { expiresAt: d.expiresAt } : {}),
          answer: null,
        }
        draft.open.push(d.requestId)
        return
      }
      case 'tool/input-provided': {
        const d = (event as EventOf<'tool/input-provided'>).data
        const r = Object.hasOwn(draft.byId, d.requestId) ? draft.byId[d.requestId]! : undefined
        if (r === undefined || r.answer !== null) return
        r.answer = { answer: d.answer, by: d.by, seq: event.seq, time: event.time }
        const i = draft.open.indexOf(d.requestId)
        if (i >= 0) draft.open.splice(i, 1)
        return
      }
      default:
        return
    }
  },
}

/** The name and arguments of the step's runnable call `callId` (the last block with that id, as a
 * map by id would keep), or empty ones when the step has none. */
function callOf(contents: ReadonlyArray<AssistantMessage['content']>, callId: string): { name: string; arguments: string } {
  for (let i = contents.length - 1; i >= 0; i--) {
    const content = contents[i]!
    for (let j = content.length - 1; j >= 0; j--) {
      const b = content[j]!
      if (isRunnableCall(b) && b.id === callId) return { name: b.name, arguments: b.arguments }
    }
  }
  return { name: '', arguments: '' }
}

/** The open rounds, in request order. */
export function openInputs(state: InputsState): InputRecord[] {
  return state.open.map((id) => state.byId[id]!)
}

/** The rounds of one call, in order. O(rounds of the session). */
export function roundsOf(state: InputsState, turn: number, step: number, callId: string): InputRecord[] {
  return Object.values(state.byId).filter((r) => r.turn === turn && r.step === step && r.callId === callId).sort((a, b) => a.round - b.round)
}
