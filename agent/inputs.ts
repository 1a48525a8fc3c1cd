/**
 * The agent's side of input rounds (docs/spec/lifecycle.md §11): the `InputEnv` a step hands the
 * tool scheduler (appends of rounds and answers), what `agent.inputs()` lists, and the checks of an
 * answer before it reaches the step (`agent.answer`). A refused answer logs nothing.
 */
import { TurnlogError, type EventDraft, type InputAnswer, type InputBy, type InputRequests } from '../events/index.js'
import type { InputsState } from '../reducers/inputs.js'
import { DEFAULT_MAX_STATE_BYTES } from '../tools/input-rounds.js'
import { checkAnswer } from '../tools/input-answer.js'
import type { AnyTool, ApprovalRun, InputEnv } from '../tools/types.js'
import type { ApprovalHost } from './approvals.js'
import type { InputAnswerInput, InputOptions, OpenInput } from './input-types.js'
export type { InputAnswerInput, InputOptions, OpenInput }
import { toBy } from './approvals.js'

/** What the input rounds need of their agent. */
export interface InputHost extends ApprovalHost {
  readonly inputsState: InputsState
  readonly inputOptions: InputOptions | undefined
  /** A re-run's recorded request id for a call's round (turnlog/evals), else the id source draws one. */
  readonly inputIdFor?: ((turn: number, step: number, callId: string, round: number) => string | undefined) | null
}

/** The env of one step's input rounds. */
export function inputEnv(agent: InputHost, turn: number, step: number): InputEnv {
  return {
    request: (call, round, requests, state, expiresInMs) => {
      const requestId = agent.inputIdFor?.(turn, step, call.id, round) ?? agent.newId()
      // one clock reading for the event's time and its expiry (as an approval's, agent/approvals.ts)
      const now = agent.now()
      const expiresAt = expiresInMs !== undefined ? Math.ceil(now + expiresInMs) : undefined
      const e = agent.append({
        type: 'tool/input-requested',
        data: {
          turn, step, callId: call.id, requestId, round, requests,
          ...(state !== undefined ? { state } : {}),
          ...(expiresAt !== undefined ? { expiresAt } : {}),
        },
        ...(expiresAt !== undefined ? { time: now } : {}),
      } as EventDraft)
      const input: OpenInput = {
        requestId, callId: call.id, name: call.name, arguments: call.arguments, round, requests,
        session: agent.sessionId, turn, step, seq: e.seq,
        ...(expiresAt !== undefined ? { expiresAt } : {}),
      }
      agent.emit('agent/input', { input })
      return { requestId, ...(expiresAt !== undefined ? { expiresAt } : {}) }
    },
    // answers are arbitrated by the agent alone for now: the stores' side channels carry decisions
    claim: (_requestId, answer, by) => ({ won: true, answer, by }),
    appendAnswer: (call, requestId, round, answer, by) => {
      agent.append({ type: 'tool/input-provided', data: { turn, step, callId: call.id, requestId, round, answer, by } })
    },
    maxStateBytes: agent.inputOptions?.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES,
    onSteer: agent.inputOptions?.onSteer ?? 'supersede',
  }
}

/** The open rounds of the log (the live fold), as `agent.inputs()` lists them. */
export function openInputList(agent: Pick<InputHost, 'inputsState' | 'sessionId'>): OpenInput[] {
  const s = agent.inputsState
  return s.open.map((id) => {
    const r = s.byId[id]!
    return {
      requestId: r.requestId, callId: r.callId, name: r.name, arguments: r.arguments, round: r.round, requests: r.requests,
      session: agent.sessionId, turn: r.turn, step: r.step, seq: r.seq,
      ...(r.expiresAt !== undefined ? { expiresAt: r.expiresAt } : {}),
    }
  })
}

/**
 * Checks and applies an answer to the running step. Refusals are coded and log nothing:
 * `UNKNOWN_INPUT`, `INPUT_ANSWERED`, `INVALID_INPUT` (naming the field), `INVALID_ARGUMENT`.
 */
export async function applyAnswer(agent: InputHost, requestId: string, input: unknown, byInput: unknown): Promise<void> {
  const where = { sessionId: agent.sessionId, field: 'requestId', info: { requestId } }
  const by: InputBy = toBy(byInput)
  const rec = typeof requestId === 'string' && Object.hasOwn(agent.inputsState.byId, requestId) ? agent.inputsState.byId[requestId]! : undefined
  if (rec === undefined) throw new TurnlogError('UNKNOWN_INPUT', `no input request ${JSON.stringify(requestId)} was asked in session ${agent.sessionId}`, where)
  if (rec.answer !== null) {
    throw new TurnlogError('INPUT_ANSWERED', `input request ${requestId} was already answered (${rec.answer.answer.action} by ${rec.answer.by.kind}, seq ${rec.answer.seq})`, { ...where, seq: rec.answer.seq })
  }
  const answer: InputAnswer = await checkAnswer(rec.requests, input, { sessionId: agent.sessionId, requestId, tool: agent.tools.get(rec.name) })
  // checked again after the await: another answer may have won meanwhile
  if (rec.answer !== null) throw new TurnlogError('INPUT_ANSWERED', `input request ${requestId} was already answered`, where)
  const run: ApprovalRun | null = agent.approvalRun
  if (run?.answer === undefined) throw new TurnlogError('UNKNOWN_INPUT', `input request ${requestId} is open in the log, but no step of this agent waits for it`, { ...where, seq: rec.seq })
  const r = run.answer(requestId, answer, by)
  if (r === 'lost' || r === 'already-answered') throw new TurnlogError('INPUT_ANSWERED', `input request ${requestId} was already answered`, where)
  if (r === 'unknown') throw new TurnlogError('UNKNOWN_INPUT', `no step of this agent waits for input request ${requestId}`, { ...where, seq: rec.seq })
}

export type { AnyTool }
