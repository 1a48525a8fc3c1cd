/**
 * Issue 23 items 6–7: spans to the letter of the GenAI semantic conventions. Every emitted
 * attribute name is checked against `@opentelemetry/semantic-conventions` 1.45 (the package's
 * exported names), the content attributes against the conventions' JSON schemas (vendored under
 * test/fixtures/semconv with their source and license), OTLP/JSON value types against the
 * attributes' declared types.
 */
import { readFileSync } from 'node:fs'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { runDemoSession } from '../../cli/demo-session.js'
import * as incubating from '@opentelemetry/semantic-conventions/incubating'
import * as stable from '@opentelemetry/semantic-conventions'
import { Ajv } from 'ajv'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import type { LogEvent, StreamChunk } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import type { ModelAdapter } from '../../models/types.js'
import { exportSpans, logToSpans, semconvFromEnv, toOtlpJson } from '../../otel/index.js'
import { reexecute } from '../../replay/index.js'
import { defineTool } from '../../tools/index.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'

const SCHEMAS = new URL('../fixtures/semconv/', import.meta.url).pathname
const schema = (name: string) => JSON.parse(readFileSync(SCHEMAS + name, 'utf8')) as object
const ajv = new Ajv({ strict: false })
const validInput = ajv.compile(schema('gen-ai-input-messages.json'))
const validOutput = ajv.compile(schema('gen-ai-output-messages.json'))
const validSystem = ajv.compile(schema('gen-ai-system-instructions.json'))

/** Every attribute name the package exports (stable and incubating `ATTR_*` constants). */
const REGISTRY = new Set(Object.entries({ ...stable, ...incubating }).filter(([k, v]) => k.startsWith('ATTR_') && typeof v === 'string').map(([, v]) => v as string))

const weather = defineTool({ name: 'weather', description: 'weather', parameters: z.object({ city: z.string() }), execute: ({ city }) => `21 °C in ${city}` })
const broken = defineTool({ name: 'broken', description: 'fails', parameters: z.object({}), execute: () => { throw new Error('no') } })

/** An adapter that yields the given chunk lists, one per request (no `info.name`: no model known). */
function chunksAdapter(steps: StreamChunk[][]): ModelAdapter {
  let i = 0
  return { async *stream() { yield* steps[i++]! } }
}

async function runLog(model: ModelAdapter, config: Record<string, unknown> = {}): Promise<readonly LogEvent[]> {
  const agent = createAgent({ model, system: 'Be brief.', clock: fakeClock(), ids: counterIds('m'), timers: instantTimers(), tools: [weather, broken], config: config as never })
  agent.followup('What is the weather in Paris?')
  await agent.whenIdle()
  return agent.events
}

const scripted = () => scriptedModel([
  { reasoning: 'need weather', toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }, { id: 'c2', name: 'broken', args: {} }] },
  { text: 'It is 21 °C in Paris.' },
], { info: { name: 'gpt-test' } })

