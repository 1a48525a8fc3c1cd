/**
 * fromAiSdk: AI SDK language models (V3: @ai-sdk/openai-compatible, @ai-sdk/anthropic; V2: ai's
 * MockLanguageModelV2) as ModelAdapters, on the same recorded streams as the OpenAI-compatible
 * adapter, served from 127.0.0.1 and reached through a custom `fetch`. L9: every stream is
 * grammatical (the checked stream would report STREAM_GRAMMAR).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { MockLanguageModelV2, simulateReadableStream } from 'ai/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Usage } from '../../events/index.js'
import { fromAiSdk, usageFromAiSdk } from '../../models/ai-sdk/index.js'
import { STREAMS_DIR, startFixtureServer, type FixtureServer } from './fixture-server.js'
import { grammarError, request, runChecked, summarise } from './helpers.js'

interface Expected {
  text: string
  reasoning: string
  toolCalls: { id: string; name: string; arguments: string }[]
  usage: Usage
  finish: 'stop' | 'tool-calls' | 'max-tokens'
}
const EXPECTED = JSON.parse(readFileSync(join(STREAMS_DIR, 'expected-openai.json'), 'utf8')) as Record<string, Expected>

let server: FixtureServer
const fetched: { url: string; signal: AbortSignal | undefined }[] = []
/** The custom fetch every provider gets: records the call (and its signal), then goes to loopback. */
const recordingFetch: typeof fetch = async (input, init) => {
  fetched.push({ url: String(input), signal: init?.signal ?? undefined })
  return fetch(input, init)
}

beforeAll(async () => {
  server = await startFixtureServer()
})
afterAll(async () => {
  await server.close()
})

const compatible = (file: string, opts: Record<string, unknown> = {}) =>
  createOpenAICompatible({ name: 'fixture', baseURL: server.url(file, opts), apiKey: 'k', includeUsage: true, fetch: recordingFetch })('fixture-model')
const anthropic = (file: string, opts: Parameters<FixtureServer['url']>[1] = {}) =>
  createAnthropic({ baseURL: server.url(file, opts), apiKey: 'k', fetch: recordingFetch })('claude-sonnet-4-5')

describe('fromAiSdk(@ai-sdk/openai-compatible) on recorded chat-completions streams', () => {
  for (const [file, want] of Object.entries(EXPECTED)) {
    it(`L9 ${file}: text, reasoning, tool calls, usage, finish`, async () => {
      const { chunks, outcome } = await runChecked(fromAiSdk(compatible(file)))
      expect(grammarError(chunks)).toBeNull()
      if (outcome.kind !== 'success') throw new Error(`failed: ${JSON.stringify(outcome.failure)}`)
      expect(summarise(outcome.message)).toEqual({ text: want.text, reasoning: want.reasoning, toolCalls: want.toolCalls })
      expect(outcome.usage).toEqual(want.usage)
      expect(outcome.finish).toBe(want.finish)
    })
  }
})

