/**
 * `store.answer` (docs/spec/lifecycle.md §11): an answer to an open input round of a stored
 * session, given by any process, with or without an agent running it, through the same channels
 * as an approval decision (stores/decide.ts). Checked against the log (the round is open and not
 * expired, the answer fits its requests: a form's JSON Schema, a choice's options, the requested
 * keys); durable when it resolves; the body's next round runs once, in whichever process owns the
 * session then.
 *
 * With a side channel (JSONL: `<id>.decisions/`) the answer is **claimed** there first (the claim
 * is the arbiter of "first answer wins" for every answerer, the running owner included), then
 * logged: by this call under the write lock when no process owns the session, else by the owner,
 * which watches the channel (this call waits up to `waitMs` to see it logged; `seq` is null if the
 * owner has not logged it by then). Without a channel (memory) the write lock serialises
 * answerers, and while an agent owns the session the call is `SESSION_OWNED` (answer through that
 * agent: `agent.answer`). Refusals log and claim nothing: `UNKNOWN_INPUT`, `INPUT_ANSWERED`
 * (answered already, or expired), `INVALID_INPUT` (naming the field), `INVALID_ARGUMENT`.
 */
import { LogChecker, TurnlogError, type EventOf, type InputAnswer, type InputBy, type LogEvent } from '../events/index.js'
import { inputsReducer } from '../reducers/inputs.js'
import { checkAnswer } from '../tools/input-answer.js'
import { checkBy, readAll } from './decide.js'
import type { DecisionChannel, LogStore, LogWriter } from './types.js'

export interface StoreAnswerOptions {
  /** Who answered (default `{kind: 'user'}`). */
  by?: { kind: 'user'; id?: string }
  /** How long to wait for the session's write lock (default 2000 ms). */
  waitMs?: number
  /** The answer's time (default `Date.now`). */
  clock?: () => number
  /** @internal the store's side channel for this session (JSONL). */
  channel?: DecisionChannel
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
  /** Where it was logged, or null while the session's running owner has not logged it yet (it is durable all the same). */
  seq: number | null
  /**
   * True when this call appended the answer itself because no process owned the session: the
   * session then waits for whoever resumes it. False when a running owner logged it (or will).
   */
  loggedHere: boolean
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
  // as an approval's (docs/spec/lifecycle.md §9 "Expiry"): once expiresAt has passed the round is the clock's
  // (answered cancel by expired, logged by whoever opens the session next); a late answer is refused
  if (by.kind === 'user' && r.expiresAt !== undefined && time >= r.expiresAt) {
    throw new TurnlogError('INPUT_ANSWERED', `input request ${requestId} expired at ${new Date(r.expiresAt).toISOString()}: it is answered cancel by expired, a late answer is refused`, { ...where, seq: r.seq })
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

/** Answers an open input round of a stored session. Resolves when the answer is durable. */
export async function answerInStore(store: LogStore, sessionId: string, requestId: string, input: unknown, opts: StoreAnswerOptions = {}): Promise<StoreAnswered> {
  const by = checkBy(opts.by)
  const clock = opts.clock ?? Date.now
  const waitMs = opts.waitMs ?? 2000
  const time = clock()
  // refusals before the lock or the claim: a bad answer never waits, and claims nothing
  const draft = await answerEvent(sessionId, await readAll(store, sessionId), requestId, input, by, time)
  const channel = opts.channel
  if (channel?.claimAnswer === undefined) return answerUnderLock(store, sessionId, requestId, draft.data.answer, by, clock, waitMs)
  const winner = channel.claimAnswer({ requestId, answer: draft.data.answer, by, time })
  if (winner !== null) {
    throw new TurnlogError('INPUT_ANSWERED', `input request ${requestId} was already answered (${winner.answer.action} by ${winner.by.kind}${winner.by.kind === 'user' && winner.by.id !== undefined ? ` ${winner.by.id}` : ''})`, { sessionId, field: 'requestId', info: { requestId } })
  }
  // claimed: durable. Now logged, by us (no owner) or by the owner (it watches the channel).
  const until = Date.now() + waitMs
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    let w: LogWriter | null = null
    try {
      w = await store.open(sessionId, 'write')
    } catch (err) {
      if (!TurnlogError.is(err, 'SESSION_OWNED')) throw err
    }
    if (w !== null) {
      try {
        const events: LogEvent[] = []
        for await (const e of w.events()) events.push(e)
        const logged = loggedAnswer(events, requestId)
        if (logged !== undefined) return answered(sessionId, logged, logged.seq)
        const e = await answerEvent(sessionId, events, requestId, draft.data.answer, by, time)
        await w.append([e], { expectedSeq: events.length })
        return answered(sessionId, e, e.seq, true)
      } finally {
        await w.close()
      }
    }
    const logged = loggedAnswer(await readAll(store, sessionId), requestId)
    if (logged !== undefined) return answered(sessionId, logged, logged.seq)
    if (Date.now() + delay > until) return answered(sessionId, draft, null)
    await new Promise((r) => setTimeout(r, delay))
  }
}

/** The logged answer of `requestId` in `events`, if any. @internal */
export function loggedAnswer(events: readonly LogEvent[], requestId: string): EventOf<'tool/input-provided'> | undefined {
  return events.find((e): e is EventOf<'tool/input-provided'> => e.type === 'tool/input-provided' && (e as EventOf<'tool/input-provided'>).data.requestId === requestId)
}

/** What `store.answer` resolves with, from the answer's event. @internal */
export function answered(sessionId: string, e: EventOf<'tool/input-provided'>, seq: number | null, loggedHere = false): StoreAnswered {
  const d = e.data
  return { sessionId, requestId: d.requestId, callId: d.callId, turn: d.turn, step: d.step, round: d.round, answer: d.answer, by: d.by, time: e.time, seq, loggedHere }
}

async function answerUnderLock(store: LogStore, sessionId: string, requestId: string, input: unknown, by: InputBy, clock: () => number, waitMs: number): Promise<StoreAnswered> {
  const w = await openWithin(store, sessionId, waitMs)
  try {
    const events: LogEvent[] = []
    for await (const e of w.events()) events.push(e)
    const e = await answerEvent(sessionId, events, requestId, input, by, clock())
    await w.append([e], { expectedSeq: events.length })
    return answered(sessionId, e, e.seq, true)
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
