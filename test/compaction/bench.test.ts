/** The closing note's figure (bench/compaction.ts) on a short session: compaction keeps every request under the threshold. */
import { describe, expect, it } from 'vitest'
import { benchCompaction } from '../../bench/compaction.js'

describe('bench/compaction', () => {
  it('400 steps: with compaction no request passes 0.8 × window; without, the history grows past the window', async () => {
    process.env.TURNLOG_BENCH_COMPACTION_STEPS = '400'
    try {
      const r = await benchCompaction()
      const d = r.detail as { withCompaction: Record<string, number>; withoutCompaction: Record<string, number>; steps: number }
      expect(d.steps).toBe(400)
      expect(d.withCompaction.requests).toBe(400)
      expect(d.withCompaction.max).toBeLessThanOrEqual(0.8 * 128_000)
      expect(d.withoutCompaction.max).toBeGreaterThan(128_000)
      expect(d.withCompaction.prunes).toBeGreaterThan(0)
      expect(d.withCompaction.summaries).toBeGreaterThan(0)
      expect(r.value).toBe(d.withCompaction.meanTokensPerRequest)
    } finally {
      delete process.env.TURNLOG_BENCH_COMPACTION_STEPS
    }
  })
})
