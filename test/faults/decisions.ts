/**
 * The kill loop's accounting of decisions and tool bodies (issue 24 item 8 "with decisions";
 * docs/spec/lifecycle.md §9, L17, R9, R10): read against the logs, the decisions `store.decide` made, and the
 * body runs the workers counted (one line per body start, across processes and SIGKILLs).
 *
 * - every `tool/approval-requested` is decided exactly once in its log (none open at the end,
 *   none decided twice);
 * - every decision `store.decide` acknowledged is logged exactly once, as made (the same kind, by
 *   the same person): never dropped, never overridden by a repair, an expiry or a takeover;
 * - every logged decision by a person is one this test made (none invented);
 * - a body runs at most once per call (R10); a denied call's body never; a call whose body ran
 *   and that needs approval ran only after an `approve`; a call with a result that is not an
 *   error ran exactly once; no body ran whose `tool/call` is not in the log, and none whose
 *   result says it never started (a body starts only once its `tool/call` is durable).
 * Anything else is a problem, one line each, naming the session, approval or call.
 */
import type { EventOf, LogEvent } from '../../events/index.js'

/** One decision this test sent through `store.decide` (its `by.id` is unique). */
export interface MadeDecision {
  sessionId: string
  approvalId: string
  kind: 'approve' | 'deny'
  byId: string
  /** Whether `store.decide` resolved (acknowledged); false: it threw, e.g. in a server restart. */
  acknowledged: boolean
}

export interface DecisionAccounting {
  /** `tool/approval-requested` events in every log. */
  requested: number
  /** `tool/approval-decided` events in every log. */
  logged: number
  /** Logged decisions by `by.kind` (`user`, `canceled`, `expired`, …) and decision kind. */
  loggedBy: Record<string, number>
  /** Decisions `store.decide` acknowledged, and those it threw on that still got logged. */
  made: number
  madeUnacknowledgedLogged: number
  /** Body runs counted, and the runs of approved / denied calls. */
  bodyRuns: number
  approvedRan: number
  approvedNotRun: number
  deniedRan: number
  /** Calls whose body ran more than once. */
  duplicatedRuns: number
  /** Body runs whose `tool/call` is not in the log: each a problem (every body waits for its
   * `tool/call` to be durable, scheduler.ts; a kill before that leaves no run). */
  ranUnlogged: number
  problems: string[]
}

/** Result codes that say the body never started (docs/spec/lifecycle.md §5, §9). */
const NEVER_STARTED = new Set(['DENIED', 'APPROVAL_EXPIRED', 'ABORTED_BEFORE_DISPATCH', 'TOOL_NOT_STARTED'])

/**
 * `runs`: the workers' count lines, `<session> <callId> <tool>`; `approved`: the names of the tools
 * that need approval (none may run without a request).
 */
