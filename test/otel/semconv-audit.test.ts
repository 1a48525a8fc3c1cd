/**
 * Issue 23 item 6, checked to the issue's words where semconv.test.ts checks less (round 14 audit):
 * every content attribute of every span (also with provider output: provider-executed calls and
 * their results, files, sources, a refusal) validates against the conventions' JSON schemas;
 * `gen_ai.request.stream` on every chat span, the compaction summary's too; a log whose clock steps
 * back gives the same clamped spans through the OpenTelemetry SDK as in OTLP/JSON; and the CLI
 * export names the provider the log recorded instead of `_OTHER`.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import * as incubating from '@opentelemetry/semantic-conventions/incubating'
import * as stable from '@opentelemetry/semantic-conventions'
import { Ajv } from 'ajv'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import type { LogEvent, StreamChunk } from '../../events/index.js'
import type { ModelAdapter } from '../../models/types.js'
import { exportSpans, logToSpans, toOtlpJson } from '../../otel/index.js'
import { defineTool } from '../../tools/index.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { runDemoSession } from '../../cli/demo-session.js'
import { cli, ROOT, tempDir } from '../cli/helpers.js'

/** Every attribute name @opentelemetry/semantic-conventions 1.45 exports (stable and incubating `ATTR_*`). */
const REGISTRY = new Set(Object.entries({ ...stable, ...incubating }).filter(([k, v]) => k.startsWith('ATTR_') && typeof v === 'string').map(([, v]) => v as string))

const SCHEMAS = new URL('../fixtures/semconv/', import.meta.url).pathname
const schema = (name: string) => JSON.parse(readFileSync(SCHEMAS + name, 'utf8')) as object
const ajv = new Ajv({ strict: false })
const VALIDATORS = {
  'gen_ai.input.messages': ajv.compile(schema('gen-ai-input-messages.json')),
  'gen_ai.output.messages': ajv.compile(schema('gen-ai-output-messages.json')),
  'gen_ai.system_instructions': ajv.compile(schema('gen-ai-system-instructions.json')),
} as const

const weather = defineTool({ name: 'weather', description: 'weather', parameters: z.object({ city: z.string() }), execute: ({ city }) => `21 °C in ${city}` })
const broken = defineTool({ name: 'broken', description: 'fails', parameters: z.object({}), execute: () => { throw new Error('no') } })

/** An adapter that yields the given chunk lists, one per request. */
function chunksAdapter(steps: StreamChunk[][], info = { name: 'claude-test', provider: 'anthropic' }): ModelAdapter {
  let i = 0
  return { info, async *stream() { yield* steps[i++]! } }
}

const text = (index: number, t: string): StreamChunk[] => [
  { type: 'block-start', index, blockType: 'text' }, { type: 'text-delta', index, text: t }, { type: 'block-end', index },
]

