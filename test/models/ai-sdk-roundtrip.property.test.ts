/**
 * Issue 23 item 1 as a property: any Anthropic stream of thinking blocks (with their signatures),
 * redacted thinking, text and tool calls, played through `@ai-sdk/anthropic` → `fromAiSdk` → the
 * log → the history → the next request, comes back byte-exact: the second request's assistant turn
 * is exactly what the provider streamed (every thinking text, signature, redacted data, text and
 * tool input), and exactly what the AI SDK's own two-step `streamText` sends.
 */
import { createAnthropic } from '@ai-sdk/anthropic'
import fc from 'fast-check'
import { jsonSchema, stepCountIs, streamText, tool } from 'ai6'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import type { AssistantMessage } from '../../events/index.js'
import { fromAiSdk } from '../../models/ai-sdk/index.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/index.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { fcRuns } from '../fc-runs.js'

/** A content block as Anthropic sends it back in the next request. */
type WireBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }

/** A block and how it streams: the deltas its text (or input JSON, or signature) arrives in. */
interface StreamedBlock { wire: WireBlock; deltas: string[]; signatureDeltas: string[] }

/** Splits `s` at the given cut points (code points, so no surrogate pair is split). */
function split(s: string, cuts: number[]): string[] {
  const cps = [...s]
  const points = [...new Set(cuts.map((c) => c % (cps.length + 1)))].sort((a, b) => a - b)
  const out: string[] = []
  let prev = 0
  for (const p of [...points, cps.length]) {
    if (p > prev) out.push(cps.slice(prev, p).join(''))
    prev = Math.max(prev, p)
  }
  return out.length > 0 ? out : ['']
}

const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
const opaque = fc.base64String({ minLength: 8, maxLength: 120 })
const cuts = fc.array(fc.nat(60), { maxLength: 4 })

// Anthropic sends a thinking block's signature in one `signature_delta` (the AI SDK keeps the last
// one's metadata, as does turnlog: a signature in pieces would not survive streamText either)
const arbThinking = fc.record({ t: text, sig: opaque, c: cuts })
  .map(({ t, sig, c }): StreamedBlock => ({ wire: { type: 'thinking', thinking: t, signature: sig }, deltas: split(t, c), signatureDeltas: [sig] }))
const arbRedacted = opaque.map((data): StreamedBlock => ({ wire: { type: 'redacted_thinking', data }, deltas: [], signatureDeltas: [] }))
const arbText = fc.record({ t: text, c: cuts }).map(({ t, c }): StreamedBlock => ({ wire: { type: 'text', text: t }, deltas: split(t, c), signatureDeltas: [] }))
const arbToolUse = fc.record({ n: fc.nat(1_000_000), city: text, c: cuts }).map(({ n, city, c }): StreamedBlock => {
  const input = { city }
  return { wire: { type: 'tool_use', id: `toolu_${n}`, name: 'get_weather', input }, deltas: split(JSON.stringify(input), c), signatureDeltas: [] }
})

/** A first response: thinking, redacted thinking and text in any order and number, then 1–2 tool calls. */
const arbFirstResponse = fc.tuple(
  fc.array(fc.oneof(arbThinking, arbRedacted, arbText), { minLength: 1, maxLength: 4 }),
  fc.uniqueArray(arbToolUse, { minLength: 1, maxLength: 2, selector: (b) => (b.wire as { id: string }).id }),
).map(([before, calls]) => [...before, ...calls])

/** The SSE body Anthropic's Messages API streams for these blocks. */
function sse(blocks: readonly StreamedBlock[], stop: 'tool_use' | 'end_turn'): string {
  const events: object[] = [{
    type: 'message_start',
    message: { model: 'claude-sonnet-4-5-20250929', id: 'msg_prop', type: 'message', role: 'assistant', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
  }]
  blocks.forEach((b, index) => {
    const w = b.wire
    if (w.type === 'thinking') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } })
      for (const d of b.deltas) events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: d } })
      for (const s of b.signatureDeltas) events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: s } })
    } else if (w.type === 'redacted_thinking') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: w.data } })
    } else if (w.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } })
      for (const d of b.deltas) events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: d } })
    } else {
      events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: w.id, name: w.name, input: {} } })
      for (const d of b.deltas) events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: d } })
    }
    events.push({ type: 'content_block_stop', index })
  })
  events.push({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } })
  events.push({ type: 'message_stop' })
  return events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join('')
}

