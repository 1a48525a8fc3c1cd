/**
 * One record line: crc, UTF-8, nesting, JSON, schema, seq, lossless values. Shared by `decodeLine`
 * and `JsonlDecoder` (and so by every reader: `readLog`, the stores, the CLI's verify), so every
 * reader gives the same answer for the same bytes.
 */
import { isUtf8 } from '../bytes.js'
import type { LogEvent } from '../envelope.js'
import { TurnlogError } from '../errors.js'
import { findLossy } from '../lossless.js'
import { defaultRegistry, type EventRegistry } from '../registry.js'
import { CRC_SUFFIX_LEN, crcWithBrace, hasCrcSuffix, hex8, parseHex8 } from './crc.js'
import { MAX_NESTING, nestingOverflow } from './depth.js'
import { firstInvalidUtf8, toBuffer } from './header.js'

/** Escapes of UTF-16 surrogates in JSON text; only these can make a lone surrogate after parse. */
export const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/

/**
 * JSON number tokens that may not survive a round trip: `-0` in any spelling (`-0.0`, `-0e5`),
 * exponents of three digits or more (`1e400` is Infinity, `-1e-400` is -0), and 309+ digit runs
 * (Infinity). A number token follows `:`, `,` or `[` (whitespace allowed), which keeps dates like
 * `2026-05-01` inside strings from matching the `-0` case. A pre-filter only: a line that matches
 * is walked for the real values.
 */
