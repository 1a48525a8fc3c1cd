/**
 * turnlog/otel: the log → spans mapping (GenAI semantic conventions), live (otelPlugin) and after
 * the fact (exportSpans), through the real SDK (sdk-trace-base's in-memory exporter) and the OTLP/HTTP
 * exporter package to a receiver on 127.0.0.1. P4/P7: the spans are a pure function of the log —
 * a re-executed session and a live run give exactly the spans the export gives.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../tools/index.js'
import { createAgent } from '../../agent/index.js'
import { demoHooks, demoTools, runDemoSession } from '../../cli/demo-session.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { exportSpans, logToSpans, otelPlugin, renderSpanTree, semconvFromEnv, toOtlpJson } from '../../otel/index.js'
import { reexecute } from '../../replay/index.js'
import { readLog } from '../../replay/read-log.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'

const WEATHER = new URL('../../examples/weather.jsonl', import.meta.url).pathname

function sdk() {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  return { exporter, provider, tracer: provider.getTracer('turnlog-test') }
}

const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6

/** Finished SDK spans as comparable records: parent by name path, times in ms. */
function shape(spans: readonly ReadableSpan[]) {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
  const path = (s: ReadableSpan): string => {
    const parent = s.parentSpanContext ? byId.get(s.parentSpanContext.spanId) : undefined
    return parent ? `${path(parent)} > ${s.name}` : s.name
  }
  return spans
    .map((s) => ({
      path: path(s),
      kind: s.kind,
      start: Math.round(ms(s.startTime)),
      end: Math.round(ms(s.endTime)),
      attributes: { ...s.attributes },
      status: s.status.code,
      sameTrace: s.parentSpanContext ? byId.get(s.parentSpanContext.spanId)?.spanContext().traceId === s.spanContext().traceId : true,
    }))
    .sort((a, b) => a.start - b.start || a.path.localeCompare(b.path))
}

describe('spans of examples/weather.jsonl', () => {
  it('P7: the expected tree: invoke_agent > chat scripted (tool_calls), execute_tool weather, chat scripted (stop)', async () => {
    const log = await readLog(WEATHER)
    const spans = logToSpans(log.events, { sessionId: log.header.id, semconv: 'v1.36' })
    expect(renderSpanTree(spans)).toEqual([
      'invoke_agent [internal, 24ms] seq.start=1 seq.end=25',
      '  chat scripted [client, 9ms] request.model="scripted" response.finish_reasons=["tool_calls"] usage.input_tokens=42 usage.output_tokens=9 seq.start=3 seq.end=12',
      '  execute_tool weather [internal, 1ms] tool.call.id="call_1" seq.start=13 seq.end=14',
      '  chat scripted [client, 7ms] request.model="scripted" response.finish_reasons=["stop"] usage.input_tokens=111 usage.output_tokens=7 usage.cache_read.input_tokens=40 seq.start=16 seq.end=23',
    ])
    const chat = spans[1]!
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.conversation.id': 'example-weather',
      'gen_ai.system': '_OTHER',
      'gen_ai.request.stream': true,
      'gen_ai.response.time_to_first_chunk': 0.001,
      'turnlog.turn': 1,
      'turnlog.step': 1,
    })
    expect(chat.kind).toBe('client')
    expect(spans[2]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'weather', 'gen_ai.tool.type': 'function' })
    // content is off by default
    expect(spans.some((s) => Object.keys(s.attributes).some((k) => /messages|arguments|result|instructions/.test(k)))).toBe(false)
  })

  it('exportSpans through the SDK gives the same tree (in-memory exporter), one trace per turn, times from the log', async () => {
    const log = await readLog(WEATHER)
    const { exporter, tracer } = sdk()
    expect(exportSpans(log, tracer, { provider: 'openai', semconv: 'latest' })).toBe(4)
    const got = shape(exporter.getFinishedSpans())
    expect(got.map((s) => [s.path, s.kind, s.start - 1764450000000, s.end - 1764450000000])).toEqual([
      ['invoke_agent', 0, 1, 25],
      ['invoke_agent > chat scripted', 2, 3, 12],
      ['invoke_agent > execute_tool weather', 0, 13, 14],
      ['invoke_agent > chat scripted', 2, 16, 23],
    ])
    expect(got.every((s) => s.sameTrace)).toBe(true)
    // the opt-in names: gen_ai.provider.name instead of gen_ai.system
    expect(got[1]!.attributes['gen_ai.provider.name']).toBe('openai')
    expect(got[1]!.attributes['gen_ai.system']).toBeUndefined()
  })

  it('includeContent: system instructions, output messages, tool arguments and result, turn input', async () => {
    const log = await readLog(WEATHER)
    const spans = logToSpans(log.events, { sessionId: 's', includeContent: true })
    // the conventions' JSON schema shape since issue 23: {role, parts: [{type, content}]}
    expect(JSON.parse(spans[0]!.attributes['gen_ai.input.messages'] as string)[0].parts[0].content).toBe('What is the weather in Paris?')
    expect(spans[1]!.attributes['gen_ai.system_instructions']).toBe(JSON.stringify([{ type: 'text', content: 'You are a helpful assistant.' }]))
    expect(spans[2]!.attributes['gen_ai.tool.call.arguments']).toBe('{"city":"Paris"}')
    expect(JSON.parse(spans[3]!.attributes['gen_ai.output.messages'] as string)[0].parts[0].content).toBe('It is 21 °C in Paris.')
  })

  it('OTEL_SEMCONV_STABILITY_OPT_IN: the latest names by default since issue 23, gen_ai/dup for both', () => {
    expect(semconvFromEnv({ OTEL_SEMCONV_STABILITY_OPT_IN: 'http, gen_ai_latest_experimental' })).toBe('latest')
    expect(semconvFromEnv({ OTEL_SEMCONV_STABILITY_OPT_IN: 'http' })).toBe('latest')
    expect(semconvFromEnv({ OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai/dup' })).toBe('dup')
    expect(semconvFromEnv({})).toBe('latest')
  })
})

describe('spans of the demo session', () => {
  it('P4: a re-execution with otelPlugin gives exactly the spans exportSpans gives for the recorded log', async () => {
    const { header, events } = await runDemoSession({ startTime: 1_800_000_000_000, sessionId: 'demo-otel' })
    const exported = sdk()
    exportSpans({ header, events }, exported.tracer, { provider: 'scripted' })
    const live = sdk()
    const r = await reexecute({ header, events }, { tools: demoTools(), hooks: demoHooks, plugins: () => [otelPlugin(live.tracer, { provider: 'scripted', conversationId: header.id })] })
    expect(r).toMatchObject({ ok: true })
    expect(shape(live.exporter.getFinishedSpans())).toEqual(shape(exported.exporter.getFinishedSpans()))
    const tree = renderSpanTree(logToSpans(events, { sessionId: header.id }))
    expect(tree).toMatchSnapshot()
    // the failed step (rate limit) is an error span; its retry turn is its own invoke_agent
    const failed = exported.exporter.getFinishedSpans().filter((s) => s.attributes['error.type'] !== undefined)
    expect(failed.map((s) => s.name)).toContain('chat scripted-demo')
  })

  it('live: an agent with otelPlugin emits, as it runs, the spans exportSpans gives for its log', async () => {
    const live = sdk()
    const agent = createAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }, { text: 'done' }], { info: { name: 'm' } }),
      tools: [defineTool({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text })],
      system: 'sys',
      sessionId: 'live-1',
      clock: fakeClock(),
      ids: counterIds('m'),
      timers: instantTimers(),
      plugins: [otelPlugin(live.tracer)],
    })
    agent.followup('go')
    await agent.whenIdle()
    const names = live.exporter.getFinishedSpans().map((s) => s.name)
    expect(names).toEqual(['chat m', 'execute_tool echo', 'chat m', 'invoke_agent'])
    const exported = sdk()
    exportSpans({ sessionId: 'live-1', events: agent.events }, exported.tracer)
    expect(shape(live.exporter.getFinishedSpans())).toEqual(shape(exported.exporter.getFinishedSpans()))
    await agent.dispose()
  })
})

