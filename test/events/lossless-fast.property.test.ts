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
  it('agrees with node:util isDeepStrictEqual on random JSON-like pairs, also nested past the fast walk', async () => {
    const { isDeepStrictEqual } = await import('node:util')
    const { deepEqual } = await import('../../events/deep-equal.js')
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), fc.boolean(), (a, b, same) => {
      const y = same ? JSON.parse(JSON.stringify(a)) as unknown : b
      expect(deepEqual(a, y)).toBe(isDeepStrictEqual(a, y))
    }), { numRuns: 500, seed: 14 })
    // past 600 levels the fast walk gives up and the pair closure decides: the same answers there
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), fc.boolean(), (a, b, same) => {
      const x = nest(700, a)
      const y = nest(700, same ? JSON.parse(JSON.stringify(a)) as unknown : b)
      expect(deepEqual(x, y)).toBe(isDeepStrictEqual(x, y))
    }), { numRuns: 200, seed: 14 })
    const deepA = nest(100, { x: [1] })
    expect(deepEqual(deepA, nest(100, { x: [1] }))).toBe(true)
    expect(deepEqual(deepA, nest(100, { x: [2] }))).toBe(false)
  })

  // On cyclic pairs isDeepStrictEqual answers differently by Node line (Node 24 stops at the first
  // cycle on either side), so the contract is stated on its own (docs/decisions/deep-equal.md):
  // equal exactly when no path of reads tells the two apart. The reference unfolds both graphs into
  // trees deep enough to show any difference (a pair of nodes that differs is reached by a path
  // shorter than the product of the graphs' sizes) and compares the trees, which have no cycle.
  type Graph = { nodes: { v: number; arr: boolean; to: number[] }[] }
  const graph = fc.integer({ min: 1, max: 3 }).chain((n) => fc.record({
    nodes: fc.array(fc.record({ v: fc.integer({ min: 0, max: 1 }), arr: fc.boolean(), to: fc.array(fc.integer({ min: 0, max: n - 1 }), { maxLength: 2 }) }), { minLength: n, maxLength: n }),
  }))
  const build = (g: Graph): unknown => {
    const objs = g.nodes.map((n) => (n.arr ? [] : {}) as Record<string, unknown>)
    g.nodes.forEach((n, i) => {
      const o = objs[i]!
      if (n.arr) (o as unknown as unknown[]).push(n.v, ...n.to.map((t) => objs[t]))
      else { o.v = n.v; n.to.forEach((t, k) => { o[`k${k}`] = objs[t] }) }
    })
    return objs[0]
  }
  const unfold = (g: Graph, i: number, depth: number): unknown => {
    if (depth === 0) return 'cut'
    const n = g.nodes[i]!
    const kids = n.to.map((t) => unfold(g, t, depth - 1))
    return n.arr ? [n.v, ...kids] : Object.fromEntries([['v', n.v], ...kids.map((k, j) => [`k${j}`, k])])
  }
  it('on cyclic values: equal exactly when their unfoldings are, without overflowing the stack', async () => {
    const { isDeepStrictEqual } = await import('node:util')
    const { deepEqual } = await import('../../events/deep-equal.js')
    const ref = (g: Graph, h: Graph) => {
      const d = g.nodes.length * h.nodes.length + 1
      return isDeepStrictEqual(unfold(g, 0, d), unfold(h, 0, d))
    }
    let equalCyclic = 0
    fc.assert(fc.property(graph, graph, fc.constantFrom(0, 3, 700), (g, h, depth) => {
      // nested under `depth` plain levels: the cycles are met early and past the fast walk's depth
      const want = ref(g, h)
      expect(deepEqual(nest(depth, build(g)), nest(depth, build(h)))).toBe(want)
      expect(deepEqual(nest(depth, build(h)), nest(depth, build(g)))).toBe(want)
      if (want && g.nodes.some((n) => n.to.length > 0)) equalCyclic++
    }), { numRuns: 1500, seed: 14 })
    expect(equalCyclic).toBeGreaterThan(20)
    const ring = (n: number): Record<string, unknown> => {
      const first: Record<string, unknown> = { v: 0 }
      let cur = first
      for (let i = 1; i < n; i++) cur = (cur.next = { v: i % 3 }) as Record<string, unknown>
      cur.next = first
      return first
    }
    expect(deepEqual(ring(50), ring(50))).toBe(true)
    expect(deepEqual(ring(6), ring(3))).toBe(true)
    expect(deepEqual(ring(4), ring(3))).toBe(false)
    // one object of a cycle meets both of the other's: a ring of one against a ring of two
    const one: Record<string, unknown> = { v: 0 }
    one.next = one
    const two: Record<string, unknown> = { v: 0, next: { v: 0 } }
    ;(two.next as Record<string, unknown>).next = two
    expect(deepEqual(one, two)).toBe(true)
    expect(deepEqual(one, { v: 0, next: { v: 0, next: { v: 1 } } })).toBe(false)
  })

  it('on values sharing objects many times over: answers without unfolding them (2^40 paths here)', async () => {
    const { deepEqual } = await import('../../events/deep-equal.js')
    const dag = (leaf: unknown) => {
      let v: unknown = { leaf }
      for (let i = 0; i < 40; i++) v = { a: v, b: [v] }
      return v
    }
    expect(deepEqual(dag(1), dag(1))).toBe(true)
    expect(deepEqual(dag(1), dag(2))).toBe(false)
  })
})