export const NUMBER_SUSPECT = /[:,[]\s*-0|\d[eE][+-]?\d{3}|\d{309}/

const NEG_ZERO = /[:,[]\s*-0/
const EXPONENT_3 = /[eE][+-]?\d{3}/
const DIGIT_EXPONENT_3 = /\d[eE][+-]?\d{3}/
const DIGITS_309 = /\d{309}/

/**
 * `NUMBER_SUSPECT.test(text)`, each alternative behind a cheaper test it implies (a `-0` substring;
 * an exponent without the digit before it, whose leading `e` the regex engine searches for
 * quickly; a length of 309), so the common line is rejected without the alternation's walk:
 * 5-6x cheaper per line of an agent's log (B1 spent a fifth of its replay time in
 * `NUMBER_SUSPECT`: every record's crc, a hex string like `"0254e134"`, made every region suspect).
 */
export function numberSuspect(text: string): boolean {
  return (text.includes('-0') && NEG_ZERO.test(text)) ||
    (EXPONENT_3.test(text) && DIGIT_EXPONENT_3.test(text)) ||
    (text.length >= 309 && DIGITS_309.test(text))
}

/** `SURROGATE_ESCAPE.test(text)` behind the substring test it implies. */
export function surrogateSuspect(text: string): boolean {
  return text.includes('\\u') && SURROGATE_ESCAPE.test(text)
}

/** Errors on a line that a torn write can produce (garbled bytes): mid-file corruption, or a torn tail at the end. */
export type LineDefectCode = 'MALFORMED_LINE' | 'CHECKSUM_MISMATCH' | 'INVALID_UTF8'

/** What `LineProcessor` hands back for a record in lenient mode: the record's content defect. */
export class RecordDefect {
  constructor(readonly error: TurnlogError) {}
}

export class LineProcessor {
  expectedSeq: number | undefined
  constructor(
    readonly registry: EventRegistry,
    readonly file: string | undefined,
    readonly checksums: boolean,
    /** False: lenient (record-level) mode, see `JsonlDecoderOptions.validate`. */
    readonly validate = true,
  ) {}

  /**
   * Checks and decodes the record in `buf[s, e)` (no `\n`). `str`, when given, is the decoded
   * text of a run of lines that contains this one at `[q, qe)` (valid UTF-8 already checked).
   * Returns the event, or the error (not thrown: the caller decides whether a garbled line is
   * mid-file corruption or a torn tail). `suspect` means the text may hold surrogate escapes or
   * suspicious numbers (see `regionFlags`).
   */
  record(
    buf: Buffer, s: number, end0: number, str: string | undefined, q: number, qe: number,
    line: number, offset: number, suspect = SUSPECT_ALL,
  ): LogEvent | TurnlogError {
    let e = end0
    const seq = this.expectedSeq
    // a \r\n line ending (a log that went through a CRLF conversion): the \r is not the record's
    if (e > s && buf[e - 1] === 0x0d) e--
    // 1. the checksum, from the raw bytes
    let end = e
    if (hasCrcSuffix(buf, s, e)) {
      const want = parseHex8(buf, e - 10)
      if (want < 0) {
        return defect('CHECKSUM_MISMATCH', 'the crc is not eight lowercase hex digits', this.file, line, offset, seq)
      }
      const got = crcWithBrace(buf, s, e - CRC_SUFFIX_LEN)
      if (got !== want) {
        return defect('CHECKSUM_MISMATCH', `crc mismatch: the record says ${hex8(want)}, its bytes give ${hex8(got)}`,
          this.file, line, offset, seq, { expected: hex8(want), actual: hex8(got) })
      }
      end = e - CRC_SUFFIX_LEN
    } else if (this.checksums) {
      return defect('CHECKSUM_MISMATCH', 'the header says "checksums":"crc32" but the record has no crc member',
        this.file, line, offset, seq)
    }
    // 2. UTF-8
    let lineBuf: Buffer | undefined
    if (str === undefined) {
      lineBuf = buf.subarray(s, e)
      if (!isUtf8(lineBuf)) {
        return defect('INVALID_UTF8', 'the line is not valid UTF-8', this.file, line, offset, seq,
          { byte: firstInvalidUtf8(lineBuf) })
      }
    }
    // 3. nesting, before the parser sees it (events/jsonl/depth.ts)
    const deep = nestingOverflow(buf, s, e)
    if (deep) {
      return new TurnlogError('NOT_LOSSLESS', `the record nests deeper than ${MAX_NESTING} levels`, {
        file: this.file, line, offset, seq, expectedSeq: seq, field: deep.path || undefined,
        info: { depth: deep.depth, maxDepth: MAX_NESTING, byte: deep.at },
      })
    }
    // 4. JSON and 5. schema. With a crc, the record is parsed without its crc member (the text up
    // to `,"crc":` plus `}`, the very bytes the crc covers): `delete event.crc` on every event
    // made the envelope check's key loop (for-in) several times slower on the result. Anything
    // that does not come out valid this way is decoded again from the whole line below, so the
    // verdict and the error are those of the whole line.
    let raw: Record<string, unknown> | undefined
    let text = ''
    if (end !== e) {
      text = (str !== undefined ? str.slice(q, qe - (end0 - e) - CRC_SUFFIX_LEN) : buf.toString('utf8', s, end)) + '}'
      try {
        raw = JSON.parse(text)
      } catch {
        raw = undefined
      }
      // a duplicate crc member: the whole line's parse would keep the last one and delete it
      if (raw !== undefined && 'crc' in raw) delete raw.crc
      if (raw !== undefined && !this.validate) return raw as unknown as LogEvent
      if (raw !== undefined && !this.registry.isValid(raw)) raw = undefined
    }
    if (raw === undefined) {
      text = str !== undefined ? str.slice(q, qe - (end0 - e)) : lineBuf !== undefined ? lineBuf.toString('utf8') : buf.toString('utf8', s, e)
      try {
        raw = JSON.parse(text) as Record<string, unknown>
      } catch (err) {
        return defect('MALFORMED_LINE', 'the line is not valid JSON', this.file, line, offset, seq,
          { parseError: (err as Error).message })
      }
      if (end !== e && typeof raw === 'object' && raw !== null) delete raw.crc
      if (!this.validate) return raw as unknown as LogEvent
      // zod's compiled validators decide; a refused event gets its error from `validate`
      if (!this.registry.isValid(raw)) {
        try {
          this.registry.validate(raw, { file: this.file, line, offset })
        } catch (err) {
          return err as TurnlogError
        }
      }
    }
    // 6. seq
    if (seq !== undefined && raw.seq !== seq) {
      // (lenient mode returned above: there, seq only names the place)
      return new TurnlogError('BAD_SEQ', `seq ${String(raw.seq)} where seq ${seq} belongs (seqs are contiguous from 0)`, {
        file: this.file, line, offset, seq: raw.seq as number, field: 'seq', expectedSeq: seq, actualSeq: raw.seq as number,
      })
    }
    // 7. values that do not round-trip: lone surrogates written as \uD8xx escapes (invalid UTF-8
    // bytes are caught above), -0, numbers that overflow to Infinity. Pre-filtered on the text.
    if (((suspect & SUSPECT_SURROGATE) !== 0 && surrogateSuspect(text)) ||
      ((suspect & SUSPECT_NUMBER) !== 0 && numberSuspect(text))) {
      const lossy = findLossy(raw, '', { depth: 1 })
      if (lossy !== null) {
        const surrogate = lossy.why === 'string has a lone surrogate'
        return new TurnlogError(
          surrogate ? 'INVALID_UTF8' : 'NOT_LOSSLESS',
          surrogate ? 'a string holds a lone surrogate (\\uD800–\\uDFFF escape)' : `${lossy.why}: the value does not survive JSON`,
          { file: this.file, line, offset, seq: raw.seq as number, field: lossy.path || '(record)' },
        )
      }
    }
    return raw as unknown as LogEvent
  }
}

export const SUSPECT_SURROGATE = 1
export const SUSPECT_NUMBER = 2
export const SUSPECT_ALL = 3

/** Which line checks of step 7 a run of lines may need (one regex test each over the whole run). */
export function regionFlags(str: string): number {
  return (surrogateSuspect(str) ? SUSPECT_SURROGATE : 0) | (numberSuspect(str) ? SUSPECT_NUMBER : 0)
}

export function defect(
  code: LineDefectCode, message: string, file: string | undefined, line: number, offset: number,
  seq: number | undefined, info?: Record<string, unknown>,
): TurnlogError {
  return new TurnlogError(code, message, {
    file, line, offset, seq, expectedSeq: seq, field: code === 'CHECKSUM_MISMATCH' ? 'crc' : undefined, info,
  })
}

export interface DecodeContext {
  registry?: EventRegistry
  /** The header said `"checksums":"crc32"`: a record without a crc is `CHECKSUM_MISMATCH`. */
  checksums?: boolean
  /** Names the place in errors. */
  file?: string
  line?: number
  /** Byte offset of the line's start in the file. */
  offset?: number
  /** When given, a record with another seq is `BAD_SEQ`. */
  expectedSeq?: number
}

/**
 * Decodes one record line (bytes or string; a trailing `\n` is allowed): checks the crc on the raw
 * bytes when the record has one (always when `ctx.checksums`), checks UTF-8, parses, strips `crc`,
 * validates with the registry, checks the seq. Throws coded errors naming file, line, seq, field.
 */
export function decodeLine(input: Uint8Array | string, ctx: DecodeContext = {}): LogEvent {
  let buf = typeof input === 'string' ? Buffer.from(input, 'utf8') : toBuffer(input)
  if (buf.length && buf[buf.length - 1] === 0x0a) buf = buf.subarray(0, buf.length - 1)
  if (typeof input === 'string' && !input.isWellFormed()) {
    throw new TurnlogError('INVALID_UTF8', 'the line has a lone surrogate', {
      file: ctx.file, line: ctx.line, offset: ctx.offset, seq: ctx.expectedSeq,
    })
  }
  const p = new LineProcessor(ctx.registry ?? defaultRegistry, ctx.file, ctx.checksums === true)
  p.expectedSeq = ctx.expectedSeq
  const r = p.record(buf, 0, buf.length, undefined, 0, 0, ctx.line ?? 0, ctx.offset ?? 0)
  if (r instanceof TurnlogError) throw r
  return r
}
