/**
 * Issue 23 item 5: the bridge is as strict as `streamText` where it is stricter, keeps a stream
 * error's message, and closes a provider's part stream at once on cancel.
 */
import { createAnthropic } from '@ai-sdk/anthropic'
import { MockLanguageModelV2, simulateReadableStream } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { fromAiSdk } from '../../models/ai-sdk/index.js'
import { runChecked } from './helpers.js'

const v2 = (chunks: unknown[]) => new MockLanguageModelV2({ doStream: async () => ({ stream: simulateReadableStream({ chunks: chunks as never[] }) }) })

/** Anthropic SSE: a text block starts, then the server sends an `error` event mid-stream. */
function anthropicErrorMidStream(error: { type: string; message: string }): typeof fetch {
  const events = [
    { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
    { type: 'error', error },
  ]
  const body = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')
  return async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } })
}

describe('issue 23 item 5: errors, cancels and strictness in fromAiSdk', () => {
  it('R4: an error event mid-stream keeps the provider\'s message (overloaded → SERVER "Overloaded", rate limit → RATE_LIMIT)', async () => {
    const overloaded = await runChecked(fromAiSdk(createAnthropic({ apiKey: 'k', fetch: anthropicErrorMidStream({ type: 'overloaded_error', message: 'Overloaded' }) })('claude-sonnet-4-5')))
    expect(overloaded.outcome.kind === 'failure' && overloaded.outcome.failure).toMatchObject({ code: 'SERVER', message: 'Overloaded' })
    const limited = await runChecked(fromAiSdk(createAnthropic({ apiKey: 'k', fetch: anthropicErrorMidStream({ type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' }) })('claude-sonnet-4-5')))
    expect(limited.outcome.kind === 'failure' && limited.outcome.failure).toMatchObject({ code: 'RATE_LIMIT', message: 'Number of request tokens has exceeded your per-minute rate limit' })
    const other = await runChecked(fromAiSdk(createAnthropic({ apiKey: 'k', fetch: anthropicErrorMidStream({ type: 'invalid_request_error', message: 'messages: bad' }) })('claude-sonnet-4-5')))
    expect(other.outcome.kind === 'failure' && other.outcome.failure.message).toBe('messages: bad')
  })

  it('R5: a provider that ignores the abort signal has its part stream cancelled at once on cancel', async () => {
    let cancelled!: () => void
    const wasCancelled = new Promise<void>((resolve) => (cancelled = resolve))
    const model = new MockLanguageModelV2({
      doStream: async () => ({
        stream: new ReadableStream({
          start(c) {
            c.enqueue({ type: 'text-start', id: 't' })
            c.enqueue({ type: 'text-delta', id: 't', delta: 'partial' })
            // …and nothing more: the provider ignores the abort signal and never closes
          },
          cancel() {
            cancelled()
          },
        }),
      }),
    })
    const controller = new AbortController()
    const adapter = fromAiSdk(model)
    const seen: string[] = []
    const consume = (async () => {
      try {
        for await (const c of adapter.stream({ messages: [], system: '', tools: [], config: { model: 'm' } }, controller.signal)) {
          seen.push(c.type)
          if (c.type === 'text-delta') controller.abort(new Error('user cancel'))
        }
        return 'ended'
      } catch {
        return 'threw'
      }
    })()
    await wasCancelled // bounded by the test timeout: without the fix the read never returns
    expect(await consume).toBe('threw')
    expect(seen).toEqual(['block-start', 'text-delta'])
  })

  it('L9: a delta after its block ended is a STREAM_GRAMMAR failure (streamText refuses it too)', async () => {
    const { outcome } = await runChecked(fromAiSdk(v2([
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'a' },
      { type: 'text-end', id: 't' },
      { type: 'text-delta', id: 't', delta: 'b' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
    ])))
    expect(outcome.kind === 'failure' && outcome.failure.code).toBe('STREAM_GRAMMAR')
  })

  it('L9, L5: a streamed tool input with no tool-call part runs no tool: the step fails STREAM_GRAMMAR naming the call', async () => {
    const { outcome } = await runChecked(fromAiSdk(v2([
      { type: 'tool-input-start', id: 'c1', toolName: 'rm' },
      { type: 'tool-input-delta', id: 'c1', delta: '{"path":"/"}' },
      { type: 'tool-input-end', id: 'c1' },
      { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
    ])))
    expect(outcome.kind).toBe('failure')
    if (outcome.kind !== 'failure') return
    expect(outcome.failure.code).toBe('STREAM_GRAMMAR')
    expect(outcome.failure.message).toContain('c1')
  })
})
