/**
 * Issue 33 item 2: the bridge on AI SDK 7 (specification v4) beyond the recorded streams
 * (ai-sdk-v4-streams.test.ts):
 *
 * - every stream part type the v4 specification declares has a case in the translator: the list
 *   is read from `@ai-sdk/provider` 4's own `LanguageModelV4StreamPart` (by the TypeScript
 *   checker, at run time) and compared with `PART_TYPES`; the type-level check below fails
 *   `tsc` too;
 * - the parts new in v4 that no recording has (`file` with tagged data, `reasoning-file`, a
 *   preliminary tool result, `ping`, `interrupted`) come out as `streamText` (ai@7) has them, and
 *   what the next request sends back (`custom`, `reasoning-file`, files) is what `streamText` sends;
 * - Claude's extended thinking with a tool call round-trips through `@ai-sdk/anthropic` 4.
 */
import { dirname, join } from 'node:path'
import { createRequire } from 'node:module'
import ts from 'typescript'
import type { LanguageModelV4, LanguageModelV4StreamPart } from 'ai-sdk-provider4'
import { createAnthropic } from 'ai-sdk-anthropic4'
import { createOpenAICompatible } from 'ai-sdk-openai-compatible3'
import { jsonSchema, stepCountIs, streamText, tool } from 'ai7'
import { MockLanguageModelV4, simulateReadableStream } from 'ai7/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import type { AssistantMessage } from '../../events/index.js'
import { fromAiSdk, type AiSdkLanguageModel } from '../../models/ai-sdk/index.js'
import { PART_TYPES, type PartType } from '../../models/ai-sdk/stream.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/index.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { startFixtureServer, type FixtureServer } from './fixture-server.js'
import { runChecked } from './helpers.js'

// type level: a v4 part type missing from PART_TYPES (or one PART_TYPES has that v4 lacks) fails tsc
type Missing = Exclude<LanguageModelV4StreamPart['type'], PartType>
type Extra = Exclude<PartType, LanguageModelV4StreamPart['type']>
const everyV4PartHandled: [Missing, Extra] extends [never, never] ? true : { missing: Missing; extra: Extra } = true
// a v4 model is what fromAiSdk takes, without casts
const acceptsV4 = (m: LanguageModelV4): AiSdkLanguageModel => m

/** The string literals of `LanguageModelV4StreamPart['type']`, as the provider package declares them. */
function declaredV4PartTypes(): string[] {
  const require = createRequire(import.meta.url)
  const dts = join(dirname(require.resolve('ai-sdk-provider4/package.json')), 'dist', 'index.d.ts')
  const probe = join(dirname(dts), '__turnlog_probe__.ts')
  const source = `import type { LanguageModelV4StreamPart } from './index.js'\nexport type T = LanguageModelV4StreamPart['type']\n`
  const options: ts.CompilerOptions = { strict: true, noEmit: true, skipLibCheck: true, types: [], module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }
  const host = ts.createCompilerHost(options)
  const readFile = host.readFile.bind(host)
  const fileExists = host.fileExists.bind(host)
  host.readFile = (f) => (f === probe ? source : readFile(f))
  host.fileExists = (f) => f === probe || fileExists(f)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (f, lang) => (f === probe ? ts.createSourceFile(f, source, lang) : getSourceFile(f, lang))
  const program = ts.createProgram([probe], options, host)
  const checker = program.getTypeChecker()
  const file = program.getSourceFile(probe)!
  const alias = file.statements.find(ts.isTypeAliasDeclaration)!
  const type = checker.getTypeAtLocation(alias.name)
  const members = type.isUnion() ? type.types : [type]
  return members.map((t) => (t.isStringLiteral() ? t.value : `<non-literal ${checker.typeToString(t)}>`)).sort()
}

