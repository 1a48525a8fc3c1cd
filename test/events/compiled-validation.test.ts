/**
 * The registry's verdict comes from zod's compiled validators (`z.compile` + `.validate`, for
 * speed: B1). This differential property holds it to the runtime parser of the same schemas
 * (`safeParse`) on valid events from the log generator and on random mutations of them: the two
 * must accept exactly the same events, so the compiled path never widens or narrows the vocabulary.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { EVENT_DATA, Envelope, defaultRegistry } from '../../events/index.js'
import { arbValidLog } from '../../testing/index.js'
import { fcRuns } from '../fc-runs.js'

function runtimeVerdict(raw: unknown): boolean {
  if (!Envelope.safeParse(raw).success) return false
  const e = raw as { type: string; data: unknown; ignorable?: boolean }
  // an own member only: a mutated type such as 'toString' names Object.prototype's, not an event's
  // (seed 1444856724); the registry keeps its types in a Map
  const schemas = EVENT_DATA as Record<string, { safeParse(v: unknown): { success: boolean } }>
  const schema = typeof e.type === 'string' && Object.hasOwn(schemas, e.type) ? schemas[e.type] : undefined
  if (!schema) return e.ignorable === true
  return schema.safeParse(e.data).success
}

const junk = fc.oneof(
  fc.constantFrom<unknown>(0, 1, -1, 1.5, 2 ** 53, '', 'x', 'append', 'text', 'finish', 'stop', 'error', true, false, null, [], {}, [1],
    { kind: 'user' }, { op: 'replace', start: 0, end: 1 }, 'tool-calls', 'next-turn', Number.NaN),
  fc.jsonValue({ maxDepth: 2 }),
)

type Path = (string | number)[]
function paths(o: unknown, pre: Path = [], out: Path[] = []): Path[] {
  if (o && typeof o === 'object') for (const k of Object.keys(o)) {
    const p = [...pre, Array.isArray(o) ? Number(k) : k]
    out.push(p)
    paths((o as Record<string, unknown>)[k], p, out)
  }
  return out
}

/** A copy of `e` with one member deleted, replaced by junk, or an extra member added. */
function mutate(e: unknown, pick: number, how: number, value: unknown): unknown {
  const c = structuredClone(e) as Record<string, unknown>
  const ps = paths(c)
  if (ps.length === 0) return c
  const p = ps[pick % ps.length]!
  let t: any = c
  for (const k of p.slice(0, -1)) t = t[k]
  const k = p[p.length - 1]!
  if (how === 0) delete t[k]
  else if (how === 1) t[k] = value
  else if (t && typeof t === 'object' && !Array.isArray(t)) t[`extra${pick % 3}`] = value
  return c
}

describe('compiled validation', () => {
  it('the compiled verdict equals safeParse on every generated event (valid logs)', () => {
    fc.assert(
      fc.property(arbValidLog({ maxTurns: 3 }), (log) => {
        for (const e of log) {
          const raw = JSON.parse(JSON.stringify(e))
          expect(defaultRegistry.isValid(raw)).toBe(true)
          expect(runtimeVerdict(raw)).toBe(true)
        }
      }),
      { numRuns: fcRuns(200) },
    )
  })

  it('a type named after an Object.prototype member is an unknown type to both (refused unless ignorable)', () => {
    for (const type of ['toString', 'constructor', 'hasOwnProperty', '__proto__', 'valueOf']) {
      for (const ignorable of [false, true]) {
        const e = { seq: 0, time: 0, type, data: {}, ...(ignorable ? { ignorable } : {}) }
        expect(defaultRegistry.isValid(e), type).toBe(ignorable)
        expect(runtimeVerdict(e), type).toBe(ignorable)
      }
    }
  })

  it('the compiled verdict equals safeParse on random one-member mutations of generated events', () => {
    let refused = 0
    const runs = fcRuns(3000)
    fc.assert(
      fc.property(arbValidLog({ maxTurns: 2 }), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 2 }), junk, (log, at, pick, how, value) => {
        const e = JSON.parse(JSON.stringify(log[at % log.length]))
        const m = mutate(e, pick, how, value)
        const compiledVerdict = defaultRegistry.isValid(m)
        expect(compiledVerdict).toBe(runtimeVerdict(m))
        if (!compiledVerdict) refused++
      }),
      { numRuns: runs },
    )
    // the mutations must actually produce refused events, or the property proves nothing (a tenth
    // of the runs at least: 300 of 3,000, or 3 of a mutation run's 30)
    expect(refused).toBeGreaterThan(runs / 10)
  })
})
