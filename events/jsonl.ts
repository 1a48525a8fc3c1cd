/**
 * The JSONL codec (docs/spec/events.md "JSONL, the interchange format"): the header, the line encoders,
 * `decodeLine` for one line, and `JsonlDecoder`, a push decoder that turns byte chunks into
 * validated events with every defect reported as a coded error naming file, line, seq and field.
 * No I/O here: `replay/read-log.ts` feeds the decoder from files; stores feed it too.
 *
 * The parts live in `events/jsonl/`: `crc.ts` (the record checksum on raw bytes), `header.ts`,
 * `depth.ts` (the nesting guard run before `JSON.parse`), `line.ts` (one record: crc, UTF-8,
 * nesting, JSON, schema, seq, lossless values) and `decoder.ts` (lines from chunks, torn tails).
 *
 * Speed matters (benchmark B1): lines are found with `Buffer#indexOf(10)` on the bytes; a run of
 * complete lines is checked for UTF-8 once (`buffer.isUtf8`) and decoded to one string once, then
 * sliced per line; the CRC is checked on the raw bytes of the line; the envelope and the data are
 * checked by zod's compiled validators (`registry.isValid`: no output copy); the rare checks
 * (lone surrogates, -0, depth) run only on lines a cheap pre-filter flags.
 */
import type { LogEvent } from './envelope.js'
import { TurnlogError } from './errors.js'
import { crcHex } from './jsonl/crc.js'

export { crcHex } from './jsonl/crc.js'
export { JSONL_FORMAT, LogHeader, encodeHeader, decodeHeader } from './jsonl/header.js'
export { MAX_NESTING } from './jsonl/depth.js'
export { decodeLine, RecordDefect, type DecodeContext, type LineDefectCode } from './jsonl/line.js'
export {
  JsonlDecoder, DEFAULT_MAX_LINE_BYTES,
  type JsonlDecoderOptions, type TornReason, type TornTail, type DecodeResult,
} from './jsonl/decoder.js'

export interface EncodeOptions {
  /** Append the `"crc":"xxxxxxxx"` member (the header then says `"checksums":"crc32"`). Default false. */
  checksums?: boolean
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