describe('fromAiSdk(@ai-sdk/anthropic) on recorded Messages streams', () => {
  it('L9 text: one text block, usage, stop', async () => {
    const { chunks, outcome } = await runChecked(fromAiSdk(anthropic('vercel-ai/anthropic--anthropic-text.chunks.txt')))
    expect(grammarError(chunks)).toBeNull()
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(summarise(outcome.message)).toEqual({
      text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
      reasoning: '',
      toolCalls: [],
    })
    expect(outcome.usage).toEqual({ inputTokens: 12, outputTokens: 30 })
    expect(outcome.finish).toBe('stop')
  })

  it('L9 tool use: text then a tool call with streamed input; and a tool with no arguments', async () => {
    const json = await runChecked(fromAiSdk(anthropic('vercel-ai/anthropic--anthropic-json-tool.1.chunks.txt')))
    if (json.outcome.kind !== 'success') throw new Error(JSON.stringify(json.outcome.failure))
    expect(summarise(json.outcome.message).toolCalls).toEqual([{
      id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA',
      name: 'json',
      arguments: '{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}',
    }])
    expect(json.outcome.finish).toBe('tool-calls')
    expect(json.outcome.usage).toEqual({ inputTokens: 849, outputTokens: 47 })

    const noArgs = await runChecked(fromAiSdk(anthropic('vercel-ai/anthropic--anthropic-tool-no-args.chunks.txt')))
    expect(grammarError(noArgs.chunks)).toBeNull()
    if (noArgs.outcome.kind !== 'success') throw new Error(JSON.stringify(noArgs.outcome.failure))
    const s = summarise(noArgs.outcome.message)
    expect(s.text).toBe("I'll update the issue list for you.")
    expect(s.toolCalls.map((c) => [c.id, c.name])).toEqual([['toolu_01QE1WLsSVp5hy5Q3GmGTmjP', 'updateIssueList']])
    expect(['', '{}']).toContain(s.toolCalls[0]!.arguments)
    expect(noArgs.outcome.finish).toBe('tool-calls')
  })

  it('refusal: the model\'s answer since issue 23 (finish refusal with the provider\'s explanation; not EMPTY_RESPONSE, not CONTENT_FILTER)', async () => {
    const { chunks, outcome } = await runChecked(fromAiSdk(anthropic('vercel-ai/anthropic--anthropic-refusal.chunks.txt')))
    expect(grammarError(chunks)).toBeNull()
    if (outcome.kind !== 'success') throw new Error('expected a refusal answer')
    expect(outcome.finish).toBe('refusal')
    expect(outcome.explanation).toContain("Anthropic's Usage Policy")
    expect(outcome.usage?.inputTokens).toBe(18)
  })

  it('L9 fallback mid-output: the fallback block is not content; the text after it is the answer', async () => {
    const { chunks, outcome } = await runChecked(fromAiSdk(anthropic('vercel-ai/anthropic--anthropic-fallback.chunks.txt')))
    expect(grammarError(chunks)).toBeNull()
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(summarise(outcome.message).text).toBe('The printing press was invented by Johannes Gutenberg around 1440.')
    expect(outcome.finish).toBe('stop')
  })

  it('L9 duplicate message_start: one message, text once', async () => {
    const { chunks, outcome } = await runChecked(fromAiSdk(anthropic('vercel-ai/anthropic--duplicate-message-start.chunks.txt')))
    expect(grammarError(chunks)).toBeNull()
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(summarise(outcome.message)).toEqual({ text: 'Hello, World!', reasoning: '', toolCalls: [] })
    expect(outcome.usage?.outputTokens).toBe(227)
  })

  it('APICallError 429 → RATE_LIMIT with retry-after; 400 "prompt is too long" → CONTEXT_WINDOW_EXCEEDED; 529 → SERVER', async () => {
    const limited = await runChecked(fromAiSdk(anthropic('x', {
      status: 429, headers: { 'retry-after': '7' },
      body: JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }),
    })))
    expect(limited.outcome.kind === 'failure' && limited.outcome.failure).toMatchObject({ code: 'RATE_LIMIT', status: 429, retryAfterMs: 7000 })
    const long = await runChecked(fromAiSdk(anthropic('x', {
      status: 400,
      body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }),
    })))
    expect(long.outcome.kind === 'failure' && long.outcome.failure).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    const overloaded = await runChecked(fromAiSdk(anthropic('x', {
      status: 529, body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    })))
    expect(overloaded.outcome.kind === 'failure' && overloaded.outcome.failure).toMatchObject({ code: 'SERVER', status: 529 })
  })

  it('R5: a cancel mid-stream reaches the provider fetch and closes the connection (loopback server sees the close)', async () => {
    const before = server.closed()
    fetched.length = 0
    const controller = new AbortController()
    let seen = 0
    const { outcome } = await runChecked(
      fromAiSdk(anthropic('vercel-ai/anthropic--anthropic-text.chunks.txt', { stallAfter: 5 })),
      controller.signal,
      request,
      (item) => {
        if (item.kind === 'chunk' && item.chunk.type === 'text-delta' && ++seen === 1) controller.abort(new Error('user cancel'))
      },
    )
    expect(outcome.kind === 'failure' && outcome.failure.code).toBe('ABORTED')
    expect(fetched.at(-1)?.signal?.aborted).toBe(true)
    await server.waitClosed(before + 1)
    expect(server.closed()).toBe(before + 1)
  })

  it('R5: a consumer that stops reading (no abort) also closes the connection', async () => {
    const before = server.closed()
    const adapter = fromAiSdk(anthropic('vercel-ai/anthropic--anthropic-text.chunks.txt', { stallAfter: 5 }))
    for await (const c of adapter.stream(request, new AbortController().signal)) {
      if (c.type === 'text-delta') break
    }
    await server.waitClosed(before + 1)
    expect(server.closed()).toBe(before + 1)
  })
})

