/**
 * The JSONL codec (events.md "JSONL, the interchange format"): the header schema, the line
 * encoders, `decodeLine` for one line, and `JsonlDecoder`, a push decoder that turns byte chunks
 * into validated events with every defect reported as a coded error naming file, line, seq and
 * field. No I/O here: `replay/read-log.ts` feeds the decoder from files; stores may feed it too.
 *
 * Speed matters (benchmark B1: read + check + decode + validate ≤ 2× read + split + JSON.parse):
 * - lines are found with `Buffer#indexOf(10)` on the bytes; a run of complete lines is checked for
 *   UTF-8 once (`buffer.isUtf8`) and decoded to one string once, then sliced per line;
 * - the CRC is checked on the raw bytes of the line (Node's native `zlib.crc32`), never on a
 *   re-serialised object;
 * - the envelope and the data are checked by zod's compiled validators (`registry.isValid`: no
 *   output copy); a refused event goes through `registry.validate`, which builds the error.
 */
import { crc32, isUtf8 } from './bytes.js'
import { z } from 'zod'
import type { LogEvent } from './envelope.js'
import { TurnlogError, type ErrorCode, type ErrorDetails } from './errors.js'
import { defaultRegistry, type EventRegistry } from './registry.js'

// ---------------------------------------------------------------------------------------------
// The header

/** The highest JSONL format version this code reads and writes. */
export const JSONL_FORMAT = 1

export const LogHeader = z.strictObject({
  type: z.literal('session'),
  format: z.literal(JSONL_FORMAT),
  id: z.string().min(1),
  createdAt: z.number().int().nonnegative(),
  checksums: z.literal('crc32').optional(),
  parent: z.strictObject({ session: z.string().min(1), seq: z.number().int().nonnegative() }).optional(),
  inheritedEventCount: z.number().int().nonnegative().optional(),
})
export type LogHeader = z.infer<typeof LogHeader>

/** Default maximum size of one line (one record), in bytes: 256 MiB, so a 100 MB event still reads. */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024

/** The header line (no `\n`). Throws `INVALID_HEADER` naming the field when `h` is not a header. */
export function encodeHeader(h: LogHeader): string {
  const r = LogHeader.safeParse(h)
  if (!r.success) throw zodError('INVALID_HEADER', r.error, '', {})
  return JSON.stringify(h)
}

// ---------------------------------------------------------------------------------------------
// Events

export interface EncodeOptions {
  /** Append the `"crc":"xxxxxxxx"` member (the header then says `"checksums":"crc32"`). Default false. */
  checksums?: boolean
}

/** The CRC-32 (IEEE, Node's `zlib.crc32`) as eight lowercase hex digits. */
export function crcHex(data: string | Uint8Array): string {
  return crc32(data).toString(16).padStart(8, '0')
}

/**
 * One event as one line, without the `\n`: `JSON.stringify(e)`, and with checksums the same record
 * ending in `,"crc":"xxxxxxxx"}`, the CRC of the line up to `,"crc":` followed by `}` — which is
 * exactly `JSON.stringify(e)`. Does not validate (the session validated the event on append);
 * refuses only what cannot be a record (not a non-empty object, or an own `crc` member).
 */
export function encodeEvent(e: LogEvent, opts: EncodeOptions = {}): string {
  const s = JSON.stringify(e)
  if (typeof s !== 'string' || s.length < 3 || s.charCodeAt(0) !== 0x7b || s.charCodeAt(s.length - 1) !== 0x7d) {
    throw new TurnlogError('INVALID_EVENT', 'an event must be a non-empty JSON object', {
      seq: typeof e?.seq === 'number' ? e.seq : undefined,
    })
  }
  if (Object.hasOwn(e, 'crc')) {
    throw new TurnlogError('INVALID_EVENT', 'an event must not carry a crc member (the codec writes it)', {
      seq: e.seq, field: 'crc',
    })
  }
  if (!opts.checksums) return s
  return `${s.slice(0, -1)},"crc":"${crcHex(s)}"}`
}

// ---------------------------------------------------------------------------------------------
// Decoding one line

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