const DONE: StreamedBlock[] = [{ wire: { type: 'text', text: 'Sunny.' }, deltas: ['Sunny.'], signatureDeltas: [] }]

/** A fetch that answers the first request with `first`, every later one with a plain answer; records the bodies. */
function scriptFetch(first: readonly StreamedBlock[]): { fetch: typeof fetch; bodies: any[] } {
  const bodies: any[] = []
  const f: typeof fetch = async (_input, init) => {
    bodies.push(typeof init?.body === 'string' ? JSON.parse(init.body) : undefined)
    const body = bodies.length === 1 ? sse(first, 'tool_use') : sse(DONE, 'end_turn')
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } })
  }
  return { fetch: f, bodies }
}

const THINKING = { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } } as const

async function viaStreamText(first: readonly StreamedBlock[]): Promise<any> {
  const { fetch: f, bodies } = scriptFetch(first)
  const model = createAnthropic({ baseURL: 'http://fixture.invalid/v1', apiKey: 'k', fetch: f })('claude-sonnet-4-5')
  const result = streamText({
    model,
    prompt: 'What is the weather?',
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
  return bodies[1]?.messages?.[1]
}

async function viaTurnlog(first: readonly StreamedBlock[]): Promise<{ assistant: any; events: readonly any[]; logged: AssistantMessage }> {
  const { fetch: f, bodies } = scriptFetch(first)
  const model = createAnthropic({ baseURL: 'http://fixture.invalid/v1', apiKey: 'k', fetch: f })('claude-sonnet-4-5')
  const agent = createAgent({
    model: fromAiSdk(model, { providerOptions: THINKING }),
    clock: fakeClock(),
    ids: counterIds('m'),
    timers: instantTimers(),
    checkRequests: 'full',
    tools: [defineTool({ name: 'get_weather', description: 'weather for a city', parameters: z.object({ city: z.string() }), execute: () => 'sunny' })],
  })
  agent.followup('What is the weather?')
  await agent.whenIdle()
  const logged = (agent.events.find((e) => e.type === 'assistant/message')!.data as { message: AssistantMessage }).message
  return { assistant: bodies[1]?.messages?.[1], events: agent.events, logged }
}

describe('issue 23 item 1, as a property: Claude\'s blocks round-trip byte-exact through fromAiSdk', () => {
  it('R3 L9: any thinking / redacted thinking / text / tool_use stream → log → history → the next request\'s assistant turn is what Anthropic sent, and what streamText sends', async () => {
    await fc.assert(fc.asyncProperty(arbFirstResponse, async (first) => {
      const ours = await viaTurnlog(first)
      expect(verify(ours.events).violations).toEqual([])
      // byte-exact against the stream itself
      expect(ours.assistant).toEqual({ role: 'assistant', content: first.map((b) => b.wire) })
      expect(JSON.stringify(ours.assistant.content)).toBe(JSON.stringify(first.map((b) => b.wire)))
      // and the same as the AI SDK's own loop
      expect(ours.assistant).toEqual(await viaStreamText(first))
      // the log holds each signature and redacted payload as provider data, whole
      const reasoning = ours.logged.content.filter((b) => b.type === 'reasoning')
      expect(reasoning.map((b) => b.providerData)).toEqual(first.flatMap((b): unknown[] =>
        b.wire.type === 'thinking' ? [{ anthropic: { signature: b.wire.signature } }] : b.wire.type === 'redacted_thinking' ? [{ anthropic: { redactedData: b.wire.data } }] : []))
    }), { numRuns: fcRuns(40) })
  }, 120_000)
})