describe('issue 33 item 2: every v4 stream part type has handling', () => {
  it('L9: the part types @ai-sdk/provider 4 declares are exactly PART_TYPES', () => {
    expect(everyV4PartHandled).toBe(true)
    expect(typeof acceptsV4).toBe('function')
    const declared = declaredV4PartTypes()
    expect(declared.length).toBeGreaterThanOrEqual(20)
    expect(declared).toEqual([...PART_TYPES].sort())
  })
})

const PNG = 'iVBORw0KGgo='
/** One v4 response with every part new in v4 that no recording has, then a tool call. */
function firstResponse(): LanguageModelV4StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'ping' },
    { type: 'custom', kind: 'acme.checkpoint', providerMetadata: { acme: { token: 'c1' } } },
    { type: 'reasoning-start', id: 'r' },
    { type: 'reasoning-delta', id: 'r', delta: 'draw first' },
    { type: 'reasoning-end', id: 'r', providerMetadata: { acme: { signature: 's1' } } },
    { type: 'reasoning-file', mediaType: 'image/png', data: { type: 'data', data: PNG }, providerMetadata: { acme: { sketch: true } } },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'Here it is.' },
    { type: 'text-end', id: 't', citations: [{ source: { type: 'source', sourceType: 'url', id: 'src1', url: 'https://example.com/a' }, startIndex: 0, endIndex: 4 }] },
    { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG } },
    { type: 'tool-call', toolCallId: 'p1', toolName: 'render', input: '{}', providerExecuted: true },
    { type: 'tool-result', toolCallId: 'p1', toolName: 'render', result: { progress: 50 }, preliminary: true },
    { type: 'tool-result', toolCallId: 'p1', toolName: 'render', result: { done: true } },
    { type: 'tool-input-start', id: 'c1', toolName: 'get_weather' },
    { type: 'tool-input-delta', id: 'c1', delta: '{"city":"Paris"}' },
    { type: 'tool-input-end', id: 'c1' },
    { type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: '{"city":"Paris"}' },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 7, text: 5, reasoning: 2 } } },
  ]
}
const SECOND: LanguageModelV4StreamPart[] = [
  { type: 'text-start', id: 't2' },
  { type: 'text-delta', id: 't2', delta: 'Sunny.' },
  { type: 'text-end', id: 't2' },
  { type: 'finish', finishReason: { unified: 'stop', raw: 'end_turn' }, usage: { inputTokens: { total: 20, noCache: 20, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } } },
]

function mock(): MockLanguageModelV4 {
  let n = 0
  return new MockLanguageModelV4({
    doStream: async () => ({ stream: simulateReadableStream({ chunks: n++ === 0 ? firstResponse() : SECOND }) }),
  })
}

