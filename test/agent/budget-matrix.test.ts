/**
 * Issue 25's test bullet "a budget trips at each of its limits, on a turn and on a session,
 * including during a retry chain" (docs/spec/lifecycle.md §10, L20), as one matrix: every limit of
 * `BUDGET_LIMITS` × both scopes × a plain turn and a retry chain. Each request costs one unit of
 * every limit (40 input + 40 output tokens, $0.08 at the test's price, one tool call when it calls
 * a tool; a failed request has usage and no call), the limit is two units: the third request is
 * never made, the turn ends `budget` naming the limit, its scope, the limit and what was used
 * (at most one request over), in a retry turn when the chain failed; a following prompt starts
 * afresh under a turn budget and makes no request under a spent session budget. L20 holds.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { BUDGET_LIMITS, BUDGET_SCOPES, type BudgetLimitName, type Usage } from '../../events/index.js'
import type { ScriptedEntry } from '../../models/index.js'
import { defineTool } from '../../tools/index.js'
import { verify } from '../../replay/verify.js'
import { data, makeAgent } from './contain-helpers.js'

const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ n: z.number() }), execute: async ({ n }) => ({ n }) })
const usage = { inputTokens: 40, outputTokens: 40 }
const price = (_model: string, u: Usage) => (u.inputTokens + u.outputTokens) / 1000
const UNIT: Record<BudgetLimitName, number> = { inputTokens: 40, outputTokens: 40, totalTokens: 80, costUsd: 0.08, toolCalls: 1 }
const call = (n: number): ScriptedEntry => ({ toolCalls: [{ name: 'echo', args: { n } }], usage })
const failing: ScriptedEntry = { error: { code: 'RATE_LIMIT' }, usage }

/**
 * The script: plain, every request calls a tool; a retry chain, the requests alternate a call and
 * a failure for tool calls (a failure calls nothing), and fail throughout for the other limits.
 * Then answers for a following prompt.
 */
function script(which: BudgetLimitName, retry: boolean): ScriptedEntry[] {
  const first = !retry ? [call(1), call(2)] : which === 'toolCalls' ? [call(1), failing, call(2)] : [failing, failing]
  return [...first, { text: 'never asked', usage }, { text: 'later', usage }, { text: 'later again', usage }]
}

describe('budgets: every limit, both scopes, with and without a retry chain (docs/spec/lifecycle.md §10, L20)', () => {
  for (const which of BUDGET_LIMITS) {
    for (const scope of BUDGET_SCOPES) {
      for (const retry of [false, true]) {
        it(`L20: ${which} per ${scope}${retry ? ' during a retry chain' : ''} trips at its limit`, async () => {
          const limit = 2 * UNIT[which]
          const s = script(which, retry)
          const { agent } = makeAgent(s, { tools: [echo], budget: { [which]: limit, scope, ...(which === 'costUsd' ? { price } : {}) } as never })
          agent.followup('go')
          await agent.whenIdle()
          const ends = data(agent.events, 'turn/end')
          const last = ends.at(-1)!
          expect(last.reason).toMatchObject({ kind: 'budget', which, scope, limit })
          // reached, and over by less than one request's worth
          expect(last.reason.used).toBeGreaterThanOrEqual(limit)
          expect(last.reason.used - limit).toBeLessThan(UNIT[which] + 1e-9)
          // the requests made: the limit's worth, never the one after it
          const requests = retry && which === 'toolCalls' ? 3 : 2
          expect(agent.events.filter((e) => e.type === 'step/start')).toHaveLength(requests)
          if (retry) {
            // the budget ended a retry turn: the chain counts as one turn for a turn budget
            const starts = data(agent.events, 'turn/start')
            expect(starts.at(-1)!.cause?.of).toBe(starts.at(-2)!.turn)
            expect(ends.slice(0, -1).map((e) => e.reason.kind)).toEqual(ends.slice(0, -1).map(() => 'error'))
          } else expect(ends).toHaveLength(1)

          // a following prompt: a turn budget starts afresh (one request, answered), a spent session budget makes none
          const before = agent.events.filter((e) => e.type === 'step/start').length
          agent.followup('next')
          await agent.whenIdle()
          const next = data(agent.events, 'turn/end').at(-1)!
          const made = agent.events.filter((e) => e.type === 'step/start').length - before
          if (scope === 'turn') {
            expect(next.reason.kind).toBe('completed')
            expect(made).toBe(1)
          } else {
            expect(next.reason).toMatchObject({ kind: 'budget', which, scope: 'session', limit })
            expect(made).toBe(0)
          }
          expect(verify(agent.events, which === 'costUsd' ? { price } : {}).violations).toEqual([])
          await agent.dispose()
        })
      }
    }
  }
})
