/**
 * The fuzzer generates due wakeups (issue 25 item 4): across runs, firings land idle and inside
 * turns with every `whenBusy`, some are canceled, and every run's log satisfies W1–W3 (the oracle's
 * `verify`) with no wakeup left unfired at the end (W2, checkWakeupsSettled).
 */
import { describe, expect, it } from 'vitest'
import { fuzzAgent } from '../../testing/fuzz/fuzz-agent.js'
import { censusSeed } from '../support/census-seed.js'

describe('fuzzAgent: wakeups', () => {
  it('W1–W3: firings idle and busy (queue, steer, drop) and cancels are reached; every run holds the rules', async () => {
    const seen = new Map<string, number>()
    const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1)
    const report = await fuzzAgent({
      numRuns: 300,
      seed: censusSeed(20261201),
      onRun: (events) => {
        const whenBusy = new Map<string, string>()
        let open = false
        for (const e of events) {
          const d = e.data as any
          if (e.type === 'turn/start') open = true
          else if (e.type === 'turn/end') open = false
          else if (e.type === 'schedule/created') whenBusy.set(d.scheduleId, d.whenBusy)
          else if (e.type === 'schedule/canceled') count('canceled')
          else if (e.type === 'schedule/fired') count(open ? `busy ${whenBusy.get(d.scheduleId)}${d.dropped ? ' dropped' : ''}` : 'idle')
        }
      },
    })
    for (const k of ['idle', 'busy queue', 'busy steer', 'busy drop dropped', 'canceled']) expect(seen.get(k) ?? 0, k).toBeGreaterThan(0)
    expect(report.census.other['wakeup fired'] ?? 0).toBeGreaterThan(0)
  })
})
