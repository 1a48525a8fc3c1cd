/**
 * Input rounds under the fuzzer (docs/spec/lifecycle.md §11 "Re-execution and fuzzing"), on with
 * `fuzzAgent({ inputs: true })` and whenever your tools ask for input: how a person answers an
 * open round while parked (accept, decline, dismiss, an invalid answer first), the oracle's R10
 * (a body at most once per call and round, across restarts) and R11 (no body while its call's round
 * is open; an answer reaches the body once, only once it is logged, and as it was given), and the
 * census of the shapes the rounds reached. L21 is checked by `verify` on every log.
 */
import type { InputAnswerInput } from '../../agent/input-types.js'
import type { EventOf, InputBy, LogEvent } from '../../events/index.js'
import { bump } from './census.js'
import { FuzzViolation } from './failure.js'
import { CLIENT_TOOL, invalidResponses, validResponses } from './input-tool.js'
import type { Run } from './run.js'

/** What the checks and the answers need of the run (a hand-made run in a test may have no restarts). */
export type InputRun = Pick<Run, 'agent' | 'inputs'> & { restarts?: Record<string, number> }

const failed = (inv: string, msg: string, run: Pick<InputRun, 'agent'>): FuzzViolation => new FuzzViolation(inv, msg, [...run.agent.events])

/** How a person answers a round: accept (`pick` varies the answer), decline, dismiss (`cancel` by a
 * person), or an invalid answer first (refused, nothing logged) and then an accept. */
export type AnswerKind = 'accept' | 'decline' | 'dismiss' | 'invalid'

/** Answers one open round as `kind`; an answer that lost to another (an expiry) is `INPUT_ANSWERED`, as documented. */
export async function answerRound(run: InputRun, requestId: string, kind: AnswerKind, pick = 0): Promise<void> {
  const open = run.agent.inputs().find((o) => o.requestId === requestId)
  if (open === undefined) return
  const by = { by: { kind: 'user' as const, id: 'fuzz' } }
  try {
    if (kind === 'invalid') {
      const before = run.agent.events.length
      let code: unknown
      try {
        await run.agent.answer(requestId, { action: 'accept', responses: invalidResponses(open.requests) }, by)
      } catch (err) {
        code = (err as { code?: unknown })?.code
      }
      if (code !== 'INVALID_INPUT') throw failed('L21', `an invalid answer to ${requestId} (${open.name} round ${open.round}) was ${code === undefined ? 'accepted' : `refused with ${String(code)}`}, not refused INVALID_INPUT`, run)
      if (run.agent.events.length !== before) throw failed('L21', `a refused answer to ${requestId} logged ${run.agent.events.length - before} event(s)`, run)
      if (run.restarts) bump(run.restarts, 'input: invalid answer refused')
    }
    const answer: InputAnswerInput = kind === 'decline' ? { action: 'decline' } : kind === 'dismiss' ? { action: 'cancel' } : { action: 'accept', responses: validResponses(open.requests, pick) }
    await run.agent.answer(requestId, answer, by)
    if (run.restarts !== undefined && (run.restarts['parked: resumed parked'] ?? 0) > 0) bump(run.restarts, 'input: answered after a restart')
  } catch (err) {
    if (err instanceof FuzzViolation) throw err
    if ((err as { code?: unknown })?.code !== 'INPUT_ANSWERED') throw err
  }
}

/** R10 and R11 over what the run recorded and logged. */
export function checkInputs(run: InputRun): void {
  const r = run.inputs
  if (r.mismatches.length > 0) throw failed('R11', r.mismatches[0]!, run)
  const seen = new Set<string>()
  for (const s of r.starts) {
    const k = `${s.key} round ${s.round}`
    if (seen.has(k)) throw failed('R10', `the body of call ${s.key} ran twice for round ${s.round}`, run)
    seen.add(k)
    if (s.openRound) throw failed('R11', `the body of call ${s.key} started while a round of its call was open`, run)
    if (!s.answerLogged) throw failed('R11', `the body of call ${s.key} got the answer to round ${s.round} before it was logged`, run)
  }
  // an answer a body goes on from (its call asked again or has a result other than an abort) reached it once
  const ev = run.agent.events
  const client = new Set<string>()
  const answered: Array<{ key: string; round: number; seq: number; callId: string }> = []
  for (const e of ev) {
    if (e.type === 'tool/call' && (e as EventOf<'tool/call'>).data.name === CLIENT_TOOL) client.add((e as EventOf<'tool/call'>).data.callId)
    if (e.type !== 'tool/input-provided') continue
    const d = (e as EventOf<'tool/input-provided'>).data
    if (d.by.kind === 'canceled' || client.has(d.callId)) continue
    answered.push({ key: `${d.turn}.${d.step}.${d.callId}`, round: d.round, seq: e.seq, callId: d.callId })
  }
  for (const a of answered) {
    const later = ev.find((e) => e.seq > a.seq && (e.data as { callId?: unknown }).callId === a.callId &&
      (e.type === 'tool/input-requested' || (e.type === 'tool/result' && (e as EventOf<'tool/result'>).data.error?.code !== 'ABORTED')))
    if (later === undefined) continue
    if (!seen.has(`${a.key} round ${a.round}`)) throw failed('R11', `call ${a.key} went on after its round ${a.round} was answered (seq ${a.seq}), but its body never got the answer`, run)
  }
}

/** The census of the rounds one run reached (`input: …` under `other`). */
export function inputShapes(events: readonly LogEvent[]): string[] {
  const out: string[] = []
  const rounds = new Map<string, number>()
  const clientCalls = new Set<string>()
  for (const e of events) {
    if (e.type === 'tool/input-requested') {
      const d = (e as EventOf<'tool/input-requested'>).data
      rounds.set(`${d.turn}.${d.step}.${d.callId}`, d.round)
      if (Object.values(d.requests).some((q) => q.kind === 'client')) clientCalls.add(d.callId)
      for (const q of Object.values(d.requests)) out.push(`input: asked ${q.kind}`)
    } else if (e.type === 'tool/input-provided') {
      const d = (e as EventOf<'tool/input-provided'>).data
      out.push(`input: ${clientCalls.has(d.callId) ? 'client ' : ''}${answerShape(d.answer.action, d.by)}`)
    }
  }
  const most = Math.max(0, ...rounds.values())
  out.push(`input: runs whose calls asked at most ${most} round${most === 1 ? '' : 's'}`)
  return out
}

/** `answered`, `declined`, `dismissed` (a person), `expired`, `superseded`, `canceled`. */
function answerShape(action: string, by: InputBy): string {
  if (by.kind === 'user') return action === 'accept' ? 'answered' : action === 'decline' ? 'declined' : 'dismissed'
  return by.kind
}
