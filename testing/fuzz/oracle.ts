/**
 * The oracle: what every run must satisfy. `verify` (L1–L16), no driver defect, R1, R3, R4, R5,
 * R6 (with a compaction plugin), R8 and L11 from the API side after the run; "memory follows the
 * log" (the inbox machine equals the inbox folded from the log) after every command.
 */
import { isDeepStrictEqual } from 'node:util'
import type { CancelCause } from '../../events/index.js'
import { historyReducer } from '../../reducers/history.js'
import { inboxReducer } from '../../reducers/inbox.js'
import { verify } from '../../replay/verify.js'
import { FuzzViolation } from './failure.js'
import { checkR6 } from './r6.js'
import { r6Enabled, type Run } from './run.js'
import type { FuzzAgentOptions } from './types.js'

/**
 * The violation to throw: `msg` starting with an invariant id (`R5: …`) names it; otherwise
 * `invariant` does (default `API`: an inbox or cancel call broke its documented contract).
 */
export const failed = (msg: string, run: Run, invariant = 'API'): FuzzViolation => {
  const m = /^([RLP]\d+): ([\s\S]*)$/.exec(msg)
  return m ? new FuzzViolation(m[1]!, m[2]!, [...run.agent.events]) : new FuzzViolation(invariant, msg, [...run.agent.events])
}

/** Memory follows the log: the inbox machine's lists equal the inbox folded from the log. */
export function checkInboxFollowsLog(run: Run): void {
  const s = inboxReducer.initial()
  for (const e of run.agent.events) inboxReducer.apply(s, e)
  const live = { nextTurn: [...run.agent.inbox.nextTurn], nextStep: [...run.agent.inbox.nextStep] }
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(s)), JSON.parse(JSON.stringify(live)))) {
    throw failed(`inbox in memory differs from the inbox folded from the log`, run, 'MEMORY')
  }
}

/**
 * The first driver defect the run reported (an append the log refused names its L invariant), or
 * null. It is the cause of whatever the run did wrong after it (a halted agent runs no final
 * followup, a burst opens no turn), so the fuzzer reports it in their place (fuzz-agent.ts).
 */
export function driverViolation(run: Run): FuzzViolation | null {
  // the tool scheduler fails out when the log refuses one of its appends (an error naming its L
  // invariant): that is the agent's defect too (it once dropped a round the agent itself asked)
  const defects = run.errors.filter((e) => e.where === 'driver' ||
    (e.where === 'tools/scheduler' && typeof (e.error as { invariant?: unknown } | null)?.invariant === 'string'))
  if (defects.length === 0) return null
  const err = defects[0]!.error as { invariant?: unknown; stack?: unknown } | undefined
  // an append the checker refused breaks a named L invariant: report that one
  const inv = typeof err?.invariant === 'string' ? err.invariant : 'DRIVER'
  return failed(`${inv === 'DRIVER' ? 'driver defect' : 'the agent\'s append was refused (driver report)'}: ${String(err?.stack ?? err)}`, run, inv)
}

