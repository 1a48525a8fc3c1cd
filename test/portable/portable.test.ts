// Item 7 of "See a session": the root export runs without Node built-ins. These helpers replace
// node:util isDeepStrictEqual and node:buffer/node:zlib; they must give Node's verdicts (P1/P7 rely
// on deep equality of states, the JSONL codec on crc and UTF-8 checks).
import { isUtf8 as nodeIsUtf8 } from 'node:buffer'
import { isDeepStrictEqual } from 'node:util'
import { crc32 as nodeCrc32 } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { crc32, crc32Js, isUtf8, isUtf8Js } from '../../events/bytes.js'
import { deepEqual } from '../../events/deep-equal.js'

describe('portable helpers (item 7)', () => {
  it('deepEqual agrees with util.isDeepStrictEqual on JSON values and their mutations', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
      expect(deepEqual(a, b)).toBe(isDeepStrictEqual(a, b))
      const copy = JSON.parse(JSON.stringify(a)) as unknown
      expect(deepEqual(a, copy)).toBe(isDeepStrictEqual(a, copy))
    }), { numRuns: 500 })
  })

  it('deepEqual: undefined-valued keys, -0, NaN, arrays vs objects, prototypes', () => {
    const cases: Array<[unknown, unknown]> = [
      [{ a: undefined }, {}], [{}, { a: undefined }], [0, -0], [NaN, NaN], [[1], { 0: 1 }], [[], {}],
      [{ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }], [{ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] }],
      [new Uint8Array([1, 2]), new Uint8Array([1, 2])], [new Uint8Array([1, 2]), new Uint8Array([1, 3])],
      [new Date(5), new Date(5)], [new Date(5), new Date(6)], [null, {}], [Object.create(null), {}],
    ]
    for (const [a, b] of cases) expect(deepEqual(a, b)).toBe(isDeepStrictEqual(a, b))
  })

  it('crc32 (the JS fallback too) equals zlib.crc32 on strings and bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 100 }), (b, s) => {
      expect(crc32Js(b)).toBe(nodeCrc32(b))
      expect(crc32Js(s)).toBe(nodeCrc32(s))
      expect(crc32(b)).toBe(nodeCrc32(b))
    }), { numRuns: 300 })
  })

  it('isUtf8 equals buffer.isUtf8', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
      expect(isUtf8(b)).toBe(nodeIsUtf8(b))
      expect(isUtf8Js(b)).toBe(nodeIsUtf8(b))
    }), { numRuns: 1000 })
  })
})
