/**
 * Issue 23 item 5, the last part: the AI SDK's `tool-approval-request` stream part. A provider that
 * asks a person to approve one of its own calls (OpenAI's MCP tool with `require_approval`) reaches
 * turnlog's approvals (docs/spec/lifecycle.md §9): `tool/approval-requested` for that call, `step/parked`, and the
 * decision goes back to the provider as `streamText` (ai@6) sends it — a tool message with a
 * `tool-approval-response` in the next prompt. Side by side with `streamText` on vercel/ai's recorded
 * OpenAI Responses streams (openai-mcp-tool-approval.1 asks; .4 answers after an approval, .2 after
 * a denial), served from 127.0.0.1.
 */
import { createOpenAI } from '@ai-sdk/openai'
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Prompt } from '@ai-sdk/provider'
import { streamText, type ModelMessage } from 'ai6'
import { MockLanguageModelV3, simulateReadableStream } from 'ai6/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import type { AssistantMessage, LogEvent } from '../../events/index.js'
import { fromAiSdk } from '../../models/ai-sdk/index.js'
import { reexecute } from '../../replay/reexecute.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { decisionEvent } from '../../stores/decide.js'
import { defineTool } from '../../tools/index.js'
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

const ASK = 'vercel-ai/openai--openai-mcp-tool-approval.1.chunks.txt'
const AFTER_APPROVAL = 'vercel-ai/openai--openai-mcp-tool-approval.4.chunks.txt'
const AFTER_DENIAL = 'vercel-ai/openai--openai-mcp-tool-approval.2.chunks.txt'
const APPROVAL_ID = 'mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe'
const PROMPT = 'shorten ai-sdk.dev'

/** The provider tool the recordings were made with (vercel/ai's test of them). */
const MCP_TOOL = {
  type: 'provider' as const,
  id: 'openai.mcp' as const,
  name: 'MCP',
  args: { serverLabel: 'zip1', serverUrl: 'https://zip1.io/mcp', serverDescription: 'Link shortener', requireApproval: 'always' as const },
}

/**
 * An OpenAI Responses model whose nth request is served the nth fixture; records every HTTP body
 * and every prompt it was called with (what the provider package then turns into the wire body).
 * The provider makes up the id of an approval's call per run: a fixed generator makes both sides
 * agree on it.
 */
function recordedModel(files: readonly string[]): { model: LanguageModelV3; bodies: any[]; prompts: LanguageModelV3Prompt[] } {
  const bodies: any[] = []
  const prompts: LanguageModelV3Prompt[] = []
  const f: typeof fetch = async (input, init) => {
    const n = bodies.length
    bodies.push(typeof init?.body === 'string' ? JSON.parse(init.body) : undefined)
    const file = files[Math.min(n, files.length - 1)]!
    return fetch(server.url(file) + new URL(String(input)).pathname, init)
  }
  const inner = createOpenAI({ baseURL: 'http://fixture.invalid/v1', apiKey: 'k', fetch: f }).responses('gpt-5-mini')
  // the package's per-run id for the call an approval is about: the same on both sides
  ;(inner as unknown as { config: { generateId?: () => string } }).config.generateId = () => 'call-under-approval'
  const model: LanguageModelV3 = {
    specificationVersion: 'v3',
    provider: inner.provider,
    modelId: inner.modelId,
    supportedUrls: inner.supportedUrls,
    doGenerate: (o) => inner.doGenerate(o),
    doStream: (o: LanguageModelV3CallOptions) => {
      prompts.push(o.prompt)
      return inner.doStream(o)
    },
  }
  return { model, bodies, prompts }
}

/** JSON equality (an `undefined` member is no member, as on the wire). */
const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v))

/**
 * A wire body without its tool list: the agent also declares a function tool of the user's (with
 * the provider call's name, to show it never runs) and, like every turnlog request, no tool_choice.
 */
function withoutTools(body: any): unknown {
  const { tools, tool_choice, ...rest } = body as { tools: Array<{ type: string }>; tool_choice?: string }
  expect(tools.filter((t) => t.type === 'mcp')).toHaveLength(1)
  return rest
}