/** Decodes a header line. Throws `MISSING_HEADER`, `FUTURE_FORMAT`, `INVALID_HEADER` or `INVALID_UTF8`. */
export function decodeHeader(input: Uint8Array | string, ctx: { file?: string } = {}): LogHeader {
  let buf = typeof input === 'string' ? Buffer.from(input, 'utf8') : toBuffer(input)
  if (buf.length && buf[buf.length - 1] === 0x0a) buf = buf.subarray(0, buf.length - 1)
  return headerFrom(buf, ctx.file)
}

function toBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength)
}

const BOM = [0xef, 0xbb, 0xbf]

function headerFrom(buf: Buffer, file: string | undefined): LogHeader {
  const where: ErrorDetails = { file, line: 1, offset: 0 }
  let start = 0
  if (buf.length >= 3 && buf[0] === BOM[0] && buf[1] === BOM[1] && buf[2] === BOM[2]) start = 3
  const body = buf.subarray(start)
  if (!isUtf8(body)) {
    throw new TurnlogError('INVALID_UTF8', 'the header line is not valid UTF-8', {
      ...where, info: { byte: firstInvalidUtf8(body) + start },
    })
  }
  let raw: unknown
  try {
    raw = JSON.parse(body.toString('utf8'))
  } catch (err) {
    throw new TurnlogError('MISSING_HEADER', 'line 1 is not a JSON session header', {
      ...where, info: { parseError: (err as Error).message },
    })
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || (raw as { type?: unknown }).type !== 'session') {
    const seq = (raw as { seq?: unknown } | null)?.seq
    throw new TurnlogError(
      'MISSING_HEADER',
      typeof seq === 'number'
        ? `line 1 is an event (seq ${seq}), not the session header`
        : 'line 1 is not a session header ({"type":"session",…})',
      { ...where, field: 'type' },
    )
  }
  const format = (raw as { format?: unknown }).format
  if (typeof format === 'number' && format > JSONL_FORMAT) {
    throw new TurnlogError('FUTURE_FORMAT', `format ${format} is newer than this reader (reads format ${JSONL_FORMAT})`, {
      ...where, field: 'format', info: { format, supported: JSONL_FORMAT },
    })
  }
  const r = LogHeader.safeParse(raw)
  if (!r.success) throw zodError('INVALID_HEADER', r.error, '', where)
  return raw as LogHeader
}

function zodError(code: ErrorCode, err: z.ZodError, prefix: string, where: ErrorDetails): TurnlogError {
  const issue = err.issues[0]!
  const path = [prefix, ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))]
    .filter(Boolean)
    .join('.')
    .replace(/\.\[/g, '[')
  return new TurnlogError(code, issue.message, {
    ...where,
    field: path || undefined,
    info: { issues: err.issues.map((i) => ({ path: i.path.map(String), message: i.message, code: i.code })) },
  })
}

// ---------------------------------------------------------------------------------------------
// The record check, shared by decodeLine and JsonlDecoder

/** `,"crc":"` */
const CRC_PREFIX = [0x2c, 0x22, 0x63, 0x72, 0x63, 0x22, 0x3a, 0x22]
/** Length of `,"crc":"xxxxxxxx"}`. */
const CRC_SUFFIX_LEN = 18

/** Escapes of UTF-16 surrogates in JSON text; only these can make a lone surrogate after parse. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/

/** Errors on a line that a torn write can produce (garbled bytes): mid-file corruption, or a torn tail at the end. */
export type LineDefectCode = 'MALFORMED_LINE' | 'CHECKSUM_MISMATCH' | 'INVALID_UTF8'

class LineProcessor {
  expectedSeq: number | undefined
  constructor(
    readonly registry: EventRegistry,
    readonly file: string | undefined,
    readonly checksums: boolean,
  ) {}

