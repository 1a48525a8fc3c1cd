/**
 * openaiCompatibleModel on real recorded provider streams (test/fixtures/streams/SOURCES.md),
 * served from a loopback HTTP server. L9: every stream obeys the chunk grammar (the checked stream
 * reports STREAM_GRAMMAR otherwise); each fixture's assembled text, reasoning, tool calls, usage
 * and finish equal expected-openai.json (a naive fold of the raw events, checked by hand).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { AssistantMessage, Usage } from '../../events/index.js'
import { openaiCompatibleModel } from '../../models/openai.js'
import { verify } from '../../replay/verify.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { STREAMS_DIR, sseEvents, startFixtureServer, type FixtureServer } from './fixture-server.js'
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
beforeAll(async () => {
  server = await startFixtureServer()
})
afterAll(async () => {
  await server.close()
})

describe('openaiCompatibleModel on recorded streams', () => {
  for (const [file, want] of Object.entries(EXPECTED)) {
    it(`L9 ${file}: text, reasoning, tool calls, usage, finish`, async () => {
      const model = openaiCompatibleModel({ baseURL: server.url(file), apiKey: 'k' })
      const { chunks, outcome } = await runChecked(model)
      expect(grammarError(chunks)).toBeNull()
      if (outcome.kind !== 'success') throw new Error(`failed: ${JSON.stringify(outcome.failure)}`)
      expect(summarise(outcome.message)).toEqual({ text: want.text, reasoning: want.reasoning, toolCalls: want.toolCalls })
      expect(outcome.usage).toEqual(want.usage)
      expect(outcome.finish).toBe(want.finish)
    })
  }
})

describe('fixes, each on a recorded stream', () => {
  it('Mistral: delta.content as an array of thinking and text parts keeps both (was: text truncated, reasoning lost)', async () => {
    const { outcome } = await runChecked(openaiCompatibleModel({ baseURL: server.url('vercel-ai/mistral--mistral-reasoning.chunks.txt') }))
    if (outcome.kind !== 'success') throw new Error('failed')
    expect(outcome.message.content).toEqual([
      { type: 'reasoning', text: 'The user is asking for 2+2. This is basic arithmetic. 2+2=4.' },
      { type: 'text', text: '2 + 2 = 4' },
    ])
  })

  it('xAI: reasoning tokens above completion_tokens mean completion_tokens is the visible output (was: 196 → 26, output 0)', async () => {
    const { outcome } = await runChecked(openaiCompatibleModel({ baseURL: server.url('vercel-ai/xai--xai-tool-call.chunks.txt') }))
    expect(outcome.usage).toEqual({ inputTokens: 1, cacheReadTokens: 290, outputTokens: 26, reasoningTokens: 196 })
  })

  it('gpt-4o refusal: the refusal text is the answer (text block, finish refusal since issue 23), not EMPTY_RESPONSE', async () => {
    const { outcome } = await runChecked(openaiCompatibleModel({ baseURL: server.url('openai-python/gpt-4o-refusal.sse') }))
    expect(outcome.kind).toBe('success')
    if (outcome.kind !== 'success') return
    expect(outcome.message.content).toEqual([{ type: 'text', text: "I'm sorry, I can't assist with that request." }])
    expect(outcome.finish).toBe('refusal')
  })

  it('R3, L9: a refusal is logged as the assistant message and never retried by the agent', async () => {
    const agent = createAgent({
      model: openaiCompatibleModel({ baseURL: server.url('openai-python/gpt-4o-refusal.sse'), model: 'gpt-4o' }),
      system: 'sys',
      clock: fakeClock(),
      ids: counterIds('m'),
      timers: instantTimers(),
    })
    agent.followup('help me with something bad')
    await agent.whenIdle()
    const types = agent.events.map((e) => e.type)
    expect(types.filter((t) => t === 'llm/retry')).toEqual([])
    expect(types.filter((t) => t === 'turn/start')).toHaveLength(1)
    const message = agent.events.find((e) => e.type === 'assistant/message')!.data as { message: AssistantMessage; finish: string }
    expect(message.message.content).toEqual([{ type: 'text', text: "I'm sorry, I can't assist with that request." }])
    expect(message.finish).toBe('refusal')
    expect(verify(agent.events).violations).toEqual([])
    await agent.dispose()
  })

  it('Gemini-style parallel tool calls without `index` stay separate (gpt-4o parallel stream with index removed)', async () => {
    // Gemini's OpenAI-compatible endpoint sends each parallel call without `index`. No public
    // recording of it was found; this is gpt-4o's recorded parallel-call stream with every
    // `index` member of its tool-call deltas deleted, which is that shape exactly: the first
    // delta of each call names it, continuations carry only argument text.
    const events = sseEvents('openai-python/gpt-4o-parallel-tools.sse').map((ev) =>
      ev.replace(/\{"index":\d+,/g, '{'),
    )
    expect(events.join('')).not.toMatch(/"tool_calls":\[\{"index"/)
    const fetchStub: typeof fetch = async () =>
      new Response(events.join(''), { status: 200, headers: { 'content-type': 'text/event-stream' } })
    const { outcome } = await runChecked(openaiCompatibleModel({ fetch: fetchStub }))
    if (outcome.kind !== 'success') throw new Error('failed')
    expect(summarise(outcome.message).toolCalls).toEqual(EXPECTED['openai-python/gpt-4o-parallel-tools.sse']!.toolCalls)
    expect(outcome.finish).toBe('tool-calls')
  })

  it('R3: DeepSeek gets reasoning_content sent back by default (host api.deepseek.com); other hosts do not; the option wins', async () => {
    const bodies: Record<string, unknown>[] = []
    const fetchStub: typeof fetch = async (_url, init) => {
      bodies.push(JSON.parse(String(init?.body)) as Record<string, unknown>)
      return new Response(sseEvents('vercel-ai/deepseek--deepseek-text.chunks.txt').join(''), { status: 200 })
    }
    const req = {
      ...request,
      messages: [
        ...request.messages,
        { role: 'assistant' as const, content: [{ type: 'reasoning' as const, text: 'think' }, { type: 'text' as const, text: 'ok' }] },
      ],
    }
    const reasoningOf = (b: Record<string, unknown>) => (b.messages as Record<string, unknown>[])[2]!.reasoning_content
    await runChecked(openaiCompatibleModel({ baseURL: 'https://api.deepseek.com', fetch: fetchStub }), undefined, req)
    await runChecked(openaiCompatibleModel({ baseURL: 'https://api.openai.com/v1', fetch: fetchStub }), undefined, req)
    await runChecked(openaiCompatibleModel({ baseURL: 'https://api.deepseek.com', sendReasoning: false, fetch: fetchStub }), undefined, req)
    await runChecked(openaiCompatibleModel({ baseURL: 'https://proxy.example/deepseek', sendReasoning: true, fetch: fetchStub }), undefined, req)
    expect(bodies.map(reasoningOf)).toEqual(['think', undefined, undefined, 'think'])
  })
})