describe('issue 33 item 2: the parts new in v4, beside ai@7 streamText', () => {
  it('L9 R3: custom, reasoning-file, file, citations, the final (not the preliminary) provider result, ping: logged as streamText keeps them, and sent back as it sends them', async () => {
    const reference = mock()
    const result = streamText({
      model: reference,
      prompt: 'draw the weather',
      system: 'You are terse.',
      tools: { get_weather: tool({ description: 'weather for a city', inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }), execute: async () => 'sunny' }) },
      stopWhen: stepCountIs(2),
    })
    await result.consumeStream()
    const steps = await result.steps
    const content = steps[0]!.content as Array<Record<string, any>>

    const ours = mock()
    const agent = createAgent({
      model: fromAiSdk(ours),
      system: 'You are terse.',
      clock: fakeClock(),
      ids: counterIds('m'),
      timers: instantTimers(),
      checkRequests: 'full',
      tools: [defineTool({ name: 'get_weather', description: 'weather for a city', parameters: z.object({ city: z.string() }), execute: () => 'sunny' })],
    })
    agent.followup('draw the weather')
    await agent.whenIdle()
    const message = (agent.events.find((e) => e.type === 'assistant/message')!.data as { message: AssistantMessage }).message

    // what the log keeps, in stream order, beside what streamText keeps
    expect(message.content).toEqual([
      { type: 'custom', kind: 'acme.checkpoint', providerData: { acme: { token: 'c1' } } },
      { type: 'reasoning', text: 'draw first', providerData: { acme: { signature: 's1' } } },
      { type: 'file', mediaType: 'image/png', data: PNG, reasoning: true, providerData: { acme: { sketch: true } } },
      { type: 'text', text: 'Here it is.', citations: [{ source: { type: 'source', sourceType: 'url', id: 'src1', url: 'https://example.com/a' }, startIndex: 0, endIndex: 4 }] },
      { type: 'file', mediaType: 'image/png', data: PNG },
      { type: 'tool-call', id: 'p1', name: 'render', arguments: '{}', providerExecuted: true },
      { type: 'tool-result', id: 'p1', name: 'render', result: { done: true } },
      { type: 'tool-call', id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ])
    expect(content.map((p) => p.type)).toEqual(['custom', 'reasoning', 'reasoning-file', 'text', 'file', 'tool-call', 'tool-result', 'tool-call', 'tool-result'])
    expect(content[0]).toMatchObject({ kind: 'acme.checkpoint', providerMetadata: { acme: { token: 'c1' } } })
    expect(content[2]!.file.base64).toBe(PNG)
    expect(content[3]!.citations).toEqual(message.content[3]!.type === 'text' ? message.content[3]!.citations : undefined)
    expect(content[6]!.output).toEqual({ done: true })

    // the second request: the same prompt, custom content and reasoning file included
    expect(reference.doStreamCalls).toHaveLength(2)
    expect(ours.doStreamCalls).toHaveLength(2)
    const norm = (p: unknown) => JSON.parse(JSON.stringify(p))
    expect(norm(ours.doStreamCalls[1]!.prompt)).toEqual(norm(reference.doStreamCalls[1]!.prompt))
    expect(verify(agent.events).violations).toEqual([])
    await agent.dispose()
  })

  it('L9: a file given by URL is logged as a url; an interrupted stream is a TRANSPORT failure (retried), not an answer', async () => {
    const withUrl = new MockLanguageModelV4({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'file', mediaType: 'image/png', data: { type: 'url', url: new URL('https://files.example.com/x.png') } },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } } },
          ] satisfies LanguageModelV4StreamPart[],
        }),
      }),
    })
    const { outcome } = await runChecked(fromAiSdk(withUrl))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.message.content).toEqual([{ type: 'file', mediaType: 'image/png', url: 'https://files.example.com/x.png' }])

    const interrupted = new MockLanguageModelV4({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'Half an ans' },
            { type: 'finish', finishReason: { unified: 'interrupted', raw: undefined }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 3, text: 3, reasoning: 0 } } },
          ] satisfies LanguageModelV4StreamPart[],
        }),
      }),
    })
    const cut = await runChecked(fromAiSdk(interrupted))
    expect(cut.outcome.kind === 'failure' && cut.outcome.failure.code).toBe('TRANSPORT')
  })

  it('L9: a custom tool\'s raw-text input (inputEncoding text) is not taken for JSON arguments; the tool-call part\'s input is', async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'tool-input-start', id: 'c', toolName: 'write_sql', inputEncoding: 'text' },
            { type: 'tool-input-delta', id: 'c', delta: 'SELECT 1' },
            { type: 'tool-input-end', id: 'c' },
            { type: 'tool-call', toolCallId: 'c', toolName: 'write_sql', input: '"SELECT 1"' },
            { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 3, text: 3, reasoning: 0 } } },
          ] satisfies LanguageModelV4StreamPart[],
        }),
      }),
    })
    const { outcome } = await runChecked(fromAiSdk(model))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.message.content).toEqual([{ type: 'tool-call', id: 'c', name: 'write_sql', arguments: '"SELECT 1"' }])
  })
})

// --- Claude's extended thinking with a tool, through @ai-sdk/anthropic 4 ----------------------------

