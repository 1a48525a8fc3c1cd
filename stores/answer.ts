/**
 * `store.answer` (docs/spec/lifecycle.md §11): an answer to an open input round of a stored
 * session, given by any process, with no agent running it. Checked against the log (the round is
 * open, the answer fits its requests: a form's JSON Schema, a choice's options, the requested keys)
 * and logged as `tool/input-provided` under the session's write lock; durable when it resolves.
 * The next process that resumes the session runs the body's next round with it, once.
 *
 * While an agent owns the session the call is `SESSION_OWNED` (answer through that agent:
 * `agent.answer`). Refusals log nothing: `UNKNOWN_INPUT`, `INPUT_ANSWERED`, `INVALID_INPUT` (naming
 * the field), `INVALID_ARGUMENT`.
 */
import { LogChecker, TurnlogError, type EventOf, type InputAnswer, type InputBy, type LogEvent } from '../events/index.js'
import { inputsReducer } from '../reducers/inputs.js'
import { checkAnswer } from '../tools/input-answer.js'
import { checkBy, readAll } from './decide.js'
import type { LogStore, LogWriter } from './types.js'

export interface StoreAnswerOptions {
  /** Who answered (default `{kind: 'user'}`). */
  by?: { kind: 'user'; id?: string }
  /** How long to wait for the session's write lock (default 2000 ms). */
  waitMs?: number
  /** The answer's time (default `Date.now`). */
  clock?: () => number
}

/** What `store.answer` resolves with: the answer as logged, and where. */
export interface StoreAnswered {
  sessionId: string
  requestId: string
  callId: string
  turn: number
  step: number
  round: number
  answer: InputAnswer
  by: InputBy
  time: number
  seq: number
}

/** The `tool/input-provided` event for `requestId` at the end of `events`, or a coded refusal. */
export async function answerEvent(sessionId: string, events: readonly LogEvent[], requestId: string, input: unknown, by: InputBy, time: number): Promise<EventOf<'tool/input-provided'>> {
  const s = inputsReducer.initial()
  for (const e of events) inputsReducer.apply(s, e)
  const where = { sessionId, field: 'requestId', info: { requestId } }
  const r = typeof requestId === 'string' && Object.hasOwn(s.byId, requestId) ? s.byId[requestId]! : undefined
  if (r === undefined) throw new TurnlogError('UNKNOWN_INPUT', `no input request ${JSON.stringify(requestId)} was asked in session ${sessionId}`, where)
  if (r.answer !== null) {
    throw new TurnlogError('INPUT_ANSWERED', `input request ${requestId} was already answered (${r.answer.answer.action} by ${r.answer.by.kind}, seq ${r.answer.seq})`, { ...where, seq: r.answer.seq })
  }
  const answer = await checkAnswer(r.requests, input, { sessionId, requestId })
  const draft = {
    seq: events.length, time, type: 'tool/input-provided',
    data: { turn: r.turn, step: r.step, callId: r.callId, requestId, round: r.round, answer, by },
  } as EventOf<'tool/input-provided'>
  // the log's own checker has the last word (L21: same step, after its request, once; L18)
  const checker = new LogChecker()
  for (const e of events) checker.apply(e)
  const v = checker.check(draft)
  if (v.length > 0) throw new TurnlogError('INVARIANT', `the answer would break ${v[0]!.invariant}: ${v[0]!.message}`, { sessionId, seq: draft.seq, invariant: v[0]!.invariant })
  return draft
}

/** Answers an open input round of a stored session nobody runs now. Resolves when the answer is durable. */
export async function answerInStore(store: LogStore, sessionId: string, requestId: string, input: unknown, opts: StoreAnswerOptions = {}): Promise<StoreAnswered> {
  const by = checkBy(opts.by)
  const clock = opts.clock ?? Date.now
  // refusals before the lock: a bad answer never waits for it
  await answerEvent(sessionId, await readAll(store, sessionId), requestId, input, by, clock())
  const w = await openWithin(store, sessionId, opts.waitMs ?? 2000)
  try {
    const events: LogEvent[] = []
    for await (const e of w.events()) events.push(e)
    const e = await answerEvent(sessionId, events, requestId, input, by, clock())
    await w.append([e], { expectedSeq: events.length })
    const d = e.data
    return { sessionId, requestId, callId: d.callId, turn: d.turn, step: d.step, round: d.round, answer: d.answer, by: d.by, time: e.time, seq: e.seq }
  } finally {
    await w.close()
  }
}

async function openWithin(store: LogStore, sessionId: string, waitMs: number): Promise<LogWriter> {
  const until = Date.now() + waitMs
  for (let delay = 20; ; delay = Math.min(delay * 2, 200)) {
    try {
      return await store.open(sessionId, 'write')
    } catch (err) {
      if (!TurnlogError.is(err, 'SESSION_OWNED')) throw err
      if (Date.now() + delay > until) {
        throw new TurnlogError('SESSION_OWNED', `session ${sessionId} is owned by a running process: answer through its agent (agent.answer), or when it has stopped`, { sessionId }, { cause: err })
      }
      await new Promise((r) => setTimeout(r, delay))
    }
  }
}