describe('OTLP', () => {
  it('the OTLP/HTTP exporter package delivers the spans to a receiver on 127.0.0.1', async () => {
    const bodies: any[] = []
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (d) => (body += d))
      req.on('end', () => {
        bodies.push({ url: req.url, type: req.headers['content-type'], body: JSON.parse(body) })
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url }))] })
      const log = await readLog(WEATHER)
      exportSpans(log, provider.getTracer('turnlog'))
      await provider.forceFlush()
      await provider.shutdown()
      const spans = bodies.flatMap((b) => b.body.resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans)))
      expect(bodies.every((b) => b.url === '/v1/traces' && String(b.type).includes('json'))).toBe(true)
      expect(spans.map((s: any) => s.name).sort()).toEqual(['chat scripted', 'chat scripted', 'execute_tool weather', 'invoke_agent'])
      const chat = spans.find((s: any) => s.name === 'chat scripted')
      expect(chat.attributes).toContainEqual({ key: 'gen_ai.conversation.id', value: { stringValue: 'example-weather' } })
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('toOtlpJson: deterministic ids, parents, nanosecond times, typed attribute values', async () => {
    const log = await readLog(WEATHER)
    const a = toOtlpJson(log.events, { sessionId: log.header.id })
    const b = toOtlpJson(log.events, { sessionId: log.header.id })
    expect(a).toEqual(b)
    const spans = (a.resourceSpans[0] as any).scopeSpans[0].spans
    expect(spans).toHaveLength(4)
    const [turn, chat] = spans
    expect(chat.parentSpanId).toBe(turn.spanId)
    expect(chat.traceId).toBe(turn.traceId)
    expect(turn.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(chat.kind).toBe(3)
    expect(chat.startTimeUnixNano).toBe('1764450000003000000')
    expect(chat.attributes).toContainEqual({ key: 'gen_ai.usage.input_tokens', value: { intValue: '42' } })
    expect(chat.attributes).toContainEqual({ key: 'gen_ai.response.finish_reasons', value: { arrayValue: { values: [{ stringValue: 'tool_calls' }] } } })
  })

  it('a log cut mid-turn: open spans are left out, the rest still maps', () => {
    const events = readFileSync(WEATHER, 'utf8').split('\n').slice(1, 16).map((l) => JSON.parse(l) as LogEvent)
    const spans = logToSpans(events, { sessionId: 'cut' })
    expect(spans.map((s) => [s.name, s.endTime !== undefined])).toEqual([
      ['invoke_agent', false], ['chat scripted', true], ['execute_tool weather', true],
    ])
    expect((toOtlpJson(events, { sessionId: 'cut' }).resourceSpans[0] as any).scopeSpans[0].spans).toHaveLength(2)
  })
})
