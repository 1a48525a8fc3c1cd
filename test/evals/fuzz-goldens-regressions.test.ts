/**
 * P4 for goldens: the counterexamples the golden fuzz found on random seeds (property 1, a re-run
 * from turn 1 with the recorded model, tools and hooks reproduces the golden), each replayed
 * exactly (its seed and shrunk path): a fixed-seed regression test per divergence fixed.
 */
import fc from 'fast-check'
import { describe, it } from 'vitest'
import { reproducesFromTurnOne } from './golden-property.js'

const cases: { seed: number; path: string; what: string; providerStreams?: boolean }[] = [
  {
    seed: 404510064, path: '38:3:2:2:1:1:1:2:2:2:2:4:2:3:10:11:11:13:13',
    what: 'a cancel while a `tools` step\'s pre-step listeners wait, a latched followup: a pre-step hook that counts its messages stays in step',
  },
  {
    seed: 1077737493, path: '337:2:2:3:4:4:4:4:4:3:3:3:4:3:3:4:3:3:3:3:4:4:4',
    what: 'three parallel calls in a pool of 2, the second body settled first: the third `tool/call` before the first `tool/result`',
  },
  {
    seed: 558058480, path: '95:0:1:1:1:2:2:2:2:2:2:2:2:3:3:3:3', providerStreams: true,
    what: 'parallel bodies settling out of start order in several steps: each later `tool/call` where the golden has it among the results',
  },
  {
    seed: 569338541, path: '11:2:1:1:1:1:1:1:1:1:1:1:5:3:3:3:3:17:15', providerStreams: true,
    what: 'followups, then a cancel, right after a stopping step (the next turn did not open from a latch): the followups are re-issued before the cancel and stay parked',
  },
  {
    seed: 965177431, path: '35', providerStreams: true,
    what: 'steers after a stopping step whose turn-stopping listener throws (`error {HOOK_ERROR}`, not a pre-step\'s): issued from the turn-stopping listeners, not held for a pre-step that never runs',
  },
]

describe('P4 for goldens: the fuzz counterexamples, replayed', () => {
  for (const c of cases) {
    it(`P4: ${c.what} (seed ${c.seed})`, async () => {
      await fc.assert(reproducesFromTurnOne({ providerStreams: c.providerStreams === true }), { seed: c.seed, path: c.path, endOnFailure: true })
    })
  }
})