/** The checks made once the scenario has run to idle. */
export function finalChecks(run: Run, maxSteps: number, opts: FuzzAgentOptions = {}): void {
  const events = run.agent.events
  const v = verify(events, { maxStepsPerTurn: maxSteps, maxRetries: 5 })
  if (!v.ok) throw failed(`log invariants: ${v.violations.slice(0, 3).map((x) => `${x.invariant}@${x.seq} ${x.message}`).join('; ')}`, run, v.violations[0]!.invariant)
  // No driver defect and no refused append.
  const defect = driverViolation(run)
  if (defect !== null) throw defect
  // R1: status alternates, running first (idle and parked each follow running: docs/spec/lifecycle.md §9); every
  // turn/start while running; idle after the last turn/end.
  run.statuses.forEach((st, i) => {
    const ok = i === 0 ? st.status === 'running' : st.status === 'running' ? run.statuses[i - 1]!.status !== 'running' : run.statuses[i - 1]!.status === 'running'
    if (!ok) throw failed(`R1: status trace ${run.statuses.map((x) => x.status)}`, run)
  })
  for (const e of events) {
    if (e.type !== 'turn/start') continue
    const last = [...run.statuses].reverse().find((st) => st.at <= e.seq)
    if (!last || last.status !== 'running') throw failed(`R1: turn/start at seq ${e.seq} while not running`, run)
  }
  if (run.agent.status !== 'idle') throw failed('R8: not idle at the end', run)
  // W2 (nothing lost): every wakeup the run scheduled (testing/fuzz/wakeup-commands.ts) fired or was canceled
  const left = run.agent.schedules()
  if (left.length > 0) throw failed(`a wakeup never fired: ${left.map((p) => `${p.scheduleId} due ${p.due}`).join(', ')}`, run, 'W2')
  // R3: each request equals the request rebuilt from the log at that seq. One fold over the log,
  // compared at each request's seq as it passes (requests are recorded in log order; one that is
  // not restarts the fold): a fold from seq 0 per request made this quadratic in the run's length.
  type Header = { system: string; tools: unknown; config: unknown }
  let h = historyReducer.initial()
  let folded = 0
  let header: Header | undefined
  for (const { request, at } of run.requests) {
    if (at < folded) {
      h = historyReducer.initial()
      folded = 0
      header = undefined
    }
    for (; folded < at; folded++) {
      const e = events[folded]!
      historyReducer.apply(h, e)
      if (e.type === 'request/header') header = e.data as Header
    }
    if (!header || !isDeepStrictEqual(request.messages, h.messages) || request.system !== header.system
      || !isDeepStrictEqual(request.tools, header.tools) || !isDeepStrictEqual(request.config, header.config)) {
      throw failed(`R3: the request at seq ${at} differs from the log`, run)
    }
  }
  // A summary request (purpose compaction) is made only inside an open compaction bracket.
  for (const { at } of run.summaryRequests) {
    let open = false
    for (let i = at - 1; i >= 0; i--) {
      const t = events[i]!.type
      if (t === 'compaction/start') { open = true; break }
      if (t === 'compaction/end') break
    }
    if (!open) throw failed(`a summary request at seq ${at} outside a compaction bracket`, run, 'COMPACTION')
  }
  // R6 (with a compaction plugin).
  if (r6Enabled(run, opts)) {
    const cap = typeof opts.r6 === 'object' ? opts.r6.maxOverflowRetries : undefined
    const v = checkR6(events, {
      decisions: run.decisions,
      idleAt: run.statuses.filter((x) => x.status === 'idle').map((x) => x.at),
      ...(cap !== undefined ? { maxOverflowRetries: cap } : {}),
    })
    if (v !== null) throw failed(v, run)
  }
  // R5: after a cancel no request and no tool body starts in that turn; the turn ends aborted with the first cause.
  const firstCause = new Map<number, { cause: CancelCause; at: number }>()
  for (const c of run.cancels) if (!firstCause.has(c.turn)) firstCause.set(c.turn, c)
  for (const [turn, c] of firstCause) {
    if (run.requests.some((r) => r.turn === turn && r.at > c.at)) throw failed(`R5: a request started in turn ${turn} after its cancel`, run)
    if (run.bodies.started.some((b) => b.turn === turn && b.at > c.at)) throw failed(`R5: a tool body started in turn ${turn} after its cancel`, run)
    const end = events.find((e) => e.type === 'turn/end' && (e.data as { turn: number }).turn === turn)
    const reason = (end?.data as { reason: { kind: string; cause?: CancelCause } } | undefined)?.reason
    if (!reason || reason.kind !== 'aborted' || !isDeepStrictEqual(reason.cause, c.cause)) {
      throw failed(`R5: turn ${turn} must end aborted with the first cause ${JSON.stringify(c.cause)}, got ${JSON.stringify(reason)}`, run)
    }
  }
  // R4: at most maxParallelToolCalls bodies at once; a barrier body never overlaps another body;
  // pre-execute and post-execute hooks run in model order (the order of the step's tool calls).
  if (run.bodies.maxInFlight > run.maxParallel) throw failed(`R4: ${run.bodies.maxInFlight} bodies in flight with a cap of ${run.maxParallel}`, run)
  if (run.bodies.exclusiveOverlap) throw failed('R4: an exclusive body overlapped another body', run)
  const callOrder = new Map<string, string[]>()
  for (const e of events) {
    if (e.type !== 'assistant/message') continue
    const d = e.data as { turn: number; step: number; message: { content: Array<{ type: string; id?: string }> } }
    callOrder.set(`${d.turn}.${d.step}`, d.message.content.filter((b) => b.type === 'tool-call').map((b) => b.id!))
  }
  for (const [name, seen] of [['pre', run.preOrder], ['post', run.postOrder]] as const) {
    const bySteps = new Map<string, string[]>()
    for (const x of seen) bySteps.set(`${x.turn}.${x.step}`, [...(bySteps.get(`${x.turn}.${x.step}`) ?? []), x.callId])
    for (const [k, ids] of bySteps) {
      const order = callOrder.get(k) ?? []
      const idx = ids.map((id) => order.indexOf(id))
      if (idx.some((v, i) => v < 0 || (i > 0 && v <= idx[i - 1]!))) throw failed(`R4: ${name}-execute hooks out of model order in step ${k}: ${ids}`, run)
    }
  }
  // L11 (conservation, from the API side): every accepted id was logged as inserted.
  const inserted = new Set<string>()
  for (const e of events) if (e.type === 'agent/inbox/spliced') for (const m of (e.data as { inserted: Array<{ id: string }> }).inserted) inserted.add(m.id)
  for (const id of run.accepted) if (!inserted.has(id)) throw failed(`L11: accepted message ${id} never reached the log`, run)
}