/** streamText asks (first call), then a person decides and the app calls streamText again (ai@6 docs "tool approvals"). */
async function streamTextRun(second: string, approved: boolean, reason?: string): Promise<{ bodies: any[]; prompts: LanguageModelV3Prompt[]; requestPart: unknown; text: string }> {
  const { model, bodies, prompts } = recordedModel([ASK, second])
  const tools = { MCP: { type: 'provider', id: 'openai.mcp', args: MCP_TOOL.args } } as never
  const first = streamText({ model, prompt: PROMPT, tools })
  await first.consumeStream()
  const response = (await first.response).messages
  const requestPart = (response[0]!.content as Array<{ type: string }>).find((p) => p.type === 'tool-approval-request')
  const messages: ModelMessage[] = [
    { role: 'user', content: PROMPT },
    ...response,
    { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: APPROVAL_ID, approved, ...(reason !== undefined ? { reason } : {}), providerExecuted: true }] },
  ]
  const next = streamText({ model, messages, tools })
  const text = await next.text
  return { bodies, prompts, requestPart, text }
}

/** The user's tool of the provider call's name: it must never run for the provider's call. */
// a user tool named as the provider's call (a dotted name: defineTool refuses it, a plain object is still accepted)
const decoy = () => ({ name: 'mcp.create_short_url', description: 'not the provider\'s', parameters: z.object({}).passthrough(), execute: () => { throw new Error('the user\'s tool ran for the provider\'s call') } })

function newAgent(model: LanguageModelV3) {
  return createAgent({
    model: fromAiSdk(model, { providerTools: [MCP_TOOL] }),
    clock: fakeClock(),
    ids: counterIds('m'),
    timers: instantTimers(),
    checkRequests: 'full',
    // a tool of the user's with the provider call's name: never run for the provider's call
    tools: [decoy()],
  })
}

const types = (events: readonly LogEvent[]) => events.map((e) => e.type)

