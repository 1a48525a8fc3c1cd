/**
 * The AI SDK bridge side by side with the AI SDK's own `streamText` (ai@6) on the same recorded
 * streams, served from 127.0.0.1 (issue 23). What `streamText` keeps, `fromAiSdk` must keep: the
 * provider data of reasoning blocks (Claude's thinking signature, redacted thinking), and what the
 * next request sends back.
 */
import { createAnthropic } from '@ai-sdk/anthropic'
import { jsonSchema, stepCountIs, streamText, tool } from 'ai6'
import { MockLanguageModelV2, simulateReadableStream } from 'ai/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import type { AssistantMessage } from '../../events/index.js'
import { fromAiSdk } from '../../models/ai-sdk/index.js'
import { defineTool } from '../../tools/index.js'
import { verify } from '../../replay/verify.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { startFixtureServer, type FixtureServer } from './fixture-server.js'
import { runChecked } from './helpers.js'

let server: FixtureServer
beforeAll(async () => {
  server = await startFixtureServer()
})
afterAll(async () => {
  await server.close()
})

/** A fetch that serves the nth request from the nth fixture and records every request body. */
function sequenceFetch(files: readonly string[]): { fetch: typeof fetch; bodies: any[] } {
  const bodies: any[] = []
  const f: typeof fetch = async (input, init) => {
    const n = bodies.length
    bodies.push(typeof init?.body === 'string' ? JSON.parse(init.body) : undefined)
    const file = files[Math.min(n, files.length - 1)]!
    const url = new URL(String(input))
    return fetch(server.url(file) + url.pathname, init)
  }
  return { fetch: f, bodies }
}

const THINKING = { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } } as const
const TWO_STEPS = ['turnlog/anthropic--thinking-redacted-tool.chunks.txt', 'vercel-ai/anthropic--anthropic-text.chunks.txt']

/** The assistant turn's content of the second request, as `streamText` (two steps) sends it. */
async function streamTextSecondRequest(): Promise<any[]> {
  const { fetch: f, bodies } = sequenceFetch(TWO_STEPS)
  const model = createAnthropic({ baseURL: 'http://fixture.invalid/v1', apiKey: 'k', fetch: f })('claude-sonnet-4-5')
  const result = streamText({
    model,
    system: 'You are terse.',
    prompt: 'What is the weather in Paris?',
    providerOptions: THINKING,
    tools: {
      get_weather: tool({
        description: 'weather for a city',
        inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
        execute: async () => 'sunny',
      }),
    },
    stopWhen: stepCountIs(2),
  })
  await result.consumeStream()
  expect(bodies).toHaveLength(2)
  return bodies[1].messages
}

/** The same through a turnlog agent: the second request is rebuilt from the log. */
async function turnlogSecondRequest(): Promise<{ messages: any[]; assistant: AssistantMessage; events: readonly any[] }> {
  const { fetch: f, bodies } = sequenceFetch(TWO_STEPS)
  const model = createAnthropic({ baseURL: 'http://fixture.invalid/v1', apiKey: 'k', fetch: f })('claude-sonnet-4-5')
  const agent = createAgent({
    model: fromAiSdk(model, { providerOptions: THINKING }),
    system: 'You are terse.',
    clock: fakeClock(),
    ids: counterIds('m'),
    timers: instantTimers(),
    checkRequests: 'full',
    tools: [defineTool({ name: 'get_weather', description: 'weather for a city', parameters: z.object({ city: z.string() }), execute: () => 'sunny' })],
  })
  agent.followup('What is the weather in Paris?')
  await agent.whenIdle()
  expect(bodies).toHaveLength(2)
  const first = agent.events.find((e) => e.type === 'assistant/message')!
  return { messages: bodies[1].messages, assistant: (first.data as { message: AssistantMessage }).message, events: agent.events }
}

