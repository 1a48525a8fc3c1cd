/**
 * What asking a provider for raw chunks costs `fromAiSdk` (issue 23 item 4). B5 itself does not go
 * through `fromAiSdk` (its turnlog loop streams from its own scripted adapter, its AI SDK peer
 * from a mock model, and a mock model has no raw chunks to give), so B5's figure cannot move with
 * `includeRawChunks`; this measures the part that can: one model call through `fromAiSdk` over a
 * real provider package (`@ai-sdk/openai-compatible`, `@ai-sdk/anthropic`), its recorded stream
 * served from memory by an injected `fetch`, with raw chunks asked for and not. The "off" case
 * wraps the model so that the call options reach the provider without `includeRawChunks`.
 *
 * Run: `npx tsx bench/b5-raw-chunks.ts` (knobs: RAW_CALLS, default 1,500 per case after 300 of
 * warm-up; RAW_ROUNDS, default 3, the cases alternating within a round). Prints one JSON line.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { fromAiSdk } from '../models/ai-sdk/index.js'
import type { ModelRequest } from '../models/types.js'
import { envInt, median, round } from './common.js'

const STREAMS = join(import.meta.dirname, '..', 'test', 'fixtures', 'streams', 'vercel-ai')

/** The SSE body of a vercel/ai `.chunks.txt` recording (Anthropic framing with `event:` lines). */
function sseBody(file: string, anthropic: boolean): string {
  const lines = readFileSync(join(STREAMS, file), 'utf8').split('\n').filter((l) => l.trim() !== '')
  if (anthropic) return lines.map((l) => `event: ${(JSON.parse(l) as { type: string }).type}\ndata: ${l}\n\n`).join('')
  return [...lines.map((l) => `data: ${l}\n\n`), 'data: [DONE]\n\n'].join('')
}

const fetchOf = (body: string): typeof fetch => async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } })

/** The same model, with `includeRawChunks` removed from every call's options. */
function withoutRaw(model: LanguageModelV3): LanguageModelV3 {
  return new Proxy(model, {
    get(target, key, receiver) {
      if (key === 'doStream') return (o: Parameters<LanguageModelV3['doStream']>[0]) => target.doStream({ ...o, includeRawChunks: false })
      return Reflect.get(target, key, receiver) as unknown
    },
  })
}

const request: ModelRequest = {
  messages: [{ id: 'm1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
  system: 'You are terse.',
  tools: [],
  config: { model: 'm' },
}

interface Case { name: string; model: LanguageModelV3; parts: number }

function cases(): Case[] {
  const oa = sseBody('openai--openai-text.chunks.txt', false)
  const an = sseBody('anthropic--anthropic-text.chunks.txt', true)
  const openai = createOpenAICompatible({ name: 'openai', baseURL: 'http://bench.invalid/v1', apiKey: 'k', fetch: fetchOf(oa) })('gpt-4o')
  const anthropic = createAnthropic({ baseURL: 'http://bench.invalid/v1', apiKey: 'k', fetch: fetchOf(an) })('claude-sonnet-4-5')
  return [
    { name: 'openai-compatible', model: openai, parts: oa.split('\n\n').length - 1 },
    { name: 'anthropic', model: anthropic, parts: an.split('\n\n').length - 1 },
  ]
}

async function oneCall(model: LanguageModelV3): Promise<number> {
  let n = 0
  for await (const _ of fromAiSdk(model).stream(request, new AbortController().signal)) n++
  return n
}

async function timeCalls(model: LanguageModelV3, calls: number): Promise<number> {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) await oneCall(model)
  return Number(process.hrtime.bigint() - t0) / 1000 / calls
}

export async function benchRawChunks(): Promise<Record<string, unknown>> {
  const calls = envInt('RAW_CALLS', 1500)
  const rounds = envInt('RAW_ROUNDS', 3)
  const out: Record<string, unknown> = {}
  for (const c of cases()) {
    const off = withoutRaw(c.model)
    const chunksOn = await oneCall(c.model)
    const chunksOff = await oneCall(off)
    if (chunksOn !== chunksOff) throw new Error(`${c.name}: raw chunks changed the logged chunks (${chunksOn} vs ${chunksOff})`)
    await timeCalls(c.model, 300)
    await timeCalls(off, 300)
    const on: number[] = []
    const no: number[] = []
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) { on.push(await timeCalls(c.model, calls)); no.push(await timeCalls(off, calls)) } else { no.push(await timeCalls(off, calls)); on.push(await timeCalls(c.model, calls)) }
    }
    out[c.name] = {
      sseEvents: c.parts, loggedChunks: chunksOn,
      usPerCallRaw: round(median(on)), usPerCallNoRaw: round(median(no)), ratio: round(median(on) / median(no)),
      runsRaw: on.map(round), runsNoRaw: no.map(round),
    }
  }
  return { node: process.version, callsPerRun: calls, rounds, cases: out }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchRawChunks()))
}
