/**
 * The fuzzer's approval parts that its run is built from (approvals.ts has the rest): the tool
 * `fuzz_approval` (needs approval for an even `n`, expires after 1,000 ms of the fuzzer's clock),
 * the fuzzer's `ask` (an odd `n` divisible by 3), and the recorder R9/R10 are checked from.
 */
import fc from 'fast-check'
import { z } from 'zod'
import type { TurnlogAgent } from '../../agent/agent.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool, ToolContext } from '../../tools/types.js'

/** How far the `Expire` command moves the clock: past every request's expiry. */
export const FUZZ_APPROVAL_TIMEOUT_MS = 1000

const N_ARGS = z.object({ n: z.number() })

/** `fuzz_approval`: needs approval for an even `n`; its body settles when the scheduler says. */
export function approvalTool(schedule: () => Promise<void>): AnyTool {
  return defineTool({
    name: 'fuzz_approval', description: 'needs approval', parameters: N_ARGS,
    isConcurrencySafe: (a) => a.n % 4 === 1,
    needsApproval: (a) => a.n % 2 === 0,
    approval: { timeoutMs: FUZZ_APPROVAL_TIMEOUT_MS },
    execute: async () => {
      await schedule()
      return { ok: 'approved' }
    },
  }) as AnyTool
}

/**
 * Calls of `fuzz_approval`, weighted so that most of them park (an even `n` needs approval, an odd
 * `n` divisible by 3 is asked) and some run at once: with the fuzzer's own small arguments only one
 * call in six needed approval, and whether a 150-run fuzz reached a denial by expiry or a
 * superseded decision at all depended on the seed. The arguments stay in the fuzzer's range.
 */
export function arbApprovalCall(): fc.Arbitrary<{ name: string; args: unknown }> {
  return fc.record({
    name: fc.constant('fuzz_approval'),
    args: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(0, 2, 4, 6, 8).map((n) => ({ n })) },
      { weight: 1, arbitrary: fc.constantFrom(3, 9).map((n) => ({ n })) },
      { weight: 1, arbitrary: fc.constantFrom(1, 5, 7).map((n) => ({ n })) },
    ),
  })
}

/** The fuzzer's `ask`: `fuzz_approval` with an odd `n` divisible by 3 is asked when it starts. */
export function asks(call: { name: string; arguments: string }): boolean {
  if (call.name !== 'fuzz_approval') return false
  try {
    const n = (JSON.parse(call.arguments) as { n?: unknown }).n
    return typeof n === 'number' && n % 2 !== 0 && n % 3 === 0
  } catch {
    return false
  }
}

/** What the oracle records for R9/R10. */
export interface ApprovalRecorder {
  /** Each body start: its call, the agent's status then, and its approval's decision then (if asked). */
  starts: Array<{ key: string; status: string; asked: boolean; approved: boolean }>
  /** Model requests made while the status was `parked`. */
  parkedRequests: number
}

export const newApprovalRecorder = (): ApprovalRecorder => ({ starts: [], parkedRequests: 0 })

/** Records a body start (every tool's, from the tracked wrapper). */
export function recordBodyStart(a: TurnlogAgent, rec: ApprovalRecorder, ctx: ToolContext): void {
  const st = a.approvalsState
  let asked = false
  let approved = false
  for (const id of Object.keys(st.byId)) {
    const r = st.byId[id]!
    if (r.turn !== ctx.turn || r.step !== ctx.step || r.callId !== ctx.callId) continue
    asked = true
    approved = r.decision?.decision.kind === 'approve'
  }
  // R10 per round for a call that asks for input (docs/spec/lifecycle.md §11): its body runs once per round
  const key = `${ctx.turn}.${ctx.step}.${ctx.callId}${ctx.input !== undefined ? ` round ${ctx.input.round}` : ''}`
  rec.starts.push({ key, status: a.status, asked, approved })
}

/** Records a model request (R9: none while parked). */
export function recordRequest(a: TurnlogAgent, rec: ApprovalRecorder): void {
  if (a.status === 'parked') rec.parkedRequests++
}
