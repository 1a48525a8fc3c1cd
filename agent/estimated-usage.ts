/**
 * The usage of a request cut off mid-stream before the provider reported it (docs/spec/lifecycle.md §10,
 * docs/spec/events.md "Usage and failures"): the provider was sent the whole request and streamed
 * what was logged, so both cost tokens. Estimated at four characters a token (the usual rule of
 * thumb for English text and JSON), from the request as sent and the streamed deltas, and marked
 * `estimated: true` so nobody mistakes it for the provider's count.
 */
import type { StreamChunk, Usage } from '../events/index.js'
import type { ModelRequest } from '../models/index.js'

const CHARS_PER_TOKEN = 4

/** Counts the characters of the deltas streamed so far. */
export class StreamedChars {
  output = 0
  reasoning = 0
  /** A usage chunk came (the provider's own count is the record). */
  usage = false
  /** A finish chunk came (the stream ended in-band: nothing may follow it, L9). */
  finish = false

  add(chunk: StreamChunk): void {
    switch (chunk.type) {
      case 'text-delta': this.output += chunk.text.length; return
      case 'reasoning-delta': this.reasoning += chunk.text.length; return
      case 'tool-call-delta': this.output += chunk.argumentsDelta.length + (chunk.name?.length ?? 0); return
      case 'usage': this.usage = true; return
      case 'finish': this.finish = true; return
      default: return
    }
  }
}

/** The estimate for a cut request, or null when the provider's usage came or the stream ended in-band. */
export function estimatedUsage(request: ModelRequest | null, seen: StreamedChars, chunks: number): Usage | null {
  if (seen.usage || seen.finish || chunks === 0) return null
  let input = 0
  try {
    input = JSON.stringify({ system: request?.system ?? '', messages: request?.messages ?? [], tools: request?.tools ?? [] }).length
  } catch {
    input = 0 // a request that cannot be serialised was not sent as such; its input is not estimated
  }
  const tokens = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN)
  return {
    inputTokens: tokens(input),
    outputTokens: tokens(seen.output),
    ...(seen.reasoning > 0 ? { reasoningTokens: tokens(seen.reasoning) } : {}),
    estimated: true,
  }
}
