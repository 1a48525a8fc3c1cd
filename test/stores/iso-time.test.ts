/** stores/iso-time.ts: the cheap ISO formatter the session listings use says what `toISOString` says, for every time. */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isoTime } from '../../stores/iso-time.js'

describe('isoTime', () => {
  it('equals new Date(ms).toISOString() for any epoch ms Date can format (and the edges of its fast range)', () => {
    fc.assert(fc.property(fc.oneof(fc.integer({ min: 0, max: 253_402_300_799_999 }), fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }), fc.double({ min: 0, max: 4e12, noNaN: true })), (ms) => {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString())
    }), { numRuns: 2000 })
    for (const ms of [0, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000, 253_402_300_799_999, 253_402_300_800_000, -1]) expect(isoTime(ms)).toBe(new Date(ms).toISOString())
  })
})
