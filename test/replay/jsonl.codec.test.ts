/** The JSONL codec: P3 (encode → decode is the identity), the crc format, decodeLine. */
import { crc32 } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  decodeHeader, decodeLine, defaultRegistry, encodeEvent, encodeHeader, TurnlogError, type LogEvent,
} from '../../events/index.js'
import { readLog } from '../../replay/index.js'
import { arbValidLog } from '../../testing/arbitraries/valid-log.js'
import { arbDraft, arbEvents, HEADER, logBytes } from './jsonl-helpers.js'

function codeOf(f: () => unknown): string | undefined {
  try {
    f()
  } catch (e) {
    if (TurnlogError.is(e)) return e.code
    throw e
  }
  return undefined
}

describe('P3: encode → decode through JSONL is the identity', () => {
  for (const checksums of [false, true]) {
    it(`P3 readLog(encode(log)) deep-equals the log (checksums ${checksums}, 1000 runs)`, async () => {
      await fc.assert(
        fc.asyncProperty(arbEvents, fc.integer({ min: 1, max: 64 }), async (events, chunkBytes) => {
          const bytes = logBytes(events, { checksums })
          const r = await readLog(bytes, { chunkBytes })
          expect(r.header).toEqual(checksums ? { ...HEADER, checksums: 'crc32' } : HEADER)
          expect(r.events).toEqual(events)
          expect(r.torn).toBeUndefined()
        }),
        { numRuns: 1000 },
      )
    })

    it(`P3 decodeLine(encodeEvent(e)) deep-equals e (checksums ${checksums}, 1000 runs)`, () => {
      fc.assert(
        fc.property(arbDraft, fc.nat(), (d, seq) => {
          const e = { seq, time: 5, ...d } as unknown as LogEvent
          const line = encodeEvent(e, { checksums })
          expect(line.includes('\n')).toBe(false)
          expect(decodeLine(line, { checksums, expectedSeq: seq })).toEqual(e)
          expect(decodeLine(Buffer.from(line), { checksums })).toEqual(e)
        }),
        { numRuns: 1000 },
      )
    })

    it(`P3 logs of arbValidLog (testing/arbitraries) round-trip (checksums ${checksums})`, async () => {
      await fc.assert(
        fc.asyncProperty(arbValidLog(), async (events) => {
          const r = await readLog(logBytes(events, { checksums }), { chunkBytes: 97 })
          expect(r.events).toEqual(events)
        }),
        { numRuns: 200 },
      )
    })
  }
})

