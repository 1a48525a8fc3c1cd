/**
 * The kill loop's accounting of input rounds (issue 34 "the fault loop gains input rounds";
 * docs/spec/lifecycle.md §11, L21, R10, R11), read against the logs, the answers `store.answer`
 * made (decider.ts) and the body starts the workers counted (`<session> <callId> ask <round>`,
 * one line per start, across processes and SIGKILLs):
 *
 * - every `tool/input-requested` is answered exactly once in its log (none open at the end);
 * - every answer `store.answer` acknowledged is logged exactly once, as made (same action and
 *   response, by the same person); every logged answer by a person is one this test made;
 * - the first run of a call (round 0) starts at most once (R10: its `tool/call` is durable before
 *   it starts, and a kill after that gives `TOOL_OUTCOME_UNKNOWN`, never a second run);
 * - a run that continues round r starts only after round r's answer is logged by a person (R11),
 *   and every person's answer a call went on from (a next round or a result) reached a run;
 * - a round's answer that reached more than one run is counted (`rerun`), not hidden: the window
 *   docs/decisions/input-rounds.md names (a kill after the answer is logged and before the body's
 *   next event: the resumed process cannot tell that the body had started).
 */
import type { EventOf, LogEvent } from '../../events/index.js'

/** One answer this test gave through `store.answer` (its `by.id` is unique). */
export interface MadeAnswer {
  sessionId: string
  requestId: string
  kind: 'accept' | 'decline'
  /** The text answer to the round's one request `q` (accept). */
  text: string
  byId: string
  /** Whether `store.answer` resolved (acknowledged); false: it threw, e.g. in a server restart. */
  acknowledged: boolean
}

export interface RoundAccounting {
  /** `ask` calls with a `tool/call`, rounds asked, answers logged (by `by.kind` and action). */
  calls: number
  asked: number
  provided: number
  providedBy: Record<string, number>
  /** Answers `store.answer` acknowledged, and those it threw on that still got logged. */
  made: number
  madeUnacknowledgedLogged: number
  /** Body starts counted, person's answers that reached exactly one run, and the runs past the first. */
  bodyRuns: number
  reachedOnce: number
  rerun: number
  problems: string[]
}