let server: FixtureServer
beforeAll(async () => {
  server = await startFixtureServer()
})
afterAll(async () => {
  await server.close()
})

function sequenceFetch(files: readonly string[]): { fetch: typeof fetch; bodies: any[] } {
  const bodies: any[] = []
  const f: typeof fetch = async (input, init) => {
    const n = bodies.length
    bodies.push(typeof init?.body === 'string' ? JSON.parse(init.body) : undefined)
    const file = files[Math.min(n, files.length - 1)]!
    return fetch(server.url(file) + new URL(String(input)).pathname, init)
  }
  return { fetch: f, bodies }
}

const THINKING = { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } } as const
const TWO_STEPS = ['turnlog/anthropic--thinking-redacted-tool.chunks.txt', 'vercel-ai/anthropic--anthropic-text.chunks.txt']

describe('issue 38 item 29: a refusal through v4 follows the rule of v2 and v3', () => {
  it('L9 R3 the recorded gpt-4o refusal through @ai-sdk/openai-compatible 3 (v4): the refusal text, finish refusal', async () => {
    const model = createOpenAICompatible({ name: 'fixture', baseURL: server.url('openai-python/gpt-4o-refusal.sse'), apiKey: 'k', includeUsage: true })('gpt-4o')
    const { outcome } = await runChecked(fromAiSdk(model))
    if (outcome.kind !== 'success') throw new Error(JSON.stringify(outcome.failure))
    expect(outcome.message.content).toEqual([{ type: 'text', text: "I'm sorry, I can't assist with that request." }])
    expect(outcome.finish).toBe('refusal')
  })
})

describe('issue 33 item 2: Claude thinking with tools round-trips through @ai-sdk/anthropic 4 (v4)', () => {
  it('R3: the second request sends the assistant turn exactly as ai@7 streamText does: thinking (signed), redacted_thinking, tool_use', async () => {
    const ref = sequenceFetch(TWO_STEPS)
    const result = streamText({
      model: createAnthropic({ baseURL: 'http://fixture.invalid/v1', apiKey: 'k', fetch: ref.fetch })('claude-sonnet-4-5'),
      system: 'You are terse.',
      prompt: 'What is the weather in Paris?',
      providerOptions: THINKING,
      tools: { get_weather: tool({ description: 'weather for a city', inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }), execute: async () => 'sunny' }) },
      stopWhen: stepCountIs(2),
    })
    await result.consumeStream()
    expect(ref.bodies).toHaveLength(2)

    const mine = sequenceFetch(TWO_STEPS)
    const agent = createAgent({
      model: fromAiSdk(createAnthropic({ baseURL: 'http://fixture.invalid/v1', apiKey: 'k', fetch: mine.fetch })('claude-sonnet-4-5'), { providerOptions: THINKING }),
      system: 'You are terse.',
      clock: fakeClock(),
      ids: counterIds('m'),
      timers: instantTimers(),
      checkRequests: 'full',
      tools: [defineTool({ name: 'get_weather', description: 'weather for a city', parameters: z.object({ city: z.string() }), execute: () => 'sunny' })],
    })
    agent.followup('What is the weather in Paris?')
    await agent.whenIdle()
    expect(mine.bodies).toHaveLength(2)
    const reference = ref.bodies[1].messages
    expect(reference[1].content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'redacted_thinking', 'tool_use'])
    expect(mine.bodies[1].messages[1]).toEqual(reference[1])
    const first = (agent.events.find((e) => e.type === 'assistant/message')!.data as { message: AssistantMessage }).message
    expect(first.content.filter((b) => b.type === 'reasoning').map((b) => b.providerData)).toEqual([
      { anthropic: { signature: 'EqQBCkgIARABGAIiQKLm1v9turnlogSignatureForTests0a1b2c3d4e5f==' } },
      { anthropic: { redactedData: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' } },
    ])
    expect(verify(agent.events).violations).toEqual([])
    await agent.dispose()
  })
})