export function accountDecisions(
  logs: ReadonlyMap<string, readonly LogEvent[]>, made: readonly MadeDecision[], runs: readonly string[], approved: ReadonlySet<string> = new Set(['rm']),
  /** Tools whose bodies run once per input round, accounted by rounds.ts: left out here. */
  rounds: ReadonlySet<string> = new Set(['ask']),
): DecisionAccounting {
  const out: DecisionAccounting = {
    requested: 0, logged: 0, loggedBy: {}, made: 0, madeUnacknowledgedLogged: 0, bodyRuns: 0,
    approvedRan: 0, approvedNotRun: 0, deniedRan: 0, duplicatedRuns: 0, ranUnlogged: 0, problems: [],
  }
  const ran = new Map<string, number>()
  const toolOfRun = new Map<string, string>()
  for (const line of runs) {
    const [sid, callId, tool] = line.split(' ')
    if (!sid || !callId || rounds.has(tool ?? '')) continue
    out.bodyRuns++
    ran.set(`${sid} ${callId}`, (ran.get(`${sid} ${callId}`) ?? 0) + 1)
    toolOfRun.set(`${sid} ${callId}`, tool ?? '')
  }
  const madeBy = new Map(made.map((m) => [`${m.sessionId} ${m.approvalId} ${m.byId}`, m]))
  const seenCalls = new Set<string>()
  for (const [sid, events] of logs) {
    const requests = new Map<string, string>() // approvalId → callId
    const decisions = new Map<string, Array<EventOf<'tool/approval-decided'>>>()
    const calls = new Map<string, string>() // callId → tool name
    const results = new Map<string, EventOf<'tool/result'>>()
    for (const e of events) {
      if (e.type === 'tool/approval-requested') {
        const d = (e as EventOf<'tool/approval-requested'>).data
        requests.set(d.approvalId, d.callId)
      } else if (e.type === 'tool/approval-decided') {
        const ev = e as EventOf<'tool/approval-decided'>
        decisions.set(ev.data.approvalId, [...(decisions.get(ev.data.approvalId) ?? []), ev])
      } else if (e.type === 'tool/call') {
        const d = (e as EventOf<'tool/call'>).data
        calls.set(d.callId, d.name)
      } else if (e.type === 'tool/result') {
        const ev = e as EventOf<'tool/result'>
        results.set(ev.data.callId, ev)
      }
    }
    out.requested += requests.size
    const decisionOfCall = new Map<string, 'approve' | 'deny'>()
    for (const [aid, callId] of requests) {
      const ds = decisions.get(aid) ?? []
      if (ds.length === 0) out.problems.push(`${sid} approval ${aid}: never decided (open at the end)`)
      if (ds.length > 1) out.problems.push(`${sid} approval ${aid}: decided ${ds.length} times (at seqs ${ds.map((d) => d.seq).join(', ')})`)
      if (ds[0]) decisionOfCall.set(callId, ds[0].data.decision.kind)
    }
    for (const [aid, ds] of decisions) {
      if (!requests.has(aid)) out.problems.push(`${sid} approval ${aid}: decided without a request`)
      for (const d of ds) {
        out.logged++
        const key = `${d.data.by.kind} ${d.data.decision.kind}`
        out.loggedBy[key] = (out.loggedBy[key] ?? 0) + 1
        if (d.data.by.kind !== 'user') continue
        const byId = (d.data.by as { id?: string }).id ?? ''
        const m = madeBy.get(`${sid} ${aid} ${byId}`)
        if (m === undefined) out.problems.push(`${sid} approval ${aid}: logged a decision by user ${byId || '(no id)'} that no one made`)
        else if (m.kind !== d.data.decision.kind) out.problems.push(`${sid} approval ${aid}: made ${m.kind} by ${byId}, logged ${d.data.decision.kind}`)
        else if (!m.acknowledged) out.madeUnacknowledgedLogged++
      }
    }
    for (const [callId, name] of calls) {
      if (rounds.has(name)) continue
      const key = `${sid} ${callId}`
      seenCalls.add(key)
      const n = ran.get(key) ?? 0
      const decision = decisionOfCall.get(callId)
      const result = results.get(callId)
      if (n > 1) {
        out.duplicatedRuns++
        out.problems.push(`${sid} call ${callId} (${name}): body ran ${n} times`)
      }
      if (decision === 'deny' && n > 0) {
        out.deniedRan++
        out.problems.push(`${sid} call ${callId} (${name}): denied, body ran ${n} times`)
      }
      if (decision === 'approve') n > 0 ? out.approvedRan++ : out.approvedNotRun++
      if (approved.has(name) && decision === undefined && n > 0) out.problems.push(`${sid} call ${callId} (${name}): body ran without a request`)
      if (result !== undefined && result.data.error === undefined && n !== 1) {
        out.problems.push(`${sid} call ${callId} (${name}): result ok, body ran ${n} times`)
      }
      const code = result?.data.error?.code
      if (n > 0 && code !== undefined && NEVER_STARTED.has(code)) out.problems.push(`${sid} call ${callId} (${name}): the log says ${code}, the body ran ${n} times`)
    }
  }
  for (const m of made) {
    if (!m.acknowledged) continue
    out.made++
    const events = logs.get(m.sessionId) ?? []
    const logged = events.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided' && (e as EventOf<'tool/approval-decided'>).data.approvalId === m.approvalId)
    const mine = logged.filter((d) => d.data.by.kind === 'user' && (d.data.by as { id?: string }).id === m.byId)
    if (mine.length === 0) {
      const instead = logged.map((d) => `${d.data.decision.kind} by ${d.data.by.kind}`).join(', ') || 'nothing'
      out.problems.push(`${m.sessionId} approval ${m.approvalId}: ${m.kind} by ${m.byId} acknowledged by store.decide, logged ${instead}`)
    }
  }
  for (const [key, n] of ran) {
    if (seenCalls.has(key)) continue
    out.ranUnlogged += n
    if (n > 1) out.problems.push(`${key}: body ran ${n} times, its call not in the log`)
    out.problems.push(`${key} (${toolOfRun.get(key)}): a body ran, its tool/call not in the log`)
  }
  return out
}

/** One line for the test's output and the closing note. */
export function decisionsLine(a: DecisionAccounting): string {
  const by = Object.entries(a.loggedBy).sort().map(([k, n]) => `${k} ${n}`).join(', ')
  return `${a.requested} approvals requested, ${a.logged} decisions logged (${by}); ${a.made} made through store.decide and acknowledged ` +
    `(+${a.madeUnacknowledgedLogged} unacknowledged yet logged); ${a.bodyRuns} body runs: approved ran ${a.approvedRan}, approved never started ${a.approvedNotRun}, ` +
    `denied ran ${a.deniedRan}, duplicated ${a.duplicatedRuns}, ran with the call unlogged ${a.ranUnlogged}`
}