  /**
   * Checks and decodes the record in `buf[s, e)` (no `\n`). `str`, when given, is the decoded
   * text of a run of lines that contains this one at `[q, qe)` (valid UTF-8 already checked).
   * Returns the event, or the error (not thrown: the caller decides whether a garbled line is
   * mid-file corruption or a torn tail). `suspect` means the text may hold surrogate escapes.
   */
  record(
    buf: Buffer, s: number, end0: number, str: string | undefined, q: number, qe: number,
    line: number, offset: number, suspect = true,
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
    // 3. JSON and 4. schema. With a crc, the record is parsed without its crc member (the text up
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
      if (raw !== undefined && !this.registry.isValid(raw)) raw = undefined
    }
    if (raw === undefined) {
      text = str !== undefined ? str.slice(q, qe) : lineBuf!.toString('utf8')
      try {
        raw = JSON.parse(text) as Record<string, unknown>
      } catch (err) {
        return defect('MALFORMED_LINE', 'the line is not valid JSON', this.file, line, offset, seq,
          { parseError: (err as Error).message })
      }
      if (end !== e) delete raw.crc
      // zod's compiled validators decide; a refused event gets its error from `validate`
      if (!this.registry.isValid(raw)) {
        try {
          this.registry.validate(raw, { file: this.file, line, offset })
        } catch (err) {
          return err as TurnlogError
        }
      }
    }
    // 5. seq
    if (seq !== undefined && raw.seq !== seq) {
      return new TurnlogError('BAD_SEQ', `seq ${String(raw.seq)} where seq ${seq} belongs (seqs are contiguous from 0)`, {
        file: this.file, line, offset, seq: raw.seq as number, field: 'seq', expectedSeq: seq, actualSeq: raw.seq as number,
      })
    }
    // 6. lone surrogates written as \uD8xx escapes (invalid UTF-8 bytes are caught above)
    if (suspect && SURROGATE_ESCAPE.test(text)) {
      const path = loneSurrogatePath(raw, '')
      if (path !== null) {
        return new TurnlogError('INVALID_UTF8', 'a string holds a lone surrogate (\\uD800–\\uDFFF escape)', {
          file: this.file, line, offset, seq: raw.seq as number, field: path,
        })
      }
    }
    return raw as unknown as LogEvent
  }
}

function defect(
  code: LineDefectCode, message: string, file: string | undefined, line: number, offset: number,
  seq: number | undefined, info?: Record<string, unknown>,
): TurnlogError {
  return new TurnlogError(code, message, {
    file, line, offset, seq, expectedSeq: seq, field: code === 'CHECKSUM_MISMATCH' ? 'crc' : undefined, info,
  })
}

// CRC-32 (IEEE, reflected, the same as zlib.crc32), slicing-by-8. For the short lines of a log a
// JS loop beats a native call per line (measured: 0.13 µs vs 0.21 µs per 200-byte line);
// long lines go to zlib's SIMD code.
const CRC_T = new Int32Array(8 * 256)
for (let n = 0; n < 256; n++) {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  CRC_T[n] = c
}
for (let n = 0; n < 256; n++) {
  let c = CRC_T[n]!
  for (let t = 1; t < 8; t++) {
    c = CRC_T[c & 0xff]! ^ (c >>> 8)
    CRC_T[t * 256 + n] = c
  }
}
const NATIVE_CRC_FROM = 4096

/** CRC-32 of `b[s, e)` followed by the byte `}`: the checksum of a record. */
function crcWithBrace(b: Buffer, s: number, e: number): number {
  let c: number
  if (e - s >= NATIVE_CRC_FROM) {
    c = ~crc32(b.subarray(s, e))
  } else {
    const T = CRC_T
    c = -1
    let i = s
    for (; i + 8 <= e; i += 8) {
      const a = (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) ^ c
      c = T[1792 + (a & 0xff)]! ^ T[1536 + ((a >>> 8) & 0xff)]! ^ T[1280 + ((a >>> 16) & 0xff)]! ^
        T[1024 + (a >>> 24)]! ^ T[768 + b[i + 4]!]! ^ T[512 + b[i + 5]!]! ^ T[256 + b[i + 6]!]! ^ T[b[i + 7]!]!
    }
    for (; i < e; i++) c = T[(c ^ b[i]!) & 0xff]! ^ (c >>> 8)
  }
  c = CRC_T[(c ^ 0x7d) & 0xff]! ^ (c >>> 8)
  return ~c >>> 0
}

function hasCrcSuffix(b: Buffer, s: number, e: number): boolean {
  if (e - s < CRC_SUFFIX_LEN + 2) return false
  if (b[e - 1] !== 0x7d || b[e - 2] !== 0x22) return false
  const p = e - CRC_SUFFIX_LEN
  for (let i = 0; i < 8; i++) if (b[p + i] !== CRC_PREFIX[i]) return false
  return true
}

/** Eight lowercase hex digits at `b[p..p+8)` as an unsigned number, or -1. */
function parseHex8(b: Buffer, p: number): number {
  let v = 0
  for (let i = 0; i < 8; i++) {
    const c = b[p + i]!
    let d: number
    if (c >= 0x30 && c <= 0x39) d = c - 0x30
    else if (c >= 0x61 && c <= 0x66) d = c - 0x57
    else return -1
    v = v * 16 + d
  }
  return v
}

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0')
}

