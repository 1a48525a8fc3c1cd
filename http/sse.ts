/**
 * Server-Sent Events framing (the WHATWG event-stream format). A `data` value is written one
 * `data:` line per line of its text, so a JSON text with a line separator in a string (escaped by
 * JSON.stringify as \n, never raw) stays one event; `id` is the log seq the event carries.
 */
import type { UIMessageChunkAt } from './ui-types.js'

/** One SSE event. `data` must be one or more lines; `\r` and `\n` inside split it into lines. */
export function sseEvent(fields: { id?: string | number; event?: string; data: string }): string {
  let s = ''
  if (fields.event !== undefined) s += `event: ${fields.event}\n`
  if (fields.id !== undefined) s += `id: ${fields.id}\n`
  for (const line of fields.data.split(/\r\n|\r|\n/)) s += `data: ${line}\n`
  return `${s}\n`
}

/** A UI message stream chunk as the AI SDK's transport reads it: `data: JSON`, id = its seq. */
export function uiChunkEvent(c: UIMessageChunkAt): string {
  return sseEvent({ id: c.seq, data: JSON.stringify(c.chunk) })
}

/** The end of a UI message stream (v1). */
export const UI_STREAM_DONE = 'data: [DONE]\n\n'

/** The response headers of a UI message stream (v1). */
export const UI_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
}
