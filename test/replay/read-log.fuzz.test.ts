/**
 * Bad input: readLog never throws anything but a coded TurnlogError and never hangs, on random
 * bytes and random mutations of valid logs; a log torn at any byte offset is TORN_TAIL
 * (repairable) or, exactly at a line boundary, a clean read of the complete records (P5's input).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { defaultRegistry, encodeHeader, TurnlogError } from '../../events/index.js'
import { readLog, readLogStream, type ReadLogResult } from '../../replay/index.js'
import { arbEvents, HEADER, logBytes, smallEvents } from './jsonl-helpers.js'

const HANG_MS = 5_000

/** readLog that must settle within HANG_MS: returns the result or the (checked) error. */
async function settle(bytes: Uint8Array, chunkBytes?: number): Promise<ReadLogResult | TurnlogError> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`readLog did not settle within ${HANG_MS} ms`)), HANG_MS)
  })
  try {
    return await Promise.race([
      readLog(bytes, chunkBytes ? { chunkBytes } : {}).then(
        (r) => r,
        (e: unknown) => {
          if (!TurnlogError.is(e)) throw new Error(`readLog threw a non-coded error: ${String(e)}`, { cause: e })
          expect(typeof e.code).toBe('string')
          return e
        },
      ),
      hang,
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** What a successful read must satisfy whatever the input was. */
function checkResult(r: ReadLogResult): void {
  r.events.forEach((e, i) => {
    expect(e.seq).toBe(i)
    defaultRegistry.validate(e)
  })
}

type Mutation =
  | { kind: 'flip'; at: number; x: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; n: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'dupLine'; at: number }
  | { kind: 'swapLines'; at: number }

const arbMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), x: fc.integer({ min: 1, max: 255 }) }),
  fc.record({
    kind: fc.constant('insert' as const), at: fc.nat(),
    bytes: fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.constantFrom(...['\n', '"', '}', '\\u', '\u00e9', ',"crc":"'].map((s) => Buffer.from(s)))),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('dupLine' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('swapLines' as const), at: fc.nat() }),
)

function mutate(b: Buffer, m: Mutation): Buffer {
  if (b.length === 0) return b
  const at = m.at % b.length
  switch (m.kind) {
    case 'flip': {
      const c = Buffer.from(b)
      c[at] = c[at]! ^ m.x
      return c
    }
    case 'insert':
      return Buffer.concat([b.subarray(0, at), m.bytes, b.subarray(at)])
    case 'delete':
      return Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + m.n))])
    case 'truncate':
      return b.subarray(0, at)
    case 'dupLine':
    case 'swapLines': {
      const ls = b.toString('latin1').split('\n')
      const i = at % ls.length
      const j = (i + 1) % ls.length
      if (m.kind === 'dupLine') ls.splice(i, 0, ls[i]!)
      else [ls[i], ls[j]] = [ls[j]!, ls[i]!]
      return Buffer.from(ls.join('\n'), 'latin1')
    }
  }
}

