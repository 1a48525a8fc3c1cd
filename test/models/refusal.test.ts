/**
 * Issue 23 item 4: one rule for refusals in every adapter. A refusal is the model's answer: the
 * stream finishes `refusal`, the message is logged with `finish: 'refusal'` (the refusal text, or
 * the provider's explanation, kept), it is never an `EMPTY_RESPONSE` and never retried. A provider
 * filtering its own output stays the failure `CONTENT_FILTER` (in FAILURE_CODES, not retried).
 */
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { MockLanguageModelV2, simulateReadableStream } from 'ai/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import { DEFAULT_RETRY_ON } from '../../agent/index.js'
import { FAILURE_CODES, type AssistantMessage, type StreamChunk } from '../../events/index.js'
import { fromAiSdk } from '../../models/ai-sdk/index.js'
import { openaiCompatibleModel } from '../../models/openai.js'
import type { ModelAdapter } from '../../models/types.js'
import { verify } from '../../replay/verify.js'
import { counterIds, fakeClock, instantTimers, trace } from '../agent/helpers.js'
import { sseEvents, startFixtureServer, type FixtureServer } from './fixture-server.js'
import { grammarError, runChecked } from './helpers.js'

let server: FixtureServer
beforeAll(async () => {
  server = await startFixtureServer()
})
afterAll(async () => {
  await server.close()
})

const REFUSAL = "I'm sorry, I can't assist with that request."
const EXPLANATION = "This request triggered restrictions on violative cyber content and was blocked under Anthropic's Usage Policy."

/** What @ai-sdk/openai-compatible@1 (specification V2) streams for gpt-4o's recorded refusal: the
 * refusal delta is not a part it knows, so only the raw chunks (when asked for) carry it. */
function v2OpenAiRefusal(): MockLanguageModelV2 {
  const raw = sseEvents('openai-python/gpt-4o-refusal.sse')
    .map((e) => e.replace(/^data: /, '').trim())
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as unknown)
  return new MockLanguageModelV2({
    doStream: async (options) => ({
      stream: simulateReadableStream({
        chunks: [
          { type: 'stream-start', warnings: [] },
          ...(options.includeRawChunks === true ? raw.map((rawValue) => ({ type: 'raw' as const, rawValue })) : []),
          { type: 'finish', finishReason: 'stop', usage: { inputTokens: 79, outputTokens: 11, totalTokens: 90 } },
        ],
      }),
    }),
  })
}