/** A run with everything a provider streams: reasoning with provider data, a server call and its result, a source, a file, function calls (one failing), then a refusal. */
async function providerLog(): Promise<readonly LogEvent[]> {
  const model = chunksAdapter([
    [
      { type: 'response-metadata', id: 'msg_1', model: 'claude-test-2025' },
      { type: 'block-start', index: 0, blockType: 'reasoning' }, { type: 'reasoning-delta', index: 0, text: 'search first' },
      { type: 'block-end', index: 0, providerData: { anthropic: { signature: 'sig' } } },
      { type: 'block', index: 1, block: { type: 'tool-call', id: 'srv1', name: 'web_search', arguments: '{"query":"paris weather"}', providerExecuted: true } },
      { type: 'block', index: 2, block: { type: 'tool-result', id: 'srv1', name: 'web_search', result: [{ url: 'https://example.com/w', title: 'W' }] } },
      { type: 'block', index: 3, block: { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com/w', title: 'W' } },
      { type: 'block', index: 4, block: { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
      ...text(5, 'Checking.'),
      { type: 'block-start', index: 6, blockType: 'tool-call' }, { type: 'tool-call-delta', index: 6, id: 'c1', name: 'weather', argumentsDelta: '{"city":"Paris"}' }, { type: 'block-end', index: 6 },
      { type: 'block-start', index: 7, blockType: 'tool-call' }, { type: 'tool-call-delta', index: 7, id: 'c2', name: 'broken', argumentsDelta: '{}' }, { type: 'block-end', index: 7 },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 3 } },
      { type: 'finish', reason: 'tool-calls' },
    ],
    [...text(0, 'I cannot help with that.'), { type: 'finish', reason: 'refusal' }],
  ])
  const agent = createAgent({ model, system: 'Be brief.', clock: fakeClock(), ids: counterIds('m'), timers: instantTimers(), tools: [weather, broken] })
  agent.followup('What is the weather in Paris?')
  await agent.whenIdle()
  return agent.events
}

describe('issue 23 item 6 (audit): content attributes, stream flag, clamped SDK spans, provider in CLI exports', () => {
  it('P7: every content attribute of every span validates against the conventions\' JSON schemas, provider output included', async () => {
    const spans = logToSpans(await providerLog(), { sessionId: 's', includeContent: true })
    let checked = 0
    for (const span of spans) {
      for (const [key, valid] of Object.entries(VALIDATORS)) {
        const v = span.attributes[key]
        if (v === undefined) continue
        checked++
        const doc = JSON.parse(v as string)
        expect(valid(doc), `${span.name} ${key}: ${JSON.stringify(valid.errors)} in ${v as string}`).toBe(true)
      }
    }
    expect(checked).toBeGreaterThanOrEqual(5) // the turn's input, each chat span's output and system instructions
    const outputs = spans.filter((s) => s.attributes['gen_ai.output.messages'] !== undefined).map((s) => JSON.parse(s.attributes['gen_ai.output.messages'] as string))
    expect(outputs[0][0].parts.map((p: { type: string }) => p.type)).toEqual(['reasoning', 'server_tool_call', 'server_tool_call_response', 'blob', 'text', 'tool_call', 'tool_call'])
    expect(outputs[1][0].finish_reason).toBe('content_filter')
  })

  it('P7: every attribute emitted for provider output, retries (the demo session) and compaction is in the 1.45 registry (turnlog.* aside), in every generation', async () => {
    const demo = await runDemoSession({ startTime: 1_800_000_000_000, sessionId: 'demo-audit' })
    let n = 0
    for (const events of [await providerLog(), demo.events]) {
      for (const semconv of ['latest', 'dup', 'v1.36'] as const) {
        for (const span of logToSpans(events, { sessionId: 's', includeContent: true, semconv, agentName: 'audit' })) {
          for (const key of Object.keys(span.attributes)) {
            if (key.startsWith('turnlog.')) continue
            n++
            expect(REGISTRY.has(key), `${span.name}: ${key}`).toBe(true)
          }
          for (const link of span.links ?? []) for (const key of Object.keys(link.attributes ?? {})) expect(key.startsWith('turnlog.') || REGISTRY.has(key), key).toBe(true)
        }
      }
    }
    expect(n).toBeGreaterThan(100)
  })

  it('P7: gen_ai.request.stream = true on every chat span, the compaction summary call\'s included', () => {
    const ev = (seq: number, type: string, data: unknown) => ({ seq, time: 1000 + seq * 10, type, data }) as LogEvent
    const events = [
      ev(0, 'request/header', { reason: 'initial', config: { model: 'gpt-test' }, system: '', tools: [], provider: 'openai' }),
      ev(1, 'turn/start', { turn: 1 }),
      ev(2, 'compaction/start', { compactionId: 'k1', turn: 1 }),
      ev(3, 'compaction/summary', { compactionId: 'k1', summary: 'short', shadowedSeqs: [], usage: { inputTokens: 900, outputTokens: 40 } }),
      ev(4, 'compaction/end', { compactionId: 'k1' }),
      ev(5, 'turn/end', { turn: 1, reason: { kind: 'completed' } }),
    ]
    const chats = logToSpans(events, { sessionId: 's' }).filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')
    expect(chats).toHaveLength(1)
    for (const s of chats) expect(s.attributes['gen_ai.request.stream'], s.name).toBe(true)
  })

  it('P7: a log whose clock steps back gives the same clamped spans through the OpenTelemetry SDK as in OTLP/JSON (never an end before a start)', async () => {
    const events = (await providerLog()).map((e) => (e.type === 'turn/end' || e.type === 'assistant/message' || e.type === 'tool/result' ? { ...e, time: e.time - 1_000_000 } : e))
    const exporter = new InMemorySpanExporter()
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('t')
    exportSpans({ header: { type: 'session', format: 1, id: 's', createdAt: 0 } as never, events }, tracer)
    const ns = (t: [number, number]) => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1])
    const sdk = exporter.getFinishedSpans().map((s) => ({ name: s.name, start: ns(s.startTime), end: ns(s.endTime) }))
    const otlp = ((toOtlpJson(events, { sessionId: 's' }).resourceSpans[0] as any).scopeSpans[0].spans as any[])
      .map((s) => ({ name: s.name as string, start: BigInt(s.startTimeUnixNano), end: BigInt(s.endTimeUnixNano) }))
    for (const s of sdk) expect(s.end >= s.start, `${s.name} ends before it starts`).toBe(true)
    const key = (s: { name: string; start: bigint; end: bigint }) => `${s.name} ${s.start} ${s.end}`
    expect(sdk.map(key).sort()).toEqual(otlp.map(key).sort())
  })

  it('P7: turnlog export names the provider the log recorded (request/header), never _OTHER', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const lines = readFileSync(join(ROOT, 'examples/weather.jsonl'), 'utf8').split('\n').filter((l) => l !== '')
      const withProvider = lines.map((l) => {
        const e = JSON.parse(l) as { type: string; data?: Record<string, unknown> }
        if (e.type === 'request/header') e.data = { ...e.data, provider: 'anthropic' }
        return JSON.stringify(e)
      })
      const log = join(dir, 'anthropic.jsonl')
      writeFileSync(log, withProvider.join('\n') + '\n')
      const r = await cli(['export', log, '--format', 'otlp-json'])
      expect(r.code, r.stderr).toBe(0)
      const spans = JSON.parse(r.stdout).resourceSpans[0].scopeSpans[0].spans as Array<{ name: string; attributes: Array<{ key: string; value: { stringValue?: string } }> }>
      const providers = spans.map((s) => s.attributes.find((a) => a.key === 'gen_ai.provider.name')?.value.stringValue)
      expect(providers).toEqual(spans.map(() => 'anthropic'))
      expect(r.stdout).not.toContain('_OTHER')
    } finally {
      cleanup()
    }
  })
})