/** Byte index of the first invalid UTF-8 sequence (for error details). */
function firstInvalidUtf8(b: Uint8Array): number {
  // a linear scan, on the error path only
  const dec = new TextDecoder('utf-8', { fatal: true })
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!
    if (c < 0x80) continue
    const n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1
    try {
      dec.decode(b.subarray(i, i + n))
      i += n - 1
    } catch {
      return i
    }
  }
  return -1
}

/** Path of the first string or key with a lone surrogate (`data.message.content[0].text`), or null. */
function loneSurrogatePath(v: unknown, path: string): string | null {
  if (typeof v === 'string') return v.isWellFormed() ? null : path || '(record)'
  if (typeof v !== 'object' || v === null) return null
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const r = loneSurrogatePath(v[i], `${path}[${i}]`)
      if (r !== null) return r
    }
    return null
  }
  for (const k of Object.keys(v)) {
    const p = path ? `${path}.${k}` : k
    if (!k.isWellFormed()) return p
    const r = loneSurrogatePath((v as Record<string, unknown>)[k], p)
    if (r !== null) return r
  }
  return null
}

// ---------------------------------------------------------------------------------------------
// The push decoder

export interface JsonlDecoderOptions {
  registry?: EventRegistry
  /** Names the file in errors. */
  file?: string
  /** A line longer than this is `RECORD_TOO_LARGE` (default 256 MiB). */
  maxLineBytes?: number
}

/** Why the last line is a torn tail. */
export type TornReason =
  /** No trailing `\n`. If the bytes still form a complete valid record, `record` holds it. */
  | 'unterminated'
  /** Terminated, but garbled: not JSON, not UTF-8, or its crc does not match. */
  | 'garbled'

/** The torn tail of a log: what `repair` quarantines (or completes). */
export interface TornTail {
  /** 1-based line number of the torn line. */
  line: number
  /** Byte offset where the torn line starts: every byte before it is complete, checked records. */
  offset: number
  /** The torn bytes, from `offset` to the end of the input. */
  bytes: Uint8Array
  reason: TornReason
  /** The `TORN_TAIL` error that a strict read throws (its `cause` is the line's own defect, if any). */
  error: TurnlogError
  /** The record the unterminated line holds, when it decodes in full (its crc matches, it validates,
   * its seq is next): only the `\n` is missing. Not included in `events`. */
  record?: LogEvent
  /** The header, when the torn line is line 1 and decodes in full. */
  header?: LogHeader
}

export interface DecodeResult {
  header: LogHeader
  /** Only with `tolerateTornTail`; otherwise a torn tail throws `TORN_TAIL`. */
  torn?: TornTail
  /** Number of lines seen (header, records, and the torn line if any). */
  lines: number
  /** Total bytes pushed. */
  bytes: number
}

interface Deferred {
  error: TurnlogError
  line: number
  offset: number
  bytes: Buffer
}

/**
 * Push decoder: `push(chunk, out)` appends the events of every complete line to `out`;
 * `end()` checks the tail. Holds at most one partial line between pushes. Throws a coded error at
 * the first defect; a garbled terminated line is reported when the next byte arrives
 * (`MALFORMED_LINE`, `CHECKSUM_MISMATCH`, `INVALID_UTF8`: corruption mid-file) or at `end()`
 * (`TORN_TAIL`, repairable). Single use.
 */
export class JsonlDecoder {
  readonly file: string | undefined
  readonly maxLineBytes: number
  readonly #registry: EventRegistry
  #header: LogHeader | undefined
  #proc: LineProcessor | undefined
  #line = 0
  /** Absolute offset of the first byte of the next chunk. */
  #pos = 0
  /** The pending partial line (no `\n` yet), as pieces. */
  #parts: Buffer[] = []
  #partLen = 0
  #deferred: Deferred | undefined
  #ended = false
  #seq = 0

  constructor(opts: JsonlDecoderOptions = {}) {
    this.file = opts.file
    this.maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES
    this.#registry = opts.registry ?? defaultRegistry
  }

  get header(): LogHeader | undefined {
    return this.#header
  }