describe('readLog on bad input: only coded errors, never a hang', () => {
  it('random bytes (1000 runs)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 400 }),
          fc.uint8Array({ maxLength: 200 }).map((u) => Buffer.concat([Buffer.from(`${encodeHeader(HEADER)}\n`), u])),
        ),
        fc.integer({ min: 1, max: 50 }),
        async (bytes, chunk) => {
          const r = await settle(bytes, chunk)
          if (!TurnlogError.is(r)) checkResult(r)
        },
      ),
      { numRuns: 1000 },
    )
  })

  it('random mutations and truncations of valid logs, with and without checksums (1000 runs)', async () => {
    await fc.assert(
      fc.asyncProperty(arbEvents, fc.boolean(), fc.array(arbMutation, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 64 }),
        async (events, checksums, ms, chunk) => {
          let b = logBytes(events, { checksums })
          for (const m of ms) b = mutate(b, m)
          const r = await settle(b, chunk)
          if (!TurnlogError.is(r)) {
            checkResult(r)
            // with checksums, a read that succeeds returns records of the original log (or a prefix
            // of them when lines were cut at boundaries / duplicated lines were refused)
            if (checksums) for (const e of r.events) expect(events).toContainEqual(e)
          }
        }),
      { numRuns: 1000 },
    )
  })

  it('readLogStream on mutated logs: only coded errors', async () => {
    await fc.assert(
      fc.asyncProperty(arbEvents, fc.array(arbMutation, { minLength: 1, maxLength: 3 }), async (events, ms) => {
        let b = logBytes(events, { checksums: true })
        for (const m of ms) b = mutate(b, m)
        try {
          for await (const x of readLogStream(b, { chunkBytes: 16 })) void x
        } catch (e) {
          expect(TurnlogError.is(e)).toBe(true)
        }
      }),
      { numRuns: 300 },
    )
  })
})

describe('torn tail at every byte offset', () => {
  for (const checksums of [true, false]) {
    it(`cut at any offset: EMPTY_LOG at 0, a clean read at line boundaries, else TORN_TAIL (checksums ${checksums})`, async () => {
      const events = smallEvents()
      const full = logBytes(events, { checksums })
      const ends: number[] = [] // offset just after each '\n'
      for (let i = 0; i < full.length; i++) if (full[i] === 0x0a) ends.push(i + 1)
      let torn = 0
      for (let cut = 0; cut <= full.length; cut++) {
        const bytes = full.subarray(0, cut)
        const complete = ends.filter((e) => e <= cut).length // complete lines (header included)
        const r = await settle(bytes, 13)
        if (cut === 0) {
          expect((r as TurnlogError).code).toBe('EMPTY_LOG')
          continue
        }
        if (ends.includes(cut)) {
          expect(TurnlogError.is(r)).toBe(false)
          expect((r as ReadLogResult).events).toEqual(events.slice(0, complete - 1))
          continue
        }
        torn++
        expect(TurnlogError.is(r, 'TORN_TAIL')).toBe(true)
        const e = r as TurnlogError
        const lineStart = complete === 0 ? 0 : ends[complete - 1]!
        expect(e.line).toBe(complete + 1)
        expect(e.offset).toBe(lineStart)
        // a torn header cannot be repaired unless it is whole (only its newline missing)
        expect(e.repairable).toBe(complete > 0 || cut === ends[0]! - 1)
        if (complete > 0) {
          expect(e.seq).toBe(complete - 1)
          const t = await readLog(bytes, { tolerateTornTail: true })
          expect(t.events).toEqual(events.slice(0, complete - 1))
          expect(t.torn!.offset).toBe(lineStart)
          expect(Buffer.from(t.torn!.bytes).equals(full.subarray(lineStart, cut))).toBe(true)
          const whole = cut === ends[complete]! - 1
          expect(t.torn!.record).toEqual(whole ? events[complete - 1] : undefined)
        }
      }
      expect(torn).toBe(full.length - ends.length)
    })
  }

  it('P3 and torn tails over arbitrary logs: every cut keeps exactly the complete records (300 runs)', async () => {
    await fc.assert(
      fc.asyncProperty(arbEvents.filter((e) => e.length > 0), fc.nat(), async (events, k) => {
        const full = logBytes(events, { checksums: true })
        const headerEnd = full.indexOf(0x0a) + 1
        const cut = headerEnd + (k % (full.length - headerEnd + 1))
        const r = await readLog(full.subarray(0, cut), { tolerateTornTail: true })
        const complete = full.subarray(0, cut).toString('latin1').split('\n').length - 2
        expect(r.events).toEqual(events.slice(0, complete))
        expect(r.torn === undefined).toBe(cut === full.length || full[cut - 1] === 0x0a)
      }),
      { numRuns: 300 },
    )
  })
})
