/**
 * When things land around an approval (issue 21 item 9, round 16): with `approvals: true` each
 * scenario carries an `ApprovalPlan` that the fuzzer's own `tools/pre-execute` and
 * `tools/post-execute` listeners follow, so that a cancel or a steer lands while an `ask` is being
 * answered, is open, or is just settling, and a post-execute hook outlives the cancel's grace
 * period. Round 14's weights found two agent defects in these shapes (an asked parallel call denied
 * by a cancel whose post-execute outlived the grace period; an `ask` verdict that settled after the
 * cancel), and later weights no longer reached them: at 150 runs a seed found either about once
 * in fifteen. Aimed plans reach them in every CI run (decision record "fuzzer" (docs/decisions/ in the repository),
 * "Approval fuzzer reach").
 */
import fc from 'fast-check'
import type { HookMap } from '../../agent/types.js'
import { asks } from './approval-tool.js'
import { bump } from './census.js'
import type { TurnlogAgent } from '../../agent/agent.js'
import type { Progress } from './stuck.js'

/** What the listeners need from the run (run.ts's `Run`; named here so this file does not import run.ts). */
export interface ExecuteHost {
  agent: TurnlogAgent
  scheduler: fc.Scheduler
  progress: Progress
  hostile: Record<string, number>
  canceller: string
  accepted: string[]
  preOrder: Array<{ turn: number; step: number; callId: string }>
  postOrder: Array<{ turn: number; step: number; callId: string }>
}

/**
 * How the fuzzer answers an asked call (`fuzz_approval` with an odd `n` divisible by 3): `prompt`
 * after one scheduled step (as before round 16), `slow` after three, so a cancel, a steer or a
 * decision of another request can come first and the verdict arrives after it.
 */
export type AskPlan = 'prompt' | 'slow'
/**
 * What a person does when an asked call comes up, in a scheduled task of its own (it lands
 * before the verdict, while the request is open, or as it settles): nothing, `cancel` the turn
 * (keeping or clearing the inbox), or `steer`. Only while the ask's turn is still open.
 */
export type AskInterrupt = 'none' | 'cancel' | 'cancel-keep' | 'steer'
/** The fuzzer's `tools/post-execute`: `prompt`, or `slow` (three scheduled steps, ignoring the
 * signal: after a cancel the grace period may run out first and the agent abandons it). */
export type PostPlan = 'prompt' | 'slow'

/** One scenario's plans; each list is taken in turn (cycled) per asked call / per post-execute. */
export interface ApprovalPlan {
  ask: AskPlan[]
  interrupt: AskInterrupt[]
  post: PostPlan[]
}

/**
 * Every other asked call is interrupted, one in two asks is slow, one post-execute in three is
 * slow. A run has one to three asked calls on average, so these weights put a cancel against an
 * open or settling ask in about half the runs that ask at all.
 */
export function arbApprovalPlan(): fc.Arbitrary<ApprovalPlan> {
  return fc.record({
    ask: fc.array(fc.constantFrom<AskPlan>('prompt', 'slow'), { minLength: 1, maxLength: 4 }),
    interrupt: fc.array(fc.constantFrom<AskInterrupt>('none', 'cancel', 'cancel', 'cancel-keep', 'steer'), { minLength: 1, maxLength: 4 }),
    post: fc.array(fc.constantFrom<PostPlan>('prompt', 'slow', 'slow'), { minLength: 1, maxLength: 4 }),
  })
}

/**
 * Calls of `fuzz_approval` for the fuzzer: approval-tool.ts's mix (most park), plus `{n: 9}` (asked
 * and parallel-safe) as often again as all the asked ones there: an asked call with a sibling
 * body in flight is open while the step runs (not parked), which is where a cancel meets it.
 */
export function arbFuzzApprovalCall(base: fc.Arbitrary<{ name: string; args: unknown }>): fc.Arbitrary<{ name: string; args: unknown }> {
  return fc.oneof({ weight: 1, arbitrary: base }, { weight: 1, arbitrary: fc.constantFrom(9, 9, 3).map((n) => ({ name: 'fuzz_approval', args: { n } as unknown })) })
}

/**
 * A model response whose asked, parallel-safe call (`fuzz_approval {n: 9}`) follows one or two
 * parallel-safe calls (and maybe one more call of any kind): with a pool above one, the ask is open
 * while its siblings' bodies run. Such steps came up about once in 150 runs from the plain mix.
 */
export function arbAskStep<C>(anyCall: fc.Arbitrary<C>): fc.Arbitrary<{ toolCalls: Array<C | { name: string; args: unknown }> }> {
  const parallel = fc.constantFrom({ name: 'fuzz_parallel', args: { n: 1 } as unknown }, { name: 'fuzz_approval', args: { n: 1 } as unknown }, { name: 'fuzz_approval', args: { n: 5 } as unknown })
  return fc.tuple(fc.array(parallel, { minLength: 1, maxLength: 2 }), fc.array(anyCall, { maxLength: 1 }))
    .map(([before, after]) => ({ toolCalls: [...before, { name: 'fuzz_approval', args: { n: 9 } }, ...after] }))
}

/**
 * The fuzzer's own `tools/pre-execute` and `tools/post-execute` listeners. Without a plan they
 * are exactly the earlier ones (one scheduled step, then `ask` for an asked call when approvals
 * are on), so scenarios without approvals keep their runs.
 */
export function fuzzExecuteHooks(
  run: ExecuteHost, plan: ApprovalPlan | undefined, approvals: boolean, schedule: () => Promise<void>,
): { pre: HookMap['tools/pre-execute']; post: HookMap['tools/post-execute'] } {
  let asked = 0
  let posts = 0
  const interruptAt = (what: AskInterrupt, turn: number) => {
    bump(run.hostile, `${what} at an ask`)
    void run.scheduler.schedule(Promise.resolve(), `${what}: at an ask`).then(() => {
      // only the ask's own turn: a later turn is not what this person saw
      if (run.agent.lifecycle.openTurn !== turn || run.agent.status === 'idle') return
      run.progress.tick()
      run.canceller = 'command'
      try {
        if (what === 'steer') run.accepted.push(run.agent.steer('fuzz steer at an ask'))
        else run.agent.cancel({ kind: 'user' }, { keepInbox: what === 'cancel-keep' })
      } finally {
        run.canceller = 'hook'
      }
    })
  }
  return {
    pre: async (p, next) => {
      run.preOrder.push({ turn: p.turn, step: p.step, callId: p.call.id })
      const asking = approvals && asks(p.call)
      const k = asked
      if (asking) asked++
      if (asking && plan) {
        const what = plan.interrupt[k % plan.interrupt.length]!
        if (what !== 'none') interruptAt(what, p.turn)
      }
      await schedule()
      if (asking && plan?.ask[k % plan.ask.length] === 'slow') {
        await schedule()
        await schedule()
      }
      // docs/spec/lifecycle.md §9: the fuzzer's own `ask`
      if (asking) return { kind: 'ask' as const, question: 'fuzz asks' }
      return next()
    },
    post: async (p, next) => {
      run.postOrder.push({ turn: p.turn, step: p.step, callId: p.call.id })
      if (plan?.post[posts++ % plan.post.length] === 'slow') {
        // ignores the signal on purpose: a hook that outlives the grace period is abandoned
        await schedule()
        await schedule()
        await schedule()
      }
      return next()
    },
  }
}