describe('issue 23 item 6: spans to the letter of the GenAI conventions', () => {
  it('P7: every emitted attribute is in the registry of @opentelemetry/semantic-conventions 1.45 (turnlog.* aside), in both generations', async () => {
    const events = await runLog(scripted(), { model: 'gpt-test', temperature: 1, topP: 1 })
    for (const semconv of ['default', 'latest'] as const) {
      for (const span of logToSpans(events, { sessionId: 's', includeContent: true, semconv })) {
        for (const key of Object.keys(span.attributes)) {
          if (key.startsWith('turnlog.')) continue
          expect(REGISTRY.has(key), `${span.name}: ${key}`).toBe(true)
        }
      }
    }
  })

  it('P7: chat spans carry gen_ai.request.stream = true; a model never named is no "model" placeholder (span "chat", no request.model)', async () => {
    const named = logToSpans(await runLog(scripted()), { sessionId: 's' }).filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')
    expect(named.map((s) => s.name)).toEqual(['chat gpt-test', 'chat gpt-test'])
    for (const s of named) expect(s.attributes['gen_ai.request.stream']).toBe(true)
    const anonymous = logToSpans(await runLog(chunksAdapter([[
      { type: 'block-start', index: 0, blockType: 'text' }, { type: 'text-delta', index: 0, text: 'hi' }, { type: 'block-end', index: 0 }, { type: 'finish', reason: 'stop' },
    ]])), { sessionId: 's' }).filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')
    expect(anonymous.map((s) => s.name)).toEqual(['chat'])
    expect(anonymous[0]!.attributes).not.toHaveProperty('gen_ai.request.model')
  })

  it('P7: content attributes follow the conventions\' JSON schemas (role, parts, tool_call with object arguments, finish_reason)', async () => {
    const spans = logToSpans(await runLog(scripted()), { sessionId: 's', includeContent: true })
    const chats = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')
    const turn = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent')!
    const input = JSON.parse(turn.attributes['gen_ai.input.messages'] as string)
    expect(validInput(input), JSON.stringify(validInput.errors)).toBe(true)
    expect(input).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'What is the weather in Paris?' }] }])
    const first = JSON.parse(chats[0]!.attributes['gen_ai.output.messages'] as string)
    expect(validOutput(first), JSON.stringify(validOutput.errors)).toBe(true)
    expect(first).toEqual([{
      role: 'assistant',
      parts: [
        { type: 'reasoning', content: 'need weather' },
        { type: 'tool_call', id: 'c1', name: 'weather', arguments: { city: 'Paris' } },
        { type: 'tool_call', id: 'c2', name: 'broken', arguments: {} },
      ],
      finish_reason: 'tool_call',
    }])
    const second = JSON.parse(chats[1]!.attributes['gen_ai.output.messages'] as string)
    expect(validOutput(second)).toBe(true)
    expect(second[0].finish_reason).toBe('stop')
    const system = JSON.parse(chats[0]!.attributes['gen_ai.system_instructions'] as string)
    expect(validSystem(system)).toBe(true)
  })

  it('P7: gen_ai.tool.call.result only on a successful call', async () => {
    const spans = logToSpans(await runLog(scripted()), { sessionId: 's', includeContent: true })
    const tool = (name: string) => spans.find((s) => s.attributes['gen_ai.tool.name'] === name)!
    expect(tool('weather').attributes['gen_ai.tool.call.result']).toBe('21 °C in Paris')
    expect(tool('broken').attributes).not.toHaveProperty('gen_ai.tool.call.result')
    expect(tool('broken').attributes['error.type']).toBeDefined()
  })

  it('P7: double-typed attributes are doubleValue in OTLP/JSON even when whole (temperature, top_p, time_to_first_chunk)', async () => {
    const events = await runLog(scripted(), { model: 'gpt-test', temperature: 1, topP: 1 })
    const spans = (toOtlpJson(events, { sessionId: 's' }).resourceSpans[0] as any).scopeSpans[0].spans
    const chat = spans.find((s: any) => s.name.startsWith('chat'))
    const attr = (k: string) => chat.attributes.find((a: any) => a.key === k)?.value
    expect(attr('gen_ai.request.temperature')).toEqual({ doubleValue: 1 })
    expect(attr('gen_ai.request.top_p')).toEqual({ doubleValue: 1 })
    expect(Object.keys(attr('gen_ai.response.time_to_first_chunk'))).toEqual(['doubleValue'])
    expect(attr('gen_ai.request.stream')).toEqual({ boolValue: true })
  })

  it('P7: the response id and the model that answered (response-metadata chunks) come out on the chat span', async () => {
    const events = await runLog(chunksAdapter([[
      { type: 'response-metadata', id: 'msg_01', model: 'claude-sonnet-4-5-20250929' },
      { type: 'block-start', index: 0, blockType: 'text' }, { type: 'text-delta', index: 0, text: 'hi' }, { type: 'block-end', index: 0 }, { type: 'finish', reason: 'stop' },
    ]]))
    const chat = logToSpans(events, { sessionId: 's' }).find((s) => s.attributes['gen_ai.operation.name'] === 'chat')!
    expect(chat.attributes['gen_ai.response.id']).toBe('msg_01')
    expect(chat.attributes['gen_ai.response.model']).toBe('claude-sonnet-4-5-20250929')
  })

  it('P7: the provider is recorded in request/header and names the spans without an option (no _OTHER)', async () => {
    const events = await runLog({ ...scripted(), info: { name: 'gpt-test', provider: 'openai' } })
    const header = events.find((e) => e.type === 'request/header')!.data as { provider?: string }
    expect(header.provider).toBe('openai')
    for (const s of logToSpans(events, { sessionId: 's', semconv: 'latest' })) expect(s.attributes['gen_ai.provider.name']).toBe('openai')
  })

  it('P4: a log that recorded its provider re-executes without divergence (the served model carries it)', async () => {
    const events = await runLog({ ...scripted(), info: { name: 'gpt-test', provider: 'openai' } })
    const r = await reexecute({ header: { type: 'session', format: 1, id: 's', createdAt: 0 } as never, events }, { tools: [weather, broken] })
    expect(r).toMatchObject({ ok: true })
  })

  it('P7: a log whose clock steps back gives clamped spans (never an end before a start) in the SDK records and OTLP/JSON', async () => {
    const events = (await runLog(scripted())).map((e) => (e.type === 'turn/end' || e.type === 'assistant/message' ? { ...e, time: e.time - 1_000_000 } : e))
    for (const s of logToSpans(events, { sessionId: 's' })) expect(s.endTime!).toBeGreaterThanOrEqual(s.startTime)
    for (const s of (toOtlpJson(events, { sessionId: 's' }).resourceSpans[0] as any).scopeSpans[0].spans) {
      expect(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano)).toBe(true)
    }
  })
})

