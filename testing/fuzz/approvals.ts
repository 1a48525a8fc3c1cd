/**
 * Approvals under the fuzzer (docs/spec/lifecycle.md §9 "Re-execution and fuzzing", issue 21 item 9), on with
 * `fuzzAgent({ approvals: true })` and whenever your tools need approval: the fuzzer's tool
 * `fuzz_approval` and its `ask` (approval-tool.ts); the commands
 * that decide while parked (approve, edit, deny, in any order) and expire (the clock jumps, the
 * expiry timer fires when the scheduler says); the run's end decides what is still open, so it
 * reaches idle; and the oracle's R9 (nothing runs while parked; a body never before its approve)
 * and R10 (a body at most once per call), besides L17/L18 through `verify`.
 */
import type fc from 'fast-check'
import { FUZZ_APPROVAL_TIMEOUT_MS } from './approval-tool.js'
import { FuzzViolation } from './failure.js'
import type { Run } from './run.js'
import { bump } from './census.js'
import { answerRound, type AnswerKind } from './inputs.js'

const failed = (msg: string, run: Run): FuzzViolation => {
  const m = /^([RLP]\d+): ([\s\S]*)$/.exec(msg)
  return new FuzzViolation(m ? m[1]! : 'API', m ? m[2]! : msg, [...run.agent.events])
}

/** R9 and R10 over what the run recorded. */
export function checkApprovals(run: Run): void {
  const r = run.approvals
  if (r.parkedRequests > 0) throw failed(`R9: ${r.parkedRequests} model request(s) while parked`, run)
  const seen = new Set<string>()
  for (const s of r.starts) {
    if (s.status === 'parked') throw failed(`R9: the body of call ${s.key} started while parked`, run)
    if (s.asked && !s.approved) throw failed(`R9: the body of call ${s.key} started before its approval was approved`, run)
    if (seen.has(s.key)) throw failed(`R10: the body of call ${s.key} ran twice`, run)
    seen.add(s.key)
  }
}

/** R9: an expiry, a steer or a cancel ends the parking (the scheduler releases what it needs). */
async function unparked(run: Run, s: fc.Scheduler): Promise<void> {
  await s.waitFor(new Promise<void>((resolve) => {
    if (run.agent.status !== 'parked') return resolve()
    const off = run.agent.on('agent/status', ({ status }) => {
      if (status === 'parked') return
      off()
      resolve()
    })
  }))
}

/** What happens to a parked run, one per time it stands parked (generated with the scenario). */
export type ParkedAction = 'approve' | 'approve-last' | 'edit' | 'deny' | 'expire' | 'steer' | 'cancel' | 'dispose' | 'crash'

// `expire` twice: most parks are decided by the commands first, and at one in eight a 150-run fuzz
// reached a denial by expiry once on some seeds
// `dispose` and `crash` (round 16, restart.ts): the parked agent stops and the session is resumed;
// the loop then stands parked again on the resumed agent and takes the plan's next action
export const PARKED_ACTIONS: readonly ParkedAction[] = ['approve', 'approve', 'approve-last', 'edit', 'deny', 'expire', 'expire', 'steer', 'cancel', 'dispose', 'crash']

/** With input rounds: a person's refusal (`deny`: a decline or a dismissal of a round, in turn)
 * four times as often, so that every seed tried reaches both in a 150-run fuzz. */
export const INPUT_PARKED_ACTIONS: readonly ParkedAction[] = [...PARKED_ACTIONS, 'deny', 'deny', 'deny']

/** Census: a person's decision reached an agent resumed after a dispose or crash while parked. */
export function countDecision(run: Pick<Run, 'restarts'>): void {
  // (a hand-made run in a test may have no restart bookkeeping)
  if (run.restarts !== undefined && (run.restarts['parked: resumed parked'] ?? 0) > 0) run.restarts['parked: decided after resume'] = (run.restarts['parked: decided after resume'] ?? 0) + 1
}

/**
 * Runs the agent to idle: each time it stands parked, the next action of `plan` (a person's
 * decision on the first or last open request, an edit, a denial, the clock passing the expiry, a
 * steer, a cancel); once the plan is used up, every open request is approved (a person answers,
 * eventually). R9: a decision, an expiry, a steer or a cancel ends the parking.
 */
