/**
 * The fuzzer generates budget trips (`fuzzAgent({ budgets: true })`, issue 25 item 2): every
 * limit, both scopes, inside retry chains, with prices that throw; L20 (with the price) and "no
 * request starts with the budget reached" hold on every run.
 */
import { describe, expect, it } from 'vitest'
import { fuzzAgent } from '../../testing/index.js'
import { censusSeed } from '../support/census-seed.js'

const runs = Number(process.env.TURNLOG_FUZZ_RUNS ?? 300)

describe('fuzzAgent with budgets (docs/spec/lifecycle.md §10)', () => {
  it(`L20: ${runs} runs with a generated budget each (random seed)`, async () => {
    await fuzzAgent({ numRuns: runs, budgets: true })
  })

  it('R5 (found by the property): a cancel while the turn closes on a spent budget ends it aborted, not budget', async () => {
    // turn 2 opens with the session's toolCalls budget spent: it claims its prompt and decides to
    // end `budget`; the cancel comes before its turn/end is written. Cancellation wins (R5).
    await fuzzAgent({ numRuns: 1, budgets: true, seed: 178958462, path: '147:4:2:3:4:4:4:4:4:6:3:4:4:3:3:3:3:3:3:3:20:19:19:20:20:19:19:21:19:20:20|/T:D' })
  })

  it('L20: the runs reach a budget end for every limit and scope, one in a retry turn, and an unknown price (fixed seed)', async () => {
    const seen = new Map<string, number>()
    const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1)
    await fuzzAgent({
      numRuns: 400,
      seed: censusSeed(20261201),
      budgets: true,
      onRun: (events) => {
        let retryTurn = false
        for (const e of events) {
          const d = e.data as any
          if (e.type === 'turn/start') retryTurn = d.cause?.kind === 'retry'
          if (e.type !== 'turn/end' || d.reason.kind !== 'budget') continue
          count(`${d.reason.which} ${d.reason.scope}`)
          if (retryTurn) count('in a retry turn')
          if (d.reason.unpriced) count('unpriced')
        }
      },
    })
    for (const which of ['inputTokens', 'outputTokens', 'totalTokens', 'costUsd', 'toolCalls']) {
      for (const scope of ['turn', 'session']) expect(seen.get(`${which} ${scope}`) ?? 0, `${which} ${scope}`).toBeGreaterThan(0)
    }
    expect(seen.get('in a retry turn') ?? 0, 'in a retry turn').toBeGreaterThan(0)
    expect(seen.get('unpriced') ?? 0, 'unpriced').toBeGreaterThan(0)
  })
})
