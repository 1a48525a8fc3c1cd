/**
 * The decoder's step 7 pre-filters (events/jsonl/line.ts): `numberSuspect` and `surrogateSuspect`
 * are cheaper spellings of the `NUMBER_SUSPECT` and `SURROGATE_ESCAPE` regexes and must answer
 * exactly as they do for any text: a pre-filter that says "no" where the regex says "yes" would let
 * a `-0`, an overflowing number or a lone surrogate into a replayed log unchecked (L1: every logged
 * value round-trips; docs/spec/events.md, lossless JSON).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { NUMBER_SUSPECT, numberSuspect, SURROGATE_ESCAPE, surrogateSuspect } from '../../events/jsonl/line.js'

/** Text from the characters the patterns turn on, and the JSON around them. */
const unit = fc.constantFrom('-', '0', '1', '9', 'e', 'E', '+', ':', ',', '[', ' ', '\t', '\\', 'u', 'd', 'D', '8', 'b', 'F', '"', 'x', '{', '}')
const text = fc.oneof(
  fc.string({ unit, maxLength: 40 }),
  // long digit runs around the 309 boundary, with something before and after
  fc.tuple(fc.string({ unit, maxLength: 6 }), fc.integer({ min: 300, max: 320 }), fc.string({ unit, maxLength: 6 }))
    .map(([a, n, b]) => `${a}${'7'.repeat(n)}${b}`),
)

describe('line pre-filters agree with their regexes (L1, lossless values)', () => {
  it('numberSuspect(text) === NUMBER_SUSPECT.test(text)', () => {
    fc.assert(fc.property(text, (t) => numberSuspect(t) === NUMBER_SUSPECT.test(t)), { numRuns: 5000 })
  })

  it('surrogateSuspect(text) === SURROGATE_ESCAPE.test(text)', () => {
    fc.assert(fc.property(text, (t) => surrogateSuspect(t) === SURROGATE_ESCAPE.test(t)), { numRuns: 5000 })
  })

  it('each alternative is still found: -0 after a separator, a 3-digit exponent, 309 digits, a surrogate escape', () => {
    expect(['{"t":-0}', '[ -0.0]', '{"n":1e400}', '{"n":-2E-308}', `{"n":${'1'.repeat(309)}}`, '1'.repeat(309)].map(numberSuspect)).toEqual([true, true, true, true, true, true])
    expect(['{"d":"2026-05-01"}', '{"type":"x"}', '{"n":1e40}', `{"n":${'1'.repeat(308)}}`].map(numberSuspect)).toEqual([false, false, false, false])
    expect(['"\\uD800"', '"\\ud9ff"', '"\\u0041"'].map(surrogateSuspect)).toEqual([true, true, false])
  })
})
