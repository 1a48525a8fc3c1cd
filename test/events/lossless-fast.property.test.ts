/**
 * The lossless check's fast path and the one-walk freeze (events/lossless.ts), against the
 * explicit-stack walk that names the path: on any value, `findLossy` returns what `walkLossy`
 * returns (the log refuses exactly the same values, L1 "lossless"), and `deepFreeze` freezes every
 * object inside a value, also past the recursion limit.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_NESTING, deepFreeze, findLossy, walkLossy } from '../../events/lossless.js'

const reference = (v: unknown, path = 'data', base = 2) =>
  typeof v === 'object' && v !== null ? walkLossy(v, path, base) : findLossy(v, path, { depth: base })

const leaf = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(undefined, Number.NaN, -0, Infinity, '\uDC00x', 1n, Symbol('s'), () => 1, new Date(0), new Map()),
)
const tree = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 3 }), tie('node'), { maxKeys: 4 }), fc.sparseArray(tie('node'), { maxLength: 4 })),
})).node

function nest(depth: number, inner: unknown): unknown {
  let v = inner
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v }
  return v
}

describe('findLossy fast path (L1: exactly the values JSON round-trips are admitted)', () => {
  it('agrees with the explicit-stack walk on random values', () => {
    fc.assert(fc.property(tree, fc.integer({ min: 1, max: 3 }), (v, base) => {
      expect(findLossy(v, 'data', { depth: base })).toStrictEqual(reference(v, 'data', base))
    }), { numRuns: 3000, seed: 14 })
  })

  it('agrees on cycles, symbol keys, null prototypes, class instances and the nesting limit', () => {
    const cyc: Record<string, unknown> = { a: [1] }
    ;(cyc.a as unknown[]).push(cyc)
    const sym = { a: 1, [Symbol('k')]: 2 }
    const bare = Object.assign(Object.create(null), { a: 1 })
    class K { a = 1 }
    for (const v of [cyc, sym, bare, new K(), { k: new K() }, nest(MAX_NESTING - 2, 1), nest(MAX_NESTING - 1, 1), nest(MAX_NESTING + 5, 1), nest(MAX_NESTING + 5, Number.NaN)]) {
      expect(findLossy(v)).toStrictEqual(reference(v))
    }
    expect(findLossy(cyc)?.why).toBe('cycle')
  })
})

describe('deepFreeze (every committed event is deeply frozen)', () => {
  const everyObjectFrozen = (v: unknown): boolean => {
    const stack = [v]
    const seen = new Set<unknown>()
    while (stack.length) {
      const x = stack.pop()
      if (typeof x !== 'object' || x === null || seen.has(x)) continue
      seen.add(x)
      if (!Object.isFrozen(x)) return false
      for (const k of Object.keys(x)) stack.push((x as Record<string, unknown>)[k])
    }
    return true
  }
  it('freezes every object of random JSON values', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => {
      expect(deepFreeze(v)).toBe(v)
      expect(everyObjectFrozen(v)).toBe(true)
    }), { numRuns: 500, seed: 14 })
  })
  it('freezes values nested past the recursion limit, and cycles', () => {
    const deep = nest(MAX_NESTING * 3, { x: [1] })
    deepFreeze(deep)
    expect(everyObjectFrozen(deep)).toBe(true)
    const cyc: Record<string, unknown> = { a: [{}] }
    ;(cyc.a as unknown[]).push(cyc)
    deepFreeze(cyc)
    expect(everyObjectFrozen(cyc)).toBe(true)
  })
})

describe('deepEqual without a cycle map on small values (R3: the request equals the log)', () => {
  it('agrees with node:util isDeepStrictEqual on random JSON-like pairs, nested and cyclic', async () => {
    const { isDeepStrictEqual } = await import('node:util')
    const { deepEqual } = await import('../../events/deep-equal.js')
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), fc.boolean(), (a, b, same) => {
      const y = same ? JSON.parse(JSON.stringify(a)) as unknown : b
      expect(deepEqual(a, y)).toBe(isDeepStrictEqual(a, y))
    }), { numRuns: 500, seed: 14 })
    const deepA = nest(100, { x: [1] })
    expect(deepEqual(deepA, nest(100, { x: [1] }))).toBe(true)
    expect(deepEqual(deepA, nest(100, { x: [2] }))).toBe(false)
    const ring = (n: number): Record<string, unknown> => {
      const first: Record<string, unknown> = { v: 0 }
      let cur = first
      for (let i = 1; i < n; i++) cur = (cur.next = { v: i % 3 }) as Record<string, unknown>
      cur.next = first
      return first
    }
    expect(deepEqual(ring(50), ring(50))).toBe(isDeepStrictEqual(ring(50), ring(50)))
    expect(deepEqual(ring(6), ring(3))).toBe(isDeepStrictEqual(ring(6), ring(3)))
  })
})