describe('issue 23 item 4: a refusal is the model\'s answer, in every adapter', () => {
  it('L9 OpenAI-compatible adapter: gpt-4o\'s delta.refusal → text, finish refusal', async () => {
    const { chunks, outcome } = await runChecked(openaiCompatibleModel({ baseURL: server.url('openai-python/gpt-4o-refusal.sse') }))
    expect(grammarError(chunks)).toBeNull()
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.message.content).toEqual([{ type: 'text', text: REFUSAL }])
    expect(outcome.finish).toBe('refusal')
  })

  it('L9 fromAiSdk(@ai-sdk/openai-compatible V3): the same stream, finish refusal', async () => {
    const model = createOpenAICompatible({ name: 'fixture', baseURL: server.url('openai-python/gpt-4o-refusal.sse'), apiKey: 'k', includeUsage: true })('gpt-4o')
    const { outcome } = await runChecked(fromAiSdk(model))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.message.content).toEqual([{ type: 'text', text: REFUSAL }])
    expect(outcome.finish).toBe('refusal')
  })

  it('L9 fromAiSdk(V2 provider): the refusal read from the raw chunks, not EMPTY_RESPONSE', async () => {
    const { outcome } = await runChecked(fromAiSdk(v2OpenAiRefusal()))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.message.content).toEqual([{ type: 'text', text: REFUSAL }])
    expect(outcome.finish).toBe('refusal')
  })

  it('L9 fromAiSdk(@ai-sdk/anthropic): a text-less refusal keeps the provider\'s explanation, finish refusal', async () => {
    const model = createAnthropic({ baseURL: server.url('vercel-ai/anthropic--anthropic-refusal.chunks.txt'), apiKey: 'k' })('claude-sonnet-4-5')
    const { chunks, outcome } = await runChecked(fromAiSdk(model))
    expect(grammarError(chunks)).toBeNull()
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.finish).toBe('refusal')
    // no text to log as the answer: the message is empty and the provider's explanation is kept
    // beside it (the model never said it, so it is not content and never re-sent)
    expect(outcome.message.content).toEqual([])
    expect(outcome.explanation).toBe(EXPLANATION)
    expect(outcome.usage?.inputTokens).toBe(18)
  })

  it('L9 fromAiSdk: a content-filter finish without a refusal (the provider cut its own output) stays CONTENT_FILTER', async () => {
    const model = new MockLanguageModelV2({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'Here is how to' },
            { type: 'finish', finishReason: 'content-filter', usage: { inputTokens: 5, outputTokens: 4, totalTokens: 9 } },
          ],
        }),
      }),
    })
    const { outcome } = await runChecked(fromAiSdk(model))
    expect(outcome.kind === 'failure' && outcome.failure.code).toBe('CONTENT_FILTER')
    expect(FAILURE_CODES).toContain('CONTENT_FILTER')
    expect(DEFAULT_RETRY_ON).not.toContain('CONTENT_FILTER')
  })

  for (const [name, model] of [
    ['the OpenAI-compatible adapter', () => openaiCompatibleModel({ baseURL: server.url('openai-python/gpt-4o-refusal.sse'), model: 'gpt-4o' })],
    ['fromAiSdk(@ai-sdk/openai-compatible V3)', () => fromAiSdk(createOpenAICompatible({ name: 'fixture', baseURL: server.url('openai-python/gpt-4o-refusal.sse'), apiKey: 'k', includeUsage: true })('gpt-4o'))],
    ['fromAiSdk(V2)', () => fromAiSdk(v2OpenAiRefusal())],
    ['fromAiSdk(@ai-sdk/anthropic)', () => fromAiSdk(createAnthropic({ baseURL: server.url('vercel-ai/anthropic--anthropic-refusal.chunks.txt'), apiKey: 'k' })('claude-sonnet-4-5'))],
  ] as [string, () => ModelAdapter][]) {
    it(`R3, L9 through ${name}: logged as assistant/message finish refusal, the turn completes, never retried`, async () => {
      const agent = createAgent({ model: model(), system: 'sys', clock: fakeClock(), ids: counterIds('m'), timers: instantTimers(), checkRequests: 'full' })
      agent.followup('help me with something bad')
      await agent.whenIdle()
      expect(trace(agent.events)).toEqual([
        'splice next-turn 0 -0 +[m1]', 'turn/start 1', 'splice next-turn 0 -1 +[]', 'step/start 1.1', 'user/message m1',
        'request/header initial', 'assistant/message refusal', 'step/end 1.1 stop', 'turn/end 1 completed',
      ])
      const message = agent.events.find((e) => e.type === 'assistant/message')!.data as { message: AssistantMessage; explanation?: string }
      if (name.includes('anthropic')) expect(message).toMatchObject({ message: { content: [] }, explanation: EXPLANATION })
      else expect(message.message.content).toEqual([{ type: 'text', text: REFUSAL }])
      expect(verify(agent.events).violations).toEqual([])
      await agent.dispose()
    })
  }

  it('L9: the chunk grammar accepts a refusal finish; the assembler drops tool calls under it (nothing runs after a refusal)', async () => {
    const chunks: StreamChunk[] = [
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'No.' },
      { type: 'block-end', index: 0 },
      { type: 'block-start', index: 1, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 1, id: 'c1', name: 'x', argumentsDelta: '{}' },
      { type: 'block-end', index: 1 },
      { type: 'finish', reason: 'refusal' },
    ]
    const { outcome } = await runChecked({ async *stream() { yield* chunks } })
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.message.content).toEqual([{ type: 'text', text: 'No.' }])
    expect(outcome.finish).toBe('refusal')
  })
})