  /** Bytes pushed so far. */
  get bytes(): number {
    return this.#pos
  }

  /** Number of events decoded so far (the next expected seq). */
  get eventCount(): number {
    return this.#seq
  }

  push(chunk: Uint8Array, out: LogEvent[]): void {
    if (this.#ended) throw new TurnlogError('INVALID_ARGUMENT', 'JsonlDecoder.push after end()')
    const buf = toBuffer(chunk)
    const n = buf.length
    if (n === 0) return
    if (this.#deferred) this.#throwDeferredMidFile()
    const base = this.#pos
    this.#pos += n
    let p = 0
    if (this.#partLen > 0) {
      const nl = buf.indexOf(0x0a)
      if (nl < 0) {
        this.#addPart(buf, base, 0)
        return
      }
      this.#checkSize(this.#partLen + nl, base - this.#partLen)
      this.#parts.push(buf.subarray(0, nl))
      const line = Buffer.concat(this.#parts, this.#partLen + nl)
      const off = base - this.#partLen
      this.#parts = []
      this.#partLen = 0
      this.#one(line, 0, line.length, off, nl + 1 === n, out)
      p = nl + 1
    }
    const last = buf.lastIndexOf(0x0a)
    if (last >= p) {
      this.#region(buf, p, last + 1, base, last + 1 === n, out)
      p = last + 1
    }
    if (p < n) this.#addPart(buf, base, p)
  }

  /** Ends the input. Returns the header and, with `tolerateTornTail`, the torn tail instead of throwing. */
  end(opts: { tolerateTornTail?: boolean } = {}): DecodeResult {
    if (this.#ended) throw new TurnlogError('INVALID_ARGUMENT', 'JsonlDecoder.end called twice')
    this.#ended = true
    let torn: TornTail | undefined
    if (this.#deferred) {
      const d = this.#deferred
      const error = new TurnlogError('TORN_TAIL', `the last line is garbled (${d.error.code}): a torn write`, {
        file: this.file, line: d.line, offset: d.offset, seq: this.#seq, expectedSeq: this.#seq, repairable: true,
        info: { reason: 'garbled', defect: d.error.code, bytes: d.bytes.length },
      }, { cause: d.error })
      torn = { line: d.line, offset: d.offset, bytes: d.bytes, reason: 'garbled', error }
    } else if (this.#partLen > 0) {
      torn = this.#unterminated()
    } else if (this.#pos === 0) {
      throw new TurnlogError('EMPTY_LOG', 'the log is empty (no header)', { file: this.file, offset: 0 })
    }
    if (torn) {
      if (!opts.tolerateTornTail || this.#header === undefined) throw torn.error
      return { header: this.#header, torn, lines: this.#line, bytes: this.#pos }
    }
    if (this.#header === undefined) {
      // unreachable: some bytes were pushed, every terminated line 1 sets the header or throws
      throw new TurnlogError('MISSING_HEADER', 'no header line', { file: this.file, line: 1 })
    }
    return { header: this.#header, lines: this.#line, bytes: this.#pos }
  }

  #unterminated(): TornTail {
    const bytes = Buffer.concat(this.#parts, this.#partLen)
    const offset = this.#pos - this.#partLen
    const line = ++this.#line
    this.#parts = []
    this.#partLen = 0
    let record: LogEvent | undefined
    let header: LogHeader | undefined
    let cause: TurnlogError | undefined
    if (this.#header === undefined) {
      try {
        header = headerFrom(bytes, this.file)
        this.#header = header
      } catch (err) {
        cause = err as TurnlogError
      }
    } else {
      this.#proc!.expectedSeq = this.#seq
      const r = this.#proc!.record(bytes, 0, bytes.length, undefined, 0, 0, line, offset)
      if (r instanceof TurnlogError) cause = r
      else record = r
    }
    const complete = record !== undefined || header !== undefined
    const what = line === 1 ? 'header' : 'record'
    const error = new TurnlogError(
      'TORN_TAIL',
      complete
        ? `the last ${what} has no trailing newline (its bytes are complete)`
        : `the last line is incomplete (no trailing newline${cause ? `; ${cause.code}` : ''})`,
      {
        file: this.file, line, offset, seq: line === 1 ? undefined : this.#seq,
        expectedSeq: line === 1 ? undefined : this.#seq,
        // a torn header leaves no complete record and no session id: nothing to repair from
        repairable: line === 1 ? complete : true,
        info: { reason: 'unterminated', complete, bytes: bytes.length, ...(cause ? { defect: cause.code } : {}) },
      },
      cause ? { cause } : undefined,
    )
    const t: TornTail = { line, offset, bytes, reason: 'unterminated', error }
    if (record) t.record = record
    if (header) t.header = header
    return t
  }

  #addPart(buf: Buffer, base: number, p: number): void {
    const piece = buf.subarray(p)
    this.#checkSize(this.#partLen + piece.length, base + p - this.#partLen)
    this.#parts.push(piece)
    this.#partLen += piece.length
  }

  /** Throws `RECORD_TOO_LARGE` when the line starting at `offset` (the next line) is too long. */
  #checkSize(len: number, offset: number, line = this.#line + 1): void {
    if (len > this.maxLineBytes) {
      throw new TurnlogError('RECORD_TOO_LARGE', `line ${line} is longer than ${this.maxLineBytes} bytes`, {
        file: this.file, line, offset,
        seq: this.#header ? this.#seq : undefined,
        info: { maxLineBytes: this.maxLineBytes, atLeast: len },
      })
    }
  }

  #throwDeferredMidFile(): never {
    throw this.#deferred!.error
  }

  /** One complete line `buf[s, e)` (its `\n` at e) at absolute offset `off`. */
  #one(buf: Buffer, s: number, e: number, off: number, lastSoFar: boolean, out: LogEvent[]): void {
    const line = ++this.#line
    this.#checkSize(e - s, off, line)
    if (this.#header === undefined) {
      this.#header = headerFrom(buf.subarray(s, e), this.file)
      this.#proc = new LineProcessor(this.#registry, this.file, this.#header.checksums === 'crc32')
      return
    }
    const proc = this.#proc!
    proc.expectedSeq = this.#seq
    const r = proc.record(buf, s, e, undefined, 0, 0, line, off)
    this.#accept(r, buf, s, e, off, line, lastSoFar, out)
  }

  #accept(
    r: LogEvent | TurnlogError, buf: Buffer, s: number, e: number, off: number, line: number,
    lastSoFar: boolean, out: LogEvent[],
  ): void {
    if (!(r instanceof TurnlogError)) {
      out.push(r)
      this.#seq++
      return
    }
    const c = r.code
    // byte-level defects only (a lone-surrogate INVALID_UTF8 names a field: the record parsed)
    const garbled = c === 'MALFORMED_LINE' || c === 'CHECKSUM_MISMATCH' || (c === 'INVALID_UTF8' && r.field === undefined)
    if (lastSoFar && garbled) {
      // garbled and nothing follows (yet): a torn tail if the input ends here
      this.#deferred = { error: r, line, offset: off, bytes: Buffer.from(buf.subarray(s, e + 1)) }
      return
    }
    throw r
  }

  /** Complete lines in `buf[s, e)` (`e` just after a `\n`), `buf[s]` at absolute offset `base + s`. */
  #region(buf: Buffer, s: number, e: number, base: number, endsChunk: boolean, out: LogEvent[]): void {
    let p = s
    if (this.#header === undefined) {
      const nl = buf.indexOf(0x0a, p)
      this.#one(buf, p, nl, base + p, endsChunk && nl + 1 === e, out)
      p = nl + 1
      if (p >= e) return
    }
    const region = buf.subarray(p, e)
    const ok = isUtf8(region)
    const str = ok ? region.toString('utf8') : undefined
    const suspect = str !== undefined && SURROGATE_ESCAPE.test(str)
    const proc = this.#proc!
    const max = this.maxLineBytes
    let b = 0
    let q = 0
    const len = region.length
    while (b < len) {
      const nb = region.indexOf(0x0a, b)
      let nq = 0
      if (str !== undefined) nq = str.indexOf('\n', q)
      const line = ++this.#line
      const off = base + p + b
      if (nb - b > max) this.#checkSize(nb - b, off, line)
      proc.expectedSeq = this.#seq
      const r = proc.record(region, b, nb, str, q, nq, line, off, suspect)
      if (r instanceof TurnlogError) {
        this.#accept(r, region, b, nb, off, line, endsChunk && nb + 1 === len, out)
      } else {
        out.push(r)
        this.#seq++
      }
      b = nb + 1
      q = nq + 1
    }
  }
}
