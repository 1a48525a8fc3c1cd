/**
 * One limit for everything a person or a client sends into a session (issue 38 item 26): a
 * decision's reason and edited arguments, a sent message. Every store (memory, JSONL, PostgreSQL)
 * refuses more with `INPUT_TOO_LARGE` before anything is written; turnlog/http's default
 * `maxBodyBytes` is the same number, so a chat body that passes the handler passes the store.
 */
import { TurnlogError } from './errors.js'

/** The largest input, in bytes of its UTF-8 JSON: 1 MiB. */
export const MAX_INPUT_BYTES = 1 << 20

/**
 * Refuses `text` (a string as sent, or an input's JSON text) longer than `MAX_INPUT_BYTES` bytes
 * with a coded `INPUT_TOO_LARGE` naming `field`. A string's UTF-16 length bounds its UTF-8 size
 * from below and three times from above, so a huge one is refused without encoding it.
 */
export function checkInputSize(text: string, field: string, sessionId?: string): void {
  if (text.length <= MAX_INPUT_BYTES / 3) return
  const bytes = text.length > MAX_INPUT_BYTES ? text.length : Buffer.byteLength(text, 'utf8')
  if (bytes > MAX_INPUT_BYTES) {
    throw new TurnlogError('INPUT_TOO_LARGE', `${field} is larger than ${MAX_INPUT_BYTES} bytes (at least ${bytes}): every input sent into a session is at most 1 MiB`, { ...(sessionId !== undefined ? { sessionId } : {}), field })
  }
}

/**
 * Refuses a message (a sent `UserMessage`) whose JSON is over `MAX_INPUT_BYTES`, as
 * {@link checkInputSize}. A message whose strings are small enough that even fully escaped
 * (6 bytes a UTF-16 unit) it fits is passed without serialising it: the per-send cost stays
 * a walk over its blocks.
 */
export function checkMessageSize(message: { content?: unknown }, field: string, sessionId?: string): void {
  let bound = 256
  const blocks = Array.isArray(message.content) ? message.content : []
  for (const b of blocks) {
    bound += 64
    if (typeof b !== 'object' || b === null) continue
    for (const v of Object.values(b as Record<string, unknown>)) {
      if (typeof v === 'string') bound += v.length * 6
      else if (typeof v === 'object' && v !== null) bound = Infinity // nested data: measured below
    }
  }
  if (bound <= MAX_INPUT_BYTES) return
  checkInputSize(JSON.stringify(message), field, sessionId)
}
