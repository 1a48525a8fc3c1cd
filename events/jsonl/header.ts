/** The JSONL header line (docs/spec/events.md "JSONL"): its schema, encoder and decoder. */
import { isUtf8 } from '../bytes.js'
import { z } from 'zod'
import { TurnlogError, type ErrorCode, type ErrorDetails } from '../errors.js'
import { MAX_NESTING, nestingOverflow } from './depth.js'

/** The highest JSONL format version this code reads and writes. */
export const JSONL_FORMAT = 1

export const LogHeader = z.strictObject({
  type: z.literal('session'),
  format: z.literal(JSONL_FORMAT),
  id: z.string().min(1),
  createdAt: z.number().int().nonnegative(),
  checksums: z.literal('crc32').optional(),
  // a fork's parent: {session, seq}; a child session's (docs/spec/lifecycle.md §10, L19) also names the call
  parent: z.strictObject({ session: z.string().min(1), seq: z.number().int().nonnegative(), callId: z.string().min(1).optional() }).optional(),
  inheritedEventCount: z.number().int().nonnegative().optional(),
  /**
   * An imported log (docs/spec/events.md "JSONL", `turnlog import`): the format it came from and
   * what that source could not say. `times: "order"`: event times are derived from the order of
   * the source, not measured; `chunks: "whole-blocks"`: each block streamed as one whole-`block`
   * chunk, then `finish`, with no deltas; `usage: "absent"`: no token counts are logged (none are made up).
   */
  imported: z.strictObject({
    from: z.enum(['ai-sdk-ui', 'openai-chat', 'openai-responses', 'claude-code']),
    file: z.string().optional(),
    times: z.enum(['order', 'source']),
    chunks: z.literal('whole-blocks'),
    usage: z.enum(['absent', 'source']),
  }).optional(),
})
export type LogHeader = z.infer<typeof LogHeader>

/** The header line (no `\n`). Throws `INVALID_HEADER` naming the field when `h` is not a header. */
export function encodeHeader(h: LogHeader): string {
  const r = LogHeader.safeParse(h)
  if (!r.success) throw zodError('INVALID_HEADER', r.error, '', {})
  return JSON.stringify(h)
}

/** Decodes a header line. Throws `MISSING_HEADER`, `FUTURE_FORMAT`, `INVALID_HEADER` or `INVALID_UTF8`. */
export function decodeHeader(input: Uint8Array | string, ctx: { file?: string } = {}): LogHeader {
  let buf = typeof input === 'string' ? Buffer.from(input, 'utf8') : toBuffer(input)
  if (buf.length && buf[buf.length - 1] === 0x0a) buf = buf.subarray(0, buf.length - 1)
  return headerFrom(buf, ctx.file)
}

export function toBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength)
}

const BOM = [0xef, 0xbb, 0xbf]

/** The header from line 1's bytes (no `\n`; a `\r` before it and a UTF-8 BOM are skipped). */
export function headerFrom(buf: Buffer, file: string | undefined): LogHeader {
  const where: ErrorDetails = { file, line: 1, offset: 0 }
  let start = 0
  if (buf.length >= 3 && buf[0] === BOM[0] && buf[1] === BOM[1] && buf[2] === BOM[2]) start = 3
  let end = buf.length
  // a CRLF log: the \r is not the header's (the same rule as for records)
  if (end > start && buf[end - 1] === 0x0d) end--
  const body = buf.subarray(start, end)
  if (!isUtf8(body)) {
    throw new TurnlogError('INVALID_UTF8', 'the header line is not valid UTF-8', {
      ...where, info: { byte: firstInvalidUtf8(body) + start },
    })
  }
  const deep = nestingOverflow(body, 0, body.length)
  if (deep) {
    throw new TurnlogError('INVALID_HEADER', `the header nests deeper than ${MAX_NESTING} levels`, {
      ...where, field: deep.path || undefined, info: { depth: deep.depth, maxDepth: MAX_NESTING },
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

export function zodError(code: ErrorCode, err: z.ZodError, prefix: string, where: ErrorDetails): TurnlogError {
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

/** Byte index of the first invalid UTF-8 sequence (for error details). */
export function firstInvalidUtf8(b: Uint8Array): number {
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