export async function settleParked(run: Run, s: fc.Scheduler, plan: readonly ParkedAction[] = []): Promise<void> {
  let i = 0
  // The `step/parked` our last action answered: the agent must not stand there again (R9). Each
  // later park appends its own `step/parked` (a decision that leaves the step waiting parks it
  // again), so a run may park any number of times; a bound on the parks (100 before round 15)
  // called a long run R9 (seed 1623662664: six followups of retry chains, 100 parks).
  let answered: number | null = null
  let refusals = 0
  for (let parks = 0; parks < MAX_PARKS; parks++) {
    let st = await s.waitFor(run.agent.whenSettled())
    if (st === 'idle') return
    if (run.agent.status !== 'parked') continue
    if (answered !== null && lastParked(run) === answered) {
      // give the agent the rest of this tick (R9: "within one tick"), then it must have moved on
      await new Promise<void>((resolve) => setImmediate(resolve))
      st = await s.waitFor(run.agent.whenSettled())
      if (st === 'idle') return
      if (run.agent.status === 'parked' && lastParked(run) === answered) {
        throw failed(`R9: the agent stayed parked after a decision: nothing was logged after the step/parked at seq ${answered} and the action on it (${plan[i - 1] ?? 'approve'})`, run)
      }
      if (run.agent.status !== 'parked') continue
    }
    answered = lastParked(run)
    const open = run.agent.approvals()
    // open input rounds (docs/spec/lifecycle.md §11) park the step as approvals do (inputs.ts answers them)
    // (a hand-made agent in a test may have no inputs())
    const rounds = typeof run.agent.inputs === 'function' ? run.agent.inputs() : []
    let action = plan[i++] ?? 'approve'
    if (action === 'dispose' || action === 'crash') {
      if (rounds.length > 0 && run.restarts !== undefined) bump(run.restarts, `input: ${action} between rounds`)
      // the resumed agent stands parked at the same step/parked: the next action answers it
      if (run.restart) await s.waitFor(run.restart(action))
      answered = null
      continue
    }
    // only a request with an expiry can expire (your own tools may have none)
    if (action === 'expire' && !open.some((o) => o.expiresAt !== undefined) && !rounds.some((o) => o.expiresAt !== undefined)) action = 'approve'
    if (open.length === 0 && rounds.length === 0) throw failed('R9: parked with no open approval or input request', run)
    // a person's action on the first open request (by seq; the last for approve-last): a round is answered
    const round = pickRound(open, rounds, action)
    if (round !== null) {
      // a run's refusals of rounds alternate: a decline, then a dismissal, …
      const kind: AnswerKind = action === 'edit' ? 'invalid' : action === 'deny' ? (refusals++ % 2 === 0 ? 'decline' : 'dismiss') : 'accept'
      await answerRound(run, round.requestId, kind, i)
      continue
    }
    const decide = async (id: string, d: Parameters<Run['agent']['decide']>[1]) => {
      try {
        await run.agent.decide(id, d, { by: { kind: 'user', id: 'fuzz' } })
        countDecision(run)
      } catch (err) {
        // an expiry decided it first: APPROVAL_DECIDED is the documented answer
        if ((err as { code?: unknown })?.code !== 'APPROVAL_DECIDED') throw err
      }
    }
    const first = open[0]!
    switch (action) {
      case 'approve': await decide(first.approvalId, { kind: 'approve' }); break
      case 'approve-last': await decide(open.at(-1)!.approvalId, { kind: 'approve' }); break
      case 'edit': {
        // an asked call's arguments were logged with its tool/call; only the fuzzer's own tool's edits are known to validate
        const called = (o: (typeof open)[number]) => run.agent.events.some((e) => e.type === 'tool/call' && (e.data as { turn: number }).turn === o.turn &&
          (e.data as { step: number }).step === o.step && (e.data as { callId: string }).callId === o.callId)
        const editable = open.find((o) => o.name === 'fuzz_approval' && !called(o))
        if (editable) await decide(editable.approvalId, { kind: 'approve', arguments: { n: 100 + i } })
        else await decide(first.approvalId, { kind: 'approve' })
        break
      }
      case 'deny': await decide(first.approvalId, { kind: 'deny', reason: 'fuzz says no' }); break
      case 'expire':
        run.advanceClock(FUZZ_APPROVAL_TIMEOUT_MS + 1)
        await unparked(run, s)
        break
      case 'steer':
        run.accepted.push(run.agent.steer('fuzz steer while parked'))
        await unparked(run, s)
        break
      case 'cancel': {
        run.canceller = 'command'
        try {
          run.agent.cancel({ kind: 'user' })
        } finally {
          run.canceller = 'hook'
        }
        await unparked(run, s)
        break
      }
    }
  }
  // every park appends a `step/parked` and needs a new model response: a run cannot park this often
  throw new FuzzViolation('STUCK', `the run parked more than ${MAX_PARKS} times, each one left after its decision (a livelock?)`, [...run.agent.events])
}

/** The open round a person's action on the first (or, for `approve-last`, the last) open request
 * reaches, by seq among approvals and rounds; null when that request is an approval or the action
 * is not a person's answer. */
function pickRound<R extends { seq: number }>(open: ReadonlyArray<{ seq: number }>, rounds: readonly R[], action: ParkedAction): R | null {
  if (rounds.length === 0) return null
  if (action === 'approve-last') return open.length === 0 || rounds.at(-1)!.seq > open.at(-1)!.seq ? rounds.at(-1)! : null
  if (action !== 'approve' && action !== 'edit' && action !== 'deny') return null
  return open.length === 0 || rounds[0]!.seq < open[0]!.seq ? rounds[0]! : null
}

/** A bound far above what a fuzz run's script can park (each park is a step of its own). */
const MAX_PARKS = 10_000

/** The seq of the log's last `step/parked` (null when there is none). */
function lastParked(run: Run): number | null {
  const ev = run.agent.events
  for (let k = ev.length - 1; k >= 0; k--) if (ev[k]!.type === 'step/parked') return ev[k]!.seq
  return null
}