describe('the crc member', () => {
  it('is the CRC-32 (zlib.crc32) of the line up to ,"crc": followed by }, as 8 lowercase hex digits', () => {
    fc.assert(
      fc.property(arbDraft, (d) => {
        const e = { seq: 0, time: 1, ...d } as unknown as LogEvent
        const line = encodeEvent(e, { checksums: true })
        const m = /,"crc":"([0-9a-f]{8})"\}$/.exec(line)
        expect(m).not.toBeNull()
        const body = `${line.slice(0, m!.index)}}`
        expect(body).toBe(JSON.stringify(e))
        expect(m![1]).toBe(crc32(Buffer.from(body, 'utf8')).toString(16).padStart(8, '0'))
      }),
      { numRuns: 300 },
    )
  })

  it('is checked on long lines too (native path above 4 KiB) and any changed byte is caught', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20_000 }), fc.nat(), fc.integer({ min: 1, max: 255 }), (n, at, x) => {
        const e = { seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } } as unknown as LogEvent
        const big = { seq: 0, time: 1, type: 'ext/pad', ignorable: true, data: 'a'.repeat(n) } as unknown as LogEvent
        for (const ev of [e, big]) {
          const b = Buffer.from(encodeEvent(ev, { checksums: true }))
          expect(decodeLine(b, { checksums: true })).toEqual(ev)
          const i = at % b.length
          const m = Buffer.from(b)
          m[i] = m[i]! ^ x
          // a changed byte is never accepted as the same record
          let out: unknown
          try {
            out = decodeLine(m, { checksums: true })
          } catch (err) {
            expect(TurnlogError.is(err)).toBe(true)
            continue
          }
          expect(out).not.toEqual(ev)
          throw new Error(`a mutation at byte ${i} was accepted`)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('without the header flag a present crc is still checked; a missing one is not required', () => {
    const e = { seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } } as unknown as LogEvent
    const line = encodeEvent(e, { checksums: true })
    expect(decodeLine(line)).toEqual(e)
    expect(codeOf(() => decodeLine(line.replace(/"crc":"(.)/, (_, c) => `"crc":"${c === '0' ? '1' : '0'}`)))).toBe('CHECKSUM_MISMATCH')
    expect(decodeLine(JSON.stringify(e))).toEqual(e)
    expect(codeOf(() => decodeLine(JSON.stringify(e), { checksums: true }))).toBe('CHECKSUM_MISMATCH')
    expect(codeOf(() => decodeLine(line.replace(/"crc":"[0-9a-f]{8}"/, '"crc":"ABCDEF01"')))).toBe('CHECKSUM_MISMATCH')
  })

  it('encodeEvent refuses an event that already has a crc member', () => {
    const e = { seq: 0, time: 1, type: 'turn/start', data: { turn: 1 }, crc: 'x' } as unknown as LogEvent
    expect(codeOf(() => encodeEvent(e, { checksums: true }))).toBe('INVALID_EVENT')
  })
})

describe('decodeLine and the registry agree', () => {
  // the decoder's fast envelope check must never accept what registry.validate refuses
  const arbMutated = fc.tuple(arbDraft, fc.nat(3), fc.oneof(
    fc.constant<[string, unknown]>(['seq', -1]), fc.constant<[string, unknown]>(['seq', 1.5]),
    fc.constant<[string, unknown]>(['time', '1']), fc.constant<[string, unknown]>(['type', '']),
    fc.constant<[string, unknown]>(['extra', 1]), fc.constant<[string, unknown]>(['ignorable', false]),
    fc.constant<[string, unknown]>(['surfaceOp', 'prepend']), fc.constant<[string, unknown]>(['surfaceOp', { op: 'replace', start: 0, end: 0 }]),
    fc.constant<[string, unknown]>(['sourceEventSeqs', [0, -1]]), fc.constant<[string, unknown]>(['sourceEventSeqs', [0, 1]]),
    fc.constant<[string, unknown]>(['data', undefined]), fc.constant<[string, unknown]>(['data', { turn: 0 }]),
    fc.constant<[string, unknown]>(['type', 'unknown/type']), fc.constant<[string, unknown]>(['__proto__', 1]),
    fc.constant<[string, unknown]>(['seq', 2 ** 60]),
  ))
  it('decodeLine accepts a record iff registry.validate does (300 runs)', () => {
    fc.assert(
      fc.property(arbMutated, ([d, seq, [k, v]]) => {
        const e: Record<string, unknown> = { seq, time: 1, ...d }
        if (v === undefined) delete e[k]
        else Object.defineProperty(e, k, { value: v, enumerable: true, configurable: true, writable: true })
        const text = JSON.stringify(e)
        const reg = codeOf(() => defaultRegistry.validate(JSON.parse(text)))
        const dec = codeOf(() => decodeLine(text))
        expect(dec).toBe(reg)
      }),
      { numRuns: 300 },
    )
  })
})

describe('header', () => {
  it('encodeHeader refuses an invalid header with INVALID_HEADER naming the field', () => {
    try {
      encodeHeader({ ...HEADER, id: '' })
      expect.unreachable()
    } catch (e) {
      expect(TurnlogError.is(e, 'INVALID_HEADER')).toBe(true)
      expect((e as TurnlogError).field).toBe('id')
    }
  })
  it('decodeHeader reads what encodeHeader wrote, parent and inheritedEventCount included', () => {
    const h = { ...HEADER, checksums: 'crc32' as const, parent: { session: 'p', seq: 4 }, inheritedEventCount: 5 }
    expect(decodeHeader(encodeHeader(h))).toEqual(h)
    expect(decodeHeader(`\uFEFF${encodeHeader(h)}\n`)).toEqual(h)
  })
})