describe('issue 23 item 1: Claude thinking round-trips through fromAiSdk(@ai-sdk/anthropic)', () => {
  it('R3: the second request sends the assistant turn exactly as streamText does: thinking (signed), redacted_thinking, tool_use', async () => {
    const reference = await streamTextSecondRequest()
    const ours = await turnlogSecondRequest()
    expect(reference[1].role).toBe('assistant')
    expect(reference[1].content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'redacted_thinking', 'tool_use'])
    expect(ours.messages[1]).toEqual(reference[1])
    expect(verify(ours.events).violations).toEqual([])
  })

  it('L9: the log keeps the signature and the redacted data as the blocks\' providerData (and the text of the thinking)', async () => {
    const { assistant } = await turnlogSecondRequest()
    expect(assistant.content).toEqual([
      {
        type: 'reasoning',
        text: 'The user wants the weather in Paris. I should call get_weather.',
        providerData: { anthropic: { signature: 'EqQBCkgIARABGAIiQKLm1v9turnlogSignatureForTests0a1b2c3d4e5f==' } },
      },
      { type: 'reasoning', text: '', providerData: { anthropic: { redactedData: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' } } },
      { type: 'tool-call', id: 'toolu_01TurnlogWeather', name: 'get_weather', arguments: '{"city": "Paris"}' },
    ])
  })

  it('L9: a recorded thinking stream (claude-sonnet-4-5, vercel/ai fixture) keeps its signature', async () => {
    const model = createAnthropic({ baseURL: server.url('vercel-ai/anthropic--anthropic-clear-thinking.1.chunks.txt'), apiKey: 'k' })('claude-sonnet-4-5')
    const { outcome } = await runChecked(fromAiSdk(model))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    const reasoning = outcome.message.content[0]!
    expect(reasoning).toMatchObject({ type: 'reasoning', text: 'The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185' })
    expect((reasoning as { providerData?: any }).providerData?.anthropic?.signature).toMatch(/^EvQBCkYICxgCKkAxhD4N/)
  })
})

describe('issue 23 item 2: usage under prompt caching, per provider, from the data', () => {
  const v2 = (finish: Record<string, unknown>) =>
    new MockLanguageModelV2({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'ok' }, { type: 'text-end', id: 't' }, { type: 'finish', finishReason: 'stop', ...finish }] as never[],
        }),
      }),
    })

  it('L9 V2 @ai-sdk/anthropic@2 (input 12 / cache read 100 / cache write 50 on the wire): input excludes cache reads, the write comes from providerMetadata', async () => {
    // what @ai-sdk/anthropic@2 reports for that wire usage: inputTokens = input_tokens,
    // cachedInputTokens = cache_read_input_tokens, the write only in providerMetadata
    const { outcome } = await runChecked(fromAiSdk(v2({
      usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17, cachedInputTokens: 100 },
      providerMetadata: { anthropic: { cacheCreationInputTokens: 50, usage: { input_tokens: 12, cache_read_input_tokens: 100, cache_creation_input_tokens: 50 } } },
    })))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.usage).toEqual({ inputTokens: 12, cacheReadTokens: 100, cacheWriteTokens: 50, outputTokens: 5 })
  })

  it('L9 V2 without provider metadata: cache reads above the input count can only mean the input count excludes them', async () => {
    const { outcome } = await runChecked(fromAiSdk(v2({ usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17, cachedInputTokens: 100 } })))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.usage).toEqual({ inputTokens: 12, cacheReadTokens: 100, outputTokens: 5 })
  })

  it('L9 V2 OpenAI convention kept (cached inside the input count): 100 in, 40 cached → 60 + 40', async () => {
    const { outcome } = await runChecked(fromAiSdk(v2({ usage: { inputTokens: 100, outputTokens: 5, totalTokens: 105, cachedInputTokens: 40 }, providerMetadata: { openai: {} } })))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.usage).toEqual({ inputTokens: 60, cacheReadTokens: 40, outputTokens: 5 })
  })

  it('L9 V3 @ai-sdk/anthropic on a recorded prompt-cache stream: the same buckets as streamText reports', async () => {
    const file = 'vercel-ai/anthropic--anthropic-code-execution-20260120-prompt-cache.1.chunks.txt'
    const reference = streamText({ model: createAnthropic({ baseURL: server.url(file), apiKey: 'k' })('claude-sonnet-4-5'), prompt: 'x' })
    await reference.consumeStream()
    const u = await reference.usage
    const { outcome } = await runChecked(fromAiSdk(createAnthropic({ baseURL: server.url(file), apiKey: 'k' })('claude-sonnet-4-5')))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.usage).toEqual({
      inputTokens: u.inputTokenDetails.noCacheTokens,
      cacheReadTokens: u.inputTokenDetails.cacheReadTokens,
      cacheWriteTokens: u.inputTokenDetails.cacheWriteTokens,
      outputTokens: u.outputTokens,
    })
    expect(outcome.usage).toEqual({ inputTokens: 6, cacheReadTokens: 6289, cacheWriteTokens: 3337, outputTokens: 198 })
  })
})

