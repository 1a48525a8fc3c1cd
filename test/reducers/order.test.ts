/**
 * reducers/order.ts, the surface-order rule every surface fold uses (L8 replace ranges, P1): the
 * binary searches against a linear scan, on surfaces whose position keys strictly increase (own
 * seqs for appended nodes, stored anchors for replacement nodes), including the rule on ranges that
 * break L8 (end before start: nothing hidden).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { keyOf, replacedRange, searchKey, type Anchors } from '../../reducers/order.js'
import { fcRuns } from '../fc-runs.js'

/** A surface: strictly increasing keys; some nodes are replacements (seq above every key, anchored). */
const arbSurface = fc
  .record({
    keys: fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 25 }).map((k) => [...k].sort((a, b) => a - b)),
    replaced: fc.array(fc.boolean(), { maxLength: 25 }),
  })
  .map(({ keys, replaced }) => {
    const anchors: Anchors = {}
    const seqs = keys.map((k, i) => {
      if (!replaced[i]) return k
      const seq = 1000 + i
      anchors[seq] = k
      return seq
    })
    return { seqs, anchors, keys }
  })

const linearFirst = (keys: number[], key: number, strict: boolean) => {
  const i = keys.findIndex((k) => (strict ? k > key : k >= key))
  return i < 0 ? keys.length : i
}

describe('surface order (order.ts)', () => {
  it('keyOf: an anchored seq has its anchor (0 included), any other seq is its own key', () => {
    expect(keyOf({ 7: 3, 9: 0 }, 7)).toBe(3)
    expect(keyOf({ 7: 3, 9: 0 }, 9)).toBe(0)
    expect(keyOf({ 7: 3 }, 5)).toBe(5)
  })

  it('searchKey = the first index whose key is >= key (> when strict), by linear scan', () => {
    fc.assert(
      fc.property(arbSurface, fc.integer({ min: -2, max: 62 }), fc.boolean(), ({ seqs, anchors, keys }, key, strict) => {
        expect(searchKey(seqs, anchors, key, strict)).toBe(linearFirst(keys, key, strict))
      }),
      { numRuns: fcRuns(500) },
    )
  })

  it('L8: replacedRange hides exactly the nodes whose keys lie in [key(start), key(end)]', () => {
    fc.assert(
      fc.property(arbSurface, fc.nat(), fc.nat(), ({ seqs, anchors, keys }, a, b) => {
        fc.pre(seqs.length > 0)
        const start = seqs[a % seqs.length]!
        const end = seqs[b % seqs.length]!
        const ks = keyOf(anchors, start)
        const ke = keyOf(anchors, end)
        const hidden = keys.map((k, i) => [k, i] as const).filter(([k]) => k >= ks && k <= ke).map(([, i]) => i)
        const r = replacedRange(seqs, anchors, start, end)
        expect(r.key).toBe(ks)
        expect(r.from).toBe(linearFirst(keys, ks, false))
        expect(r.to - r.from).toBe(hidden.length)
        if (hidden.length > 0) expect([r.from, r.to - 1]).toEqual([hidden[0], hidden.at(-1)])
      }),
      { numRuns: fcRuns(500) },
    )
  })

  it('examples: a range inside, a one-node range, an inverted range (breaks L8: hides nothing)', () => {
    const seqs = [0, 2, 1005, 9]
    const anchors = { 1005: 5 }
    expect(replacedRange(seqs, anchors, 2, 1005)).toEqual({ from: 1, to: 3, key: 2 })
    expect(replacedRange(seqs, anchors, 1005, 1005)).toEqual({ from: 2, to: 3, key: 5 })
    expect(replacedRange(seqs, anchors, 9, 2)).toEqual({ from: 3, to: 3, key: 9 })
    expect(replacedRange(seqs, anchors, 0, 9)).toEqual({ from: 0, to: 4, key: 0 })
  })
})
