/**
 * The chunk fast path (models/parse-chunk.ts) against zod, the source of truth: for any value an
 * adapter may yield, `parseChunk` agrees with `StreamChunk.safeParse` (+ `undefined` members
 * dropped) on the verdict and, when accepted, on the value and its key order (L9: the log holds
 * only valid, grammatical chunks; what the fast path admits is exactly what zod admits).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseChunk, slowParseChunk } from '../../models/parse-chunk.js'

const num = fc.oneof(
  fc.nat(20), fc.integer({ min: -3, max: 3 }), fc.constantFrom(0.5, -0, Number.NaN, Infinity, 2 ** 53),
)
const str = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('\uD800', 'stop', 'tool-calls', 'error', 'text', 'tool-call', 'reasoning'))
const member = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(num, str) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, true, [], {}) },
)
const usage = fc.record(
  {
    inputTokens: fc.oneof(fc.nat(100), member), outputTokens: fc.oneof(fc.nat(100), member),
    cacheReadTokens: fc.oneof(fc.nat(9), fc.constant(undefined)), reasoningTokens: member, extra: member,
  },
  { requiredKeys: [] },
)
const failure = fc.record({ code: fc.constantFrom('SERVER', ''), message: str, status: fc.oneof(fc.nat(600), member) }, { requiredKeys: [] })
const TYPES = ['block-start', 'text-delta', 'reasoning-delta', 'tool-call-delta', 'block-end', 'usage', 'finish', 'bogus'] as const

/** Chunk-like objects: the right keys for some type, with keys dropped, added, mistyped, undefined. */
const chunkLike = fc.record(
  {
    type: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...TYPES) }, { weight: 1, arbitrary: member }),
    index: fc.oneof({ weight: 5, arbitrary: fc.nat(3) }, { weight: 1, arbitrary: member }),
    blockType: fc.oneof(fc.constantFrom('text', 'reasoning', 'tool-call'), member),
    text: str,
    id: str,
    name: fc.oneof(str, fc.constant(undefined)),
    argumentsDelta: str,
    usage: fc.oneof({ weight: 4, arbitrary: usage }, { weight: 1, arbitrary: member }),
    reason: fc.constantFrom('stop', 'tool-calls', 'max-tokens', 'error', 'aborted', 'nope'),
    failure,
    other: member,
  },
  { requiredKeys: [] },
)

/** Keys a chunk of each type may hold: most generated values keep to them, so many are valid. */
const KEYS: Record<string, string[]> = {
  'block-start': ['type', 'index', 'blockType'], 'text-delta': ['type', 'index', 'text'],
  'reasoning-delta': ['type', 'index', 'text'], 'tool-call-delta': ['type', 'index', 'id', 'name', 'argumentsDelta'],
  'block-end': ['type', 'index'], usage: ['type', 'usage'], finish: ['type', 'reason', 'failure'],
}

const value = fc.tuple(chunkLike, fc.boolean(), fc.boolean(), fc.boolean()).map(([c, keep, shuffle, nullProto]) => {
  let entries = Object.entries(c)
  const allowed = typeof c.type === 'string' ? KEYS[c.type] : undefined
  if (keep && allowed) entries = entries.filter(([k]) => allowed.includes(k))
  if (shuffle) entries.reverse()
  const o: Record<string, unknown> = nullProto ? Object.create(null) : {}
  for (const [k, v] of entries) o[k] = v
  return o
})

function agree(v: unknown): void {
  const fast = parseChunk(v)
  const slow = slowParseChunk(v)
  expect(fast.success).toBe(slow.success)
  if (fast.success && slow.success) {
    expect(fast.data).toStrictEqual(slow.data)
    expect(JSON.stringify(fast.data)).toBe(JSON.stringify(slow.data)) // key order too
    expect(fast.data).not.toBe(v) // a fresh copy, never the adapter's object
  }
}

describe('parseChunk (L9: the fast path admits exactly what zod admits)', () => {
  it('agrees with StreamChunk.safeParse on random chunk-like values', () => {
    let accepted = 0
    fc.assert(fc.property(value, (v) => {
      agree(v)
      if (parseChunk(v).success) accepted++
    }), { numRuns: 2000, seed: 14 })
    expect(accepted).toBeGreaterThan(150) // the property exercised the accepting side, not only refusals
  })

  it('agrees on values that are not chunk-shaped objects', () => {
    class Chunk { type = 'block-end'; index = 0 }
    const getter = { type: 'block-end', get index() { return 0 } }
    for (const v of [null, undefined, 1, 'x', [], [{ type: 'block-end', index: 0 }], new Chunk(), getter, { type: 'block-end', index: 0, [Symbol('s')]: 1 }]) agree(v)
  })

  it('drops members set to undefined and copies the usage object', () => {
    const usage = { inputTokens: 1, outputTokens: 2, cacheReadTokens: undefined }
    const r = parseChunk({ type: 'usage', usage })
    expect(r).toStrictEqual({ success: true, data: { type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } } })
    expect(r.success && r.data.type === 'usage' && r.data.usage).not.toBe(usage)
    expect(parseChunk({ type: 'tool-call-delta', index: 0, id: 'c', name: undefined, argumentsDelta: '' }))
      .toStrictEqual({ success: true, data: { type: 'tool-call-delta', index: 0, id: 'c', argumentsDelta: '' } })
  })
})
