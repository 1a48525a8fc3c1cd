/** Helpers for the JSONL tests: schema-valid event arbitraries with arbitrary unicode, log bytes. */
import fc from 'fast-check'
import { encodeEvent, encodeHeader, type LogEvent, type LogHeader } from '../../events/index.js'
import { findLossy } from '../../events/lossless.js'

export const HEADER: LogHeader = { type: 'session', format: 1, id: 'test-session', createdAt: 1_764_450_000_000 }

/** Text that is well-formed UTF-16 (anything a store can hold), biased to JSON's awkward characters. */
export const arbText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\r', '\u2028', '\u0000', '\u007f', 'é', '😀', '{', '}', ',', 'crc', ':'), maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
).filter((s) => s.isWellFormed())

const id = fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 8 })
const pos = fc.integer({ min: 1, max: 1000 })

/** One event without seq/time, of a core type or an ignorable extension type. */
export const arbDraft: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ id, text: fc.array(arbText, { maxLength: 3 }) }).map(({ id, text }) => ({
    type: 'user/message',
    data: { message: { id, role: 'user', content: text.map((t) => ({ type: 'text', text: t })), source: { kind: 'user' } } },
    surfaceOp: 'append',
  })),
  fc.record({ turn: pos, step: pos, index: fc.nat(5), text: arbText }).map(({ turn, step, index, text }) => ({
    type: 'assistant/chunk', data: { turn, step, chunk: { type: 'text-delta', index, text } },
  })),
  fc.record({ turn: pos, step: pos, callId: id, name: arbText, args: arbText }).map((r) => ({
    type: 'tool/call', data: { turn: r.turn, step: r.step, callId: r.callId, name: r.name, arguments: r.args },
  })),
  pos.map((turn) => ({ type: 'turn/start', data: { turn } })),
  fc.constant({ type: 'session/end-seed', data: {} }),
  fc.record({ t: arbText.filter((s) => s.length > 0), data: fc.jsonValue({ maxDepth: 3 }) })
    .filter(({ data }) => findLossy(data) === null)
    .map(({ t, data }) => ({ type: `ext/${t}`, data, ignorable: true })),
)

export const arbEvents: fc.Arbitrary<LogEvent[]> = fc
  .array(fc.tuple(arbDraft, fc.nat(1_000_000)), { maxLength: 12 })
  .map((xs) => xs.map(([d, dt], seq) => ({ seq, time: 1_764_450_000_000 + dt, ...d }) as unknown as LogEvent))

/** The bytes of a log (every line `\n`-terminated). */
export function logBytes(events: readonly LogEvent[], opts: { checksums?: boolean; header?: LogHeader } = {}): Buffer {
  const h = { ...(opts.header ?? HEADER), ...(opts.checksums ? { checksums: 'crc32' as const } : {}) }
  return Buffer.from(logLines(events, opts.checksums ?? false, h).map((l) => `${l}\n`).join(''), 'utf8')
}

export function logLines(events: readonly LogEvent[], checksums: boolean, header: LogHeader = HEADER): string[] {
  const h = { ...header, ...(checksums ? { checksums: 'crc32' as const } : {}) }
  return [encodeHeader(h), ...events.map((e) => encodeEvent(e, { checksums }))]
}

/** A small valid log: the header and three events (seq 0..2). */
export function smallEvents(): LogEvent[] {
  return [
    { seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } },
    {
      seq: 1, time: 2, type: 'user/message', surfaceOp: 'append',
      data: { message: { id: 'm1', role: 'user', content: [{ type: 'text', text: 'héllo 😀' }], source: { kind: 'user' } } },
    },
    { seq: 2, time: 3, type: 'step/start', data: { turn: 1, step: 1 } },
  ] as unknown as LogEvent[]
}

/** Byte offset where line `n` (1-based) starts. */
export function lineOffset(bytes: Uint8Array, n: number): number {
  let off = 0
  for (let i = 1; i < n; i++) off = bytes.indexOf(0x0a, off) + 1
  return off
}