describe('issue 23 item 7: the current conventions by default', () => {
  it('P7: gen_ai.provider.name by default; OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai/dup emits both; semconv "v1.36" the old name only', async () => {
    expect(semconvFromEnv({})).toBe('latest')
    expect(semconvFromEnv({ OTEL_SEMCONV_STABILITY_OPT_IN: 'http, gen_ai/dup' })).toBe('dup')
    expect(semconvFromEnv({ OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental' })).toBe('latest')
    const events = await runLog(scripted())
    const [turn] = logToSpans(events, { sessionId: 's', provider: 'openai', semconv: semconvFromEnv({}) })
    expect(turn!.attributes['gen_ai.provider.name']).toBe('openai')
    expect(turn!.attributes).not.toHaveProperty('gen_ai.system')
    const [dup] = logToSpans(events, { sessionId: 's', provider: 'openai', semconv: 'dup' })
    expect(dup!.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gen_ai.system': 'openai' })
    const [old] = logToSpans(events, { sessionId: 's', provider: 'openai', semconv: 'v1.36' })
    expect(old!.attributes['gen_ai.system']).toBe('openai')
    expect(old!.attributes).not.toHaveProperty('gen_ai.provider.name')
  })
})

describe('issue 23 item 6: compaction summary calls', () => {
  it('P7: each compaction summary call is a chat span (child of the open turn) with its usage; a failed one has error.type', () => {
    const ev = (seq: number, type: string, data: unknown) => ({ seq, time: 1000 + seq * 10, type, data }) as LogEvent
    const events = [
      ev(0, 'request/header', { reason: 'initial', config: { model: 'gpt-test' }, system: '', tools: [], provider: 'openai' }),
      ev(1, 'turn/start', { turn: 1 }),
      ev(2, 'compaction/start', { compactionId: 'k1', turn: 1 }),
      ev(3, 'compaction/summary', { compactionId: 'k1', summary: 'short', shadowedSeqs: [], usage: { inputTokens: 900, outputTokens: 40 } }),
      ev(4, 'compaction/end', { compactionId: 'k1' }),
      ev(5, 'compaction/start', { compactionId: 'k2', turn: 1 }),
      ev(6, 'compaction/end', { compactionId: 'k2', error: { code: 'SERVER', message: 'down' } }),
      ev(7, 'turn/end', { turn: 1, reason: { kind: 'completed' } }),
    ]
    const spans = logToSpans(events, { sessionId: 's' })
    const summaries = spans.filter((s) => s.attributes['turnlog.compaction.id'] !== undefined)
    expect(summaries.map((s) => [s.name, s.parentKey, s.startTime, s.endTime, s.status.code])).toEqual([
      ['chat gpt-test', 'turn-1', 1020, 1030, 'unset'],
      ['chat gpt-test', 'turn-1', 1050, 1060, 'error'],
    ])
    expect(summaries[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 900, 'gen_ai.usage.output_tokens': 40, 'gen_ai.provider.name': 'openai' })
    expect(summaries[1]!.attributes['error.type']).toBe('SERVER')
  })
})

describe('issue 23 item 6: retries as linked spans', () => {
  it('P7: a retry turn\'s span and its first chat span link to the failed attempt\'s (logToSpans, OTLP/JSON, the SDK)', async () => {
    const { header, events } = await runDemoSession({ startTime: 1_800_000_000_000, sessionId: 'demo-links' })
    const spans = logToSpans(events, { sessionId: header.id })
    const retry = spans.find((s) => s.attributes['turnlog.turn.retry_of'] !== undefined)!
    expect(retry, 'the demo session has a retry turn').toBeDefined()
    const of = retry.attributes['turnlog.turn.retry_of'] as number
    expect(retry.links).toEqual([{ key: `turn-${of}`, attributes: { 'turnlog.link': 'retry_of' } }])
    const failedChat = spans.filter((s) => s.parentKey === `turn-${of}` && s.attributes['gen_ai.operation.name'] === 'chat').at(-1)!
    expect(failedChat.attributes['error.type']).toBeDefined()
    const firstChat = spans.find((s) => s.parentKey === retry.key && s.attributes['gen_ai.operation.name'] === 'chat')!
    expect(firstChat.links).toEqual([{ key: failedChat.key, attributes: { 'turnlog.link': 'retry_of' } }])
    // spans that are no retry link to nothing
    expect(spans.filter((s) => s.links !== undefined)).toHaveLength(2)
    // OTLP/JSON: the links carry the failed spans' trace and span ids (each turn is its own trace)
    const otlp = (toOtlpJson(events, { sessionId: header.id }).resourceSpans[0] as any).scopeSpans[0].spans as any[]
    const byName = (key: string) => otlp[spans.filter((s) => s.endTime !== undefined).findIndex((s) => s.key === key)]
    expect(byName(retry.key).links).toEqual([{ traceId: byName(`turn-${of}`).traceId, spanId: byName(`turn-${of}`).spanId, attributes: [{ key: 'turnlog.link', value: { stringValue: 'retry_of' } }] }])
    expect(byName(firstChat.key).links[0]).toMatchObject({ traceId: byName(failedChat.key).traceId, spanId: byName(failedChat.key).spanId })
    expect(byName(retry.key).traceId).not.toBe(byName(`turn-${of}`).traceId)
    // the SDK: the link's context is the failed span's
    const exporter = new InMemorySpanExporter()
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('t')
    exportSpans({ header, events }, tracer)
    const done = exporter.getFinishedSpans()
    const sdkRetry = done.find((s) => s.attributes['turnlog.turn.retry_of'] !== undefined)!
    const sdkFailed = done.find((s) => s.attributes['turnlog.turn'] === of && s.name.startsWith('invoke_agent'))!
    expect(sdkRetry.links.map((l) => l.context.spanId)).toEqual([sdkFailed.spanContext().spanId])
    expect(sdkRetry.links[0]!.attributes).toEqual({ 'turnlog.link': 'retry_of' })
  })
})