export function accountRounds(logs: ReadonlyMap<string, readonly LogEvent[]>, made: readonly MadeAnswer[], runs: readonly string[]): RoundAccounting {
  const out: RoundAccounting = { calls: 0, asked: 0, provided: 0, providedBy: {}, made: 0, madeUnacknowledgedLogged: 0, bodyRuns: 0, reachedOnce: 0, rerun: 0, problems: [] }
  const started = new Map<string, number>() // "<sid> <callId> <round>" → starts
  for (const line of runs) {
    const [sid, callId, tool, round] = line.split(' ')
    if (tool !== 'ask' || !sid || !callId || round === undefined) continue
    out.bodyRuns++
    const k = `${sid} ${callId} ${round}`
    started.set(k, (started.get(k) ?? 0) + 1)
  }
  const madeBy = new Map(made.map((m) => [`${m.sessionId} ${m.requestId} ${m.byId}`, m]))
  const seenRuns = new Set<string>()
  for (const [sid, events] of logs) {
    const asks = new Set<string>()
    const requested = new Map<string, EventOf<'tool/input-requested'>>()
    const provided = new Map<string, Array<EventOf<'tool/input-provided'>>>()
    const results = new Map<string, EventOf<'tool/result'>>()
    for (const e of events) {
      if (e.type === 'tool/call' && (e as EventOf<'tool/call'>).data.name === 'ask') asks.add((e as EventOf<'tool/call'>).data.callId)
      else if (e.type === 'tool/input-requested') requested.set((e as EventOf<'tool/input-requested'>).data.requestId, e as EventOf<'tool/input-requested'>)
      else if (e.type === 'tool/input-provided') {
        const ev = e as EventOf<'tool/input-provided'>
        provided.set(ev.data.requestId, [...(provided.get(ev.data.requestId) ?? []), ev])
      } else if (e.type === 'tool/result') results.set((e as EventOf<'tool/result'>).data.callId, e as EventOf<'tool/result'>)
    }
    out.calls += asks.size
    out.asked += requested.size
    for (const callId of asks) {
      const k0 = `${sid} ${callId} 0`
      seenRuns.add(k0)
      if ((started.get(k0) ?? 0) > 1) out.problems.push(`${sid} call ${callId}: its first run started ${started.get(k0)} times (R10)`)
    }
    for (const [rid, req] of requested) {
      const ps = provided.get(rid) ?? []
      const { callId, round } = req.data
      if (ps.length === 0) out.problems.push(`${sid} request ${rid} (call ${callId} round ${round}): never answered (open at the end)`)
      if (ps.length > 1) out.problems.push(`${sid} request ${rid}: answered ${ps.length} times`)
      const p = ps[0]
      const k = `${sid} ${callId} ${round}`
      seenRuns.add(k)
      const n = started.get(k) ?? 0
      if (p === undefined) {
        if (n > 0) out.problems.push(`${sid} call ${callId}: a run continued round ${round}, which has no answer (R11)`)
        continue
      }
      if (p.data.by.kind === 'canceled') {
        // a cancel's (or repair's) answer ends the call ABORTED: no body runs for it
        if (n > 0) out.problems.push(`${sid} call ${callId}: a run continued round ${round}, answered ${p.data.answer.action} by canceled`)
        continue
      }
      // an answer the body is called with (a person's, an expiry's, a steer's): the call went on
      // from it (a next round or a result other than unknown)
      const next = [...requested.values()].some((r) => r.data.callId === callId && r.data.round === round + 1)
      const result = results.get(callId)
      const wentOn = next || (result !== undefined && result.data.error?.code !== 'TOOL_OUTCOME_UNKNOWN')
      if (wentOn && n === 0) out.problems.push(`${sid} call ${callId}: went on after round ${round}'s answer, but no run got it (R11)`)
      if (n === 1) out.reachedOnce++
      if (n > 1) out.rerun += n - 1
    }
    for (const [rid, ps] of provided) {
      for (const p of ps) {
        out.provided++
        const key = `${p.data.by.kind} ${p.data.answer.action}`
        out.providedBy[key] = (out.providedBy[key] ?? 0) + 1
        if (p.data.by.kind !== 'user') continue
        const byId = (p.data.by as { id?: string }).id ?? ''
        const m = madeBy.get(`${sid} ${rid} ${byId}`)
        const responses = (p.data.answer as { responses?: { q?: unknown } }).responses
        if (m === undefined) out.problems.push(`${sid} request ${rid}: logged an answer by user ${byId || '(no id)'} that no one made`)
        else if (m.kind !== p.data.answer.action || (m.kind === 'accept' && responses?.q !== m.text)) out.problems.push(`${sid} request ${rid}: made ${m.kind} ${m.text} by ${byId}, logged ${p.data.answer.action} ${JSON.stringify(responses ?? null)}`)
        else if (!m.acknowledged) out.madeUnacknowledgedLogged++
      }
    }
  }
  for (const m of made) {
    if (!m.acknowledged) continue
    out.made++
    const ps = (logs.get(m.sessionId) ?? []).filter((e): e is EventOf<'tool/input-provided'> => e.type === 'tool/input-provided' && (e as EventOf<'tool/input-provided'>).data.requestId === m.requestId)
    if (!ps.some((p) => p.data.by.kind === 'user' && (p.data.by as { id?: string }).id === m.byId)) {
      out.problems.push(`${m.sessionId} request ${m.requestId}: ${m.kind} by ${m.byId} acknowledged by store.answer, logged ${ps.map((p) => `${p.data.answer.action} by ${p.data.by.kind}`).join(', ') || 'nothing'}`)
    }
  }
  for (const [k, n] of started) if (!seenRuns.has(k)) out.problems.push(`${k}: ${n} run(s) of a call or round not in the log`)
  return out
}

/** One line for the test's output and the closing note. */
export function roundsLine(a: RoundAccounting): string {
  const by = Object.entries(a.providedBy).sort().map(([k, n]) => `${k} ${n}`).join(', ')
  return `${a.calls} asking calls, ${a.asked} rounds asked, ${a.provided} answers logged (${by}); ${a.made} made through store.answer and acknowledged ` +
    `(+${a.madeUnacknowledgedLogged} unacknowledged yet logged); ${a.bodyRuns} body runs; person's answers that reached one run ${a.reachedOnce}, ` +
    `runs past the first (the answered-round window) ${a.rerun}`
}