describe('issue 23 item 3: no stream part is dropped (response metadata, warnings, provider-executed calls, sources, files)', () => {
  const SEARCH = 'vercel-ai/anthropic--anthropic-web-search-tool.1.chunks.txt'
  const searchModel = (f?: typeof fetch) => createAnthropic({ baseURL: f ? 'http://fixture.invalid/v1' : server.url(SEARCH), apiKey: 'k', ...(f ? { fetch: f } : {}) })

  it('L9 Anthropic web search (recorded): text, sources, the provider-executed call and its result, response id and model, as streamText has them', async () => {
    const provider = searchModel()
    const reference = streamText({ model: provider('claude-sonnet-4-5'), prompt: 'x', tools: { web_search: provider.tools.webSearch_20250305() } })
    await reference.consumeStream()
    const content = await reference.content
    const response = await reference.response

    const { chunks, outcome } = await runChecked(fromAiSdk(searchModel()('claude-sonnet-4-5'), { providerTools: [{ type: 'provider', id: 'anthropic.web_search_20250305', name: 'web_search', args: {} }] }))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    const blocks = outcome.message.content as any[]
    expect(blocks.filter((b) => b.type === 'text').map((b) => b.text).join('')).toBe(await reference.text)
    // (source ids are generated by the provider package per run)
    expect(blocks.filter((b) => b.type === 'source').map(({ id, ...b }) => b)).toEqual((await reference.sources).map((s: any) => ({
      type: 'source', sourceType: s.sourceType, url: s.url, title: s.title, providerData: s.providerMetadata,
    })))
    const call = content.find((p: any) => p.type === 'tool-call') as any
    const result = content.find((p: any) => p.type === 'tool-result') as any
    expect(call.providerExecuted).toBe(true)
    expect(blocks.filter((b) => b.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: call.toolCallId, name: 'web_search', arguments: JSON.stringify(call.input).replace(/":"/g, '": "'), providerExecuted: true },
    ])
    expect(blocks.filter((b) => b.type === 'tool-result')).toEqual([{ type: 'tool-result', id: result.toolCallId, name: 'web_search', result: JSON.parse(JSON.stringify(result.output)) }])
    expect(chunks).toContainEqual({ type: 'response-metadata', id: response.id, model: response.modelId })
    expect(outcome.finish).toBe('stop')
  })

  it('R3: the provider-executed call and its result are part of the next request\'s history (as streamText sends them), never run by turnlog', async () => {
    const files = [SEARCH, 'vercel-ai/anthropic--anthropic-text.chunks.txt']
    const a = sequenceFetch(files)
    const pa = searchModel(a.fetch)
    const first = streamText({ model: pa('claude-sonnet-4-5'), prompt: 'What happened in tech today?', tools: { web_search: pa.tools.webSearch_20250305() } })
    await first.consumeStream()
    const second = streamText({
      model: pa('claude-sonnet-4-5'),
      messages: [{ role: 'user', content: 'What happened in tech today?' }, ...(await first.response).messages, { role: 'user', content: 'thanks' }],
      tools: { web_search: pa.tools.webSearch_20250305() },
    })
    await second.consumeStream()

    const b = sequenceFetch(files)
    const ran: string[] = []
    const agent = createAgent({
      model: fromAiSdk(searchModel(b.fetch)('claude-sonnet-4-5'), { providerTools: [{ type: 'provider', id: 'anthropic.web_search_20250305', name: 'web_search', args: {} }] }),
      system: '',
      clock: fakeClock(),
      ids: counterIds('m'),
      timers: instantTimers(),
      checkRequests: 'full',
      tools: [defineTool({ name: 'web_search', description: 'must never run', parameters: z.object({}).loose(), execute: () => { ran.push('web_search'); return 'no' } })],
    })
    agent.followup('What happened in tech today?')
    await agent.whenIdle()
    agent.followup('thanks')
    await agent.whenIdle()
    expect(ran).toEqual([])
    expect(b.bodies).toHaveLength(2)
    expect(b.bodies[1].messages[1]).toEqual(a.bodies[1].messages[1])
    expect(b.bodies[1].messages[1].content.map((p: any) => p.type)).toContain('web_search_tool_result')
    expect(verify(agent.events).violations).toEqual([])
  })

  it('L9: warnings and generated files (V2 parts) are logged: a warning chunk, a file block', async () => {
    const model = new MockLanguageModelV2({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'stream-start', warnings: [{ type: 'unsupported-setting', setting: 'topK', details: 'topK is not supported' }] },
            { type: 'response-metadata', id: 'resp_1', modelId: 'image-model-2025', timestamp: new Date(0) },
            { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
            { type: 'file', mediaType: 'image/png', data: new Uint8Array([137, 80, 78, 71]) },
            { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'here' }, { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
          ] as never[],
        }),
      }),
    })
    const { chunks, outcome } = await runChecked(fromAiSdk(model))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(chunks).toContainEqual({ type: 'warning', message: 'unsupported-setting topK: topK is not supported' })
    expect(chunks).toContainEqual({ type: 'response-metadata', id: 'resp_1', model: 'image-model-2025' })
    expect(outcome.message.content).toEqual([
      { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'file', mediaType: 'image/png', data: 'iVBORw==' },
      { type: 'text', text: 'here' },
    ])
  })
})

