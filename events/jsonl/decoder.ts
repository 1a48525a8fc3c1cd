/**
 * The push decoder: byte chunks in, validated events out, every defect a coded error naming file,
 * line, seq and field (decision record "jsonl-codec" (docs/decisions/ in the repository)).
 */
import { isUtf8 } from '../bytes.js'
import type { LogEvent } from '../envelope.js'
import { TurnlogError } from '../errors.js'
import { defaultRegistry, type EventRegistry } from '../registry.js'
import { headerFrom, toBuffer, type LogHeader } from './header.js'
import { LineProcessor, RecordDefect, regionFlags, SUSPECT_ALL } from './line.js'

/** Default maximum size of one line (one record), in bytes: 256 MiB, so a 100 MB event still reads. */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024

export interface JsonlDecoderOptions {
  registry?: EventRegistry
  /** Names the file in errors. */
  file?: string
  /** A line longer than this is `RECORD_TOO_LARGE` (default 256 MiB). */
  maxLineBytes?: number
  /**
   * False: lenient, record-level mode (what `verify` reads with, so that it can *report* bad events
   * instead of refusing the log): the bytes are checked exactly as in the strict mode (crc, UTF-8,
   * JSON, torn tail), but events are not validated, seqs not compared and values not checked for
   * losslessness; each record is handed out as parsed (any JSON value), and a record refused for
   * its nesting depth as a `RecordDefect` in its place. Default true.
   */
  validate?: boolean
  /** Stop after this many events: later bytes are ignored (`stopped` becomes true). */
  maxEvents?: number
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
  /** True when `maxEvents` stopped the decoder: the input was not read to its end (no tail check). */
  stopped?: boolean
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
  readonly #validate: boolean
  readonly #maxEvents: number
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
  #stopped = false
  #seq = 0

  constructor(opts: JsonlDecoderOptions = {}) {
    this.file = opts.file
    this.maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES
    this.#registry = opts.registry ?? defaultRegistry
    this.#validate = opts.validate !== false
    const max = opts.maxEvents
    if (max !== undefined && !(Number.isSafeInteger(max) && max >= 0)) {
      throw new TurnlogError('INVALID_OPTION', 'maxEvents must be a non-negative integer', { field: 'maxEvents' })
    }
    this.#maxEvents = max ?? Infinity
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

  /** Number of lines decoded so far (the header is line 1). */
  get lines(): number {
    return this.#line
  }

  /** True once `maxEvents` events were decoded (and the header read): push more and nothing happens. */
  get stopped(): boolean {
    return this.#stopped
  }

  push(chunk: Uint8Array, out: LogEvent[]): void {
    if (this.#ended) throw new TurnlogError('INVALID_ARGUMENT', 'JsonlDecoder.push after end()')
    if (this.#stopped) return
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
      if (this.#stopped) return
    }
    const last = buf.lastIndexOf(0x0a)
    if (last >= p) {
      this.#region(buf, p, last + 1, base, last + 1 === n, out)
      p = last + 1
      if (this.#stopped) return
    }
    if (p < n) this.#addPart(buf, base, p)
  }

  /** Ends the input. Returns the header and, with `tolerateTornTail`, the torn tail instead of throwing. */
  end(opts: { tolerateTornTail?: boolean } = {}): DecodeResult {
    if (this.#ended) throw new TurnlogError('INVALID_ARGUMENT', 'JsonlDecoder.end called twice')
    this.#ended = true
    if (this.#stopped) return { header: this.#header!, lines: this.#line, bytes: this.#pos, stopped: true }
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
      this.#proc = new LineProcessor(this.#registry, this.file, this.#header.checksums === 'crc32', this.#validate)
      if (this.#maxEvents === 0) this.#stopped = true
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
      if (++this.#seq >= this.#maxEvents) this.#stopped = true
      return
    }
    const c = r.code
    if (!this.#validate && c === 'NOT_LOSSLESS') {
      // lenient mode: a record refused for its nesting is reported in its place, not thrown
      out.push(new RecordDefect(r) as unknown as LogEvent)
      if (++this.#seq >= this.#maxEvents) this.#stopped = true
      return
    }
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
      if (p >= e || this.#stopped) return
    }
    const region = buf.subarray(p, e)
    const ok = isUtf8(region)
    const str = ok ? region.toString('utf8') : undefined
    const suspect = str !== undefined ? regionFlags(str) : SUSPECT_ALL
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
      if (this.#seq >= this.#maxEvents) {
        this.#stopped = true
        return
      }
      b = nb + 1
      q = nq + 1
    }
  }
}
