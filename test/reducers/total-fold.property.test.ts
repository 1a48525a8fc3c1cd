/**
 * The reducers are total (docs/spec/reliability.md "Bad input"; P7): `turnlog report` and `inspect` fold a log
 * that breaks invariants to show it beside its violations, with no try/catch around the fold
 * (inspector/src/cursor.ts), so every reducer must fold ANY sequence of schema-valid events without
 * throwing, deterministically. A reducer that dereferences "the open step" or "the open turn"
 * without checking there is one would crash the page on the first hostile log.
 *
 * The event sequences: subsequences of valid logs (in order and shuffled), and valid logs with one
 * invariant broken by the hostile-log mutations (testing/arbitraries). Issue 15 part 3: this kills
 * the `if (step) …` → `if (true) …` mutants of the folds, which a valid log never reaches.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { ALL_REDUCERS, foldEvents, type ReplayState } from '../../reducers/index.js'
import { applyEvent, initialReplayState } from '../../reducers/projection.js'
import { arbAnyLogMutation, arbValidLog } from '../../testing/arbitraries/index.js'
import { fcRuns } from '../fc-runs.js'

/** Every slice folded on its own, event by event (the live agent's way), then the projection. */
function foldEverySlice(events: readonly LogEvent[]): { slices: Record<string, unknown>; whole: ReplayState } {
  const slices: Record<string, unknown> = {}
  for (const [name, reducer] of Object.entries(ALL_REDUCERS)) {
    const state = (reducer as { initial(): unknown }).initial()
    for (const e of events) (reducer as { apply(s: unknown, e: LogEvent): void }).apply(state, e)
    slices[name] = state
  }
  const whole = initialReplayState()
  for (const e of events) applyEvent(whole, e)
  return { slices, whole }
}

/** A valid log's events, some dropped, in log order or shuffled. */
const arbSubsequence = arbValidLog({ minTurns: 2 }).chain((log) =>
  fc
    .tuple(fc.subarray(log.map((_, i) => i)), fc.boolean())
    .chain(([kept, shuffle]) => (shuffle ? fc.shuffledSubarray(kept, { minLength: kept.length }) : fc.constant(kept)))
    .map((idx) => idx.map((i) => log[i]!)),
)

describe('the folds are total and deterministic on hostile event sequences (P7, docs/spec/reliability.md "Bad input")', () => {
  it('P7: any subsequence of a valid log, in order or shuffled, folds in every slice without throwing, the same twice', () => {
    fc.assert(
      fc.property(arbSubsequence, (events) => {
        const a = foldEverySlice(events)
        const b = foldEverySlice(events)
        expect(b).toEqual(a)
        // The one-pass fold agrees with the incremental one (P1) on hostile input too.
        expect(foldEvents(events)).toEqual(a.whole)
      }),
      { numRuns: fcRuns(300) },
    )
  })

  it('P7: a valid log with any one invariant broken folds in every slice without throwing, the same twice', () => {
    fc.assert(
      fc.property(arbAnyLogMutation(), (m) => {
        const a = foldEverySlice(m.log)
        expect(foldEverySlice(m.log)).toEqual(a)
        expect(foldEvents(m.log)).toEqual(a.whole)
      }),
      { numRuns: fcRuns(300) },
    )
  })

  it('P7: the events of a log folded from its end backwards (every open container missing) fold without throwing', () => {
    fc.assert(
      fc.property(arbValidLog({ minTurns: 2 }), (log) => {
        const reversed = [...log].reverse()
        const a = foldEverySlice(reversed)
        expect(foldEverySlice(reversed)).toEqual(a)
      }),
      { numRuns: fcRuns(100) },
    )
  })
})