describe('issue 23 item 5: the AI SDK tool-approval-request part (provider approvals, docs/spec/lifecycle.md §9)', () => {
  it('L17 L18: the request parks the agent; approved, the next request equals streamText\'s (prompt and wire body) and the provider\'s answer is logged', async () => {
    const reference = await streamTextRun(AFTER_APPROVAL, true)
    expect(reference.requestPart).toMatchObject({ type: 'tool-approval-request', approvalId: APPROVAL_ID })

    const { model, bodies, prompts } = recordedModel([ASK, AFTER_APPROVAL])
    const agent = newAgent(model)
    agent.followup(PROMPT)
    expect(await agent.whenSettled()).toBe('parked')
    const open = agent.approvals()
    expect(open).toHaveLength(1)
    expect(open[0]).toMatchObject({ callId: 'call-under-approval', name: 'mcp.create_short_url', arguments: expect.stringContaining('https://ai-sdk.dev/') })
    const message = agent.events.find((e) => e.type === 'assistant/message')!.data as { message: AssistantMessage }
    expect(message.message.content.find((b) => b.type === 'tool-call')).toMatchObject({ providerExecuted: true, approvalId: APPROVAL_ID, id: 'call-under-approval' })
    const requested = agent.events.find((e) => e.type === 'tool/approval-requested')!
    expect(requested.data).toMatchObject({ callId: 'call-under-approval', approvalId: open[0]!.approvalId })
    expect(types(agent.events).slice(-1)).toEqual(['step/parked'])
    expect(bodies).toHaveLength(1)

    await agent.decide(open[0]!.approvalId, { kind: 'approve' })
    await agent.whenIdle()
    expect(bodies).toHaveLength(2)
    expect(json(prompts[1])).toEqual(json(reference.prompts[1]))
    expect(prompts[1]!.at(-1)).toEqual({ role: 'tool', content: [{ type: 'tool-approval-response', approvalId: APPROVAL_ID, approved: true }] })
    expect(withoutTools(bodies[1])).toEqual(withoutTools(reference.bodies[1]))
    expect(bodies[1].input.at(-1)).toEqual({ type: 'mcp_approval_response', approval_request_id: APPROVAL_ID, approve: true })

    // the provider ran the tool and answered: its call and result are logged, the answer's text equals streamText's
    const last = [...agent.events].reverse().find((e) => e.type === 'assistant/message')!.data as { message: AssistantMessage }
    const answer = last.message.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('')
    expect(answer).toBe(reference.text)
    expect(last.message.content.map((b) => b.type)).toEqual(['tool-call', 'tool-result', 'text'])
    const ends = agent.events.filter((e) => e.type === 'step/end').map((e) => (e.data as { outcome: { kind: string } }).outcome.kind)
    expect(ends).toEqual(['tools', 'stop'])
    expect(verify(agent.events).violations).toEqual([])
  })

  it('L17: denied with a reason, the provider gets approved: false and the reason as streamText sends them, and answers', async () => {
    const reference = await streamTextRun(AFTER_DENIAL, false, 'not today')
    const { model, bodies, prompts } = recordedModel([ASK, AFTER_DENIAL])
    const agent = newAgent(model)
    agent.followup(PROMPT)
    expect(await agent.whenSettled()).toBe('parked')
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'deny', reason: 'not today' })
    await agent.whenIdle()
    expect(json(prompts[1])).toEqual(json(reference.prompts[1]))
    expect(prompts[1]!.at(-1)).toEqual({ role: 'tool', content: [{ type: 'tool-approval-response', approvalId: APPROVAL_ID, approved: false, reason: 'not today' }] })
    expect(withoutTools(bodies[1])).toEqual(withoutTools(reference.bodies[1]))
    const result = agent.events.find((e) => e.type === 'tool/result')!.data as { error?: { code: string } }
    expect(result.error?.code).toBe('DENIED')
    const last = [...agent.events].reverse().find((e) => e.type === 'assistant/message')!.data as { message: AssistantMessage }
    expect(last.message.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('')).toBe(reference.text)
    expect(verify(agent.events).violations).toEqual([])
  })

  it('L17: a provider call\'s arguments cannot be edited by the decision (INVALID_ARGS, nothing logged)', async () => {
    const { model } = recordedModel([ASK, AFTER_APPROVAL])
    const agent = newAgent(model)
    agent.followup(PROMPT)
    expect(await agent.whenSettled()).toBe('parked')
    const n = agent.events.length
    await expect(agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve', arguments: { url: 'https://example.com/' } })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    expect(agent.events.length).toBe(n)
    await agent.dispose()
  })

  it('L9: an approval request for a call that is not a provider-executed call of the response is STREAM_GRAMMAR; streamText fails it too', async () => {
    const parts = [
      { type: 'stream-start', warnings: [] },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'local', input: '{}' },
      { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'nowhere' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } },
    ]
    const mock = () => new MockLanguageModelV3({ doStream: async () => ({ stream: simulateReadableStream({ chunks: parts as never[] }) }) })
    const { outcome } = await runChecked(fromAiSdk(mock()))
    expect(outcome).toMatchObject({ kind: 'failure', failure: { code: 'STREAM_GRAMMAR', message: expect.stringContaining('"nowhere"') } })
    const errors: unknown[] = []
    const r = streamText({ model: mock(), prompt: 'x', onError: ({ error }) => void errors.push(error) })
    await r.consumeStream()
    expect(String(errors[0])).toMatch(/nowhere/)
  })

  it('L17 §9: parked, the process exits; a decision logged by another process (store.decide\'s event) is found by resumeAgent, which sends it to the provider; edited arguments are refused there too', async () => {
    const { model } = recordedModel([ASK])
    const first = newAgent(model)
    first.followup(PROMPT)
    expect(await first.whenSettled()).toBe('parked')
    await first.dispose()
    const events = first.events.slice() as LogEvent[]
    const approvalId = first.approvals()[0]!.approvalId
    expect(() => decisionEvent('s', events, approvalId, { kind: 'approve', arguments: '{"url":"https://example.com/"}' }, { kind: 'user' }, 1)).toThrow(expect.objectContaining({ code: 'INVALID_ARGS' }))
    const decided = decisionEvent('s', events, approvalId, { kind: 'deny', reason: 'not today' }, { kind: 'user', id: 'ops' }, events.at(-1)!.time + 1)
    const next = recordedModel([AFTER_DENIAL])
    const agent = await resumeAgent({
      log: [...events, decided], model: fromAiSdk(next.model, { providerTools: [MCP_TOOL] }), tools: [decoy()],
      clock: fakeClock(1_764_460_000_000), ids: counterIds('r'), timers: instantTimers(),
    })
    await agent.whenIdle()
    expect(next.prompts).toHaveLength(1)
    expect(next.prompts[0]!.at(-1)).toEqual({ role: 'tool', content: [{ type: 'tool-approval-response', approvalId: APPROVAL_ID, approved: false, reason: 'not today' }] })
    expect(verify(agent.events).violations).toEqual([])
  })

  it('P4: a run with a provider approval re-executes to the same log (the decision re-issued at its position)', async () => {
    const { model } = recordedModel([ASK, AFTER_APPROVAL])
    const agent = newAgent(model)
    agent.followup(PROMPT)
    expect(await agent.whenSettled()).toBe('parked')
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } })
    await agent.whenIdle()
    const r = await reexecute(agent.events, { tools: [decoy()], stallMs: 500 } as never)
    if (!r.ok) throw new Error(r.divergence.diff)
    expect(r).toEqual({ ok: true, eventCount: agent.events.length })
  })
})