describe('issue 23 item 6: the provider reaches the log', () => {
  it('P7: fromAiSdk names the provider as the conventions do; the agent records it in request/header', async () => {
    const model = createAnthropic({ baseURL: server.url('vercel-ai/anthropic--anthropic-text.chunks.txt'), apiKey: 'k' })('claude-sonnet-4-5')
    const adapter = fromAiSdk(model)
    expect(adapter.info).toEqual({ name: 'claude-sonnet-4-5', provider: 'anthropic' })
    const agent = createAgent({ model: adapter, system: 's', clock: fakeClock(), ids: counterIds('m'), timers: instantTimers() })
    agent.followup('hi')
    await agent.whenIdle()
    expect((agent.events.find((e) => e.type === 'request/header')!.data as { provider?: string }).provider).toBe('anthropic')
  })
})

describe('issue 23 item 6: the OpenAI-compatible adapter names well-known providers by host', () => {
  it('P7: api.openai.com → openai, api.deepseek.com → deepseek, another host → none (info.provider names it)', async () => {
    const { openaiCompatibleModel } = await import('../../models/openai.js')
    expect(openaiCompatibleModel().info?.provider).toBe('openai')
    expect(openaiCompatibleModel({ baseURL: 'https://api.deepseek.com' }).info?.provider).toBe('deepseek')
    expect(openaiCompatibleModel({ baseURL: 'http://127.0.0.1:9/v1' }).info?.provider).toBeUndefined()
    expect(openaiCompatibleModel({ baseURL: 'http://127.0.0.1:9/v1', info: { provider: 'groq' } }).info?.provider).toBe('groq')
  })
})