describe('fromAiSdk: request mapping and specification V2', () => {
  it('R3: the call options carry the system prompt, history, tools and config; the abort signal is the call signal', async () => {
    let seen: any
    const model = new MockLanguageModelV2({
      doStream: async (options) => {
        seen = options
        return {
          stream: simulateReadableStream({
            chunks: [
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: 'ok' },
              { type: 'text-end', id: 't' },
              { type: 'finish', finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13, cachedInputTokens: 4, reasoningTokens: 1 } },
            ],
          }),
        }
      },
    })
    const signal = new AbortController().signal
    const req = {
      ...request,
      tools: [{ name: 'echo', description: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } }],
      config: { model: 'm', temperature: 0.2, maxTokens: 50, stop: ['END'], toolChoice: 'auto' },
      messages: [
        ...request.messages,
        { role: 'assistant' as const, content: [{ type: 'tool-call' as const, id: 'c1', name: 'echo', arguments: '{"text":"a"}' }] },
        { role: 'tool' as const, callId: 'c1', content: [{ type: 'text' as const, text: 'a' }] },
      ],
    }
    const { outcome } = await runChecked(fromAiSdk(model), signal, req)
    expect(seen.abortSignal).toBe(signal)
    expect(seen).toMatchObject({ temperature: 0.2, maxOutputTokens: 50, stopSequences: ['END'], toolChoice: { type: 'auto' } })
    expect(seen.tools).toEqual([{ type: 'function', name: 'echo', description: 'echo', inputSchema: req.tools[0]!.parameters }])
    expect(seen.prompt).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'echo', input: { text: 'a' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'echo', output: { type: 'text', value: 'a' } }] },
    ])
    if (outcome.kind !== 'success') throw new Error('failed')
    expect(outcome.usage).toEqual({ inputTokens: 6, cacheReadTokens: 4, outputTokens: 2, reasoningTokens: 1 })
  })

  it('L9 V2: reasoning, a tool call given whole, an error part → the failure it carries', async () => {
    const v2 = (chunks: unknown[]) => new MockLanguageModelV2({ doStream: async () => ({ stream: simulateReadableStream({ chunks: chunks as never[] }) }) })
    const ok = await runChecked(fromAiSdk(v2([
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'hmm' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'tool-call', toolCallId: 'c9', toolName: 'echo', input: '{"text":"x"}' },
      { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 5, outputTokens: 5, totalTokens: 10 } },
    ])))
    expect(grammarError(ok.chunks)).toBeNull()
    if (ok.outcome.kind !== 'success') throw new Error('failed')
    expect(ok.outcome.message.content).toEqual([
      { type: 'reasoning', text: 'hmm' },
      { type: 'tool-call', id: 'c9', name: 'echo', arguments: '{"text":"x"}' },
    ])
    expect(ok.outcome.finish).toBe('tool-calls')

    const bad = await runChecked(fromAiSdk(v2([
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'par' },
      { type: 'error', error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
    ])))
    expect(bad.outcome.kind === 'failure' && bad.outcome.failure).toMatchObject({ code: 'SERVER', message: 'Overloaded' })
  })

  it('refuses what is not a v2, v3 or v4 language model', () => {
    expect(() => fromAiSdk('gpt-4o' as never)).toThrow(/specification v2, v3 or v4/)
    expect(() => fromAiSdk({ specificationVersion: 'v1', doStream: () => {} } as never)).toThrow(/specification v1/)
    expect(() => fromAiSdk({ specificationVersion: 'v5', doStream: () => {} } as never)).toThrow(/specification v5/)
  })

  it('usageFromAiSdk: V3 buckets incl. cacheWrite; reasoning above the output total (xAI) keeps the total as visible output', () => {
    expect(usageFromAiSdk({
      inputTokens: { total: 100, noCache: 60, cacheRead: 30, cacheWrite: 10 },
      outputTokens: { total: 50, text: 40, reasoning: 10 },
    })).toEqual({ inputTokens: 60, cacheReadTokens: 30, cacheWriteTokens: 10, outputTokens: 40, reasoningTokens: 10 })
    expect(usageFromAiSdk({
      inputTokens: { total: 291, noCache: 1, cacheRead: 290, cacheWrite: undefined },
      outputTokens: { total: 26, text: 0, reasoning: 196 },
    })).toEqual({ inputTokens: 1, cacheReadTokens: 290, outputTokens: 26, reasoningTokens: 196 })
  })
})
