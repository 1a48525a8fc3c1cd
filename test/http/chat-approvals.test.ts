/**
 * Approvals through the AI SDK chat protocol (docs/spec/lifecycle.md §9, issue 22), with the stock AI SDK 6
 * client (`AbstractChat` + `DefaultChatTransport`, ai@6.0.326) in Node, JSONL, one process:
 * H8 a turn that parks streams its approval parts and ends there (the client is `ready`); the
 * client's `addToolApprovalResponse` answers, `sendAutomaticallyWhen:
 * lastAssistantMessageIsCompleteWithApprovalResponses` posts them, each becomes `agent.decide`,
 * the same assistant message goes on (the approved body runs once, the denied call gets DENIED),
 * no user message is sent; a resend of the same decisions is not an error, a different one is
 * 409 `APPROVAL_DECIDED`, an approval the log never requested 404 `UNKNOWN_APPROVAL`, and
 * `authorize` is asked `decide`.
 */
import type { UIMessage } from 'ai6'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { LogEvent } from '../../events/envelope.js'
import { sessionHandler, type SessionAction, type SessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { CHAT_CLIENTS } from './chat-client.js'
import { serve, tempDir, until, type Served } from './helpers.js'

const FINAL = 'Paid the small one; the large one was denied.'
let tmp: ReturnType<typeof tempDir>
let store: LogStore
let handler: SessionHandler
let served: Served
let paid: number[]
let asked: SessionAction[]

beforeEach(async () => {
  tmp = tempDir()
  store = jsonlStore(tmp.dir)
  paid = []
  asked = []
  const pay = defineTool({
    name: 'pay', description: 'pay an amount', parameters: z.object({ cents: z.number().int() }),
    needsApproval: true,
    execute: (a) => { paid.push(a.cents); return `paid ${a.cents}` },
  }) as AnyTool
  handler = sessionHandler({
    chatIdInBody: true,
    store, pollMs: 10,
    authorize: (_req, _id, action) => { asked.push(action); return true },
    agent: () => ({
      tools: [pay],
      model: scriptedModel([
        { toolCalls: [{ name: 'pay', args: { cents: 500 } }, { name: 'pay', args: { cents: 90_000 } }] },
        { text: FINAL },
      ]),
    }),
  })
  served = await serve(handler)
})
afterEach(async () => {
  await served.close()
  await handler.close()
  tmp.remove()
})

const log = async (id: string): Promise<LogEvent[]> => {
  const r = await store.open(id, 'read')
  const out: LogEvent[] = []
  for await (const e of r.events()) out.push(e)
  await r.close()
  return out
}
type ToolPart = { type: string; toolCallId: string; state: string; input?: { cents: number }; approval?: { id: string; approved?: boolean; reason?: string } }
const tools = (m: UIMessage | undefined): ToolPart[] => (m?.parts ?? []).filter((p) => p.type.startsWith('tool-')) as unknown as ToolPart[]
const texts = (m: UIMessage | undefined): string => (m?.parts ?? []).filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('')
const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T
const post = (body: unknown) => fetch(`${served.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

describe.each(CHAT_CLIENTS)('approvals through the AI SDK $ai Chat (JSONL, agent in this process)', ({ NodeChat, lastAssistantMessageIsCompleteWithApprovalResponses }) => {
  it('H8 an approval request answered through the chat: the stream shows the parts, the approved body runs once, the denied one gets DENIED', async () => {
    const chat = new NodeChat({ id: 'ap1', api: `${served.url}/chat`, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses })
    await chat.sendMessage({ text: 'Pay both invoices' })
    // the turn parked: the stream ended there, the client shows both requests
    expect(chat.status).toBe('ready')
    expect(chat.messages.map((m) => m.id)).toEqual([chat.messages[0]!.id, 'turn-1'])
    const requested = tools(chat.messages[1])
    expect(requested.map((p) => [p.type, p.state, p.input?.cents])).toEqual([['tool-pay', 'approval-requested', 500], ['tool-pay', 'approval-requested', 90_000]])
    expect(requested.every((p) => typeof p.approval?.id === 'string')).toBe(true)
    expect(paid).toEqual([])
    expect(asked).toEqual(['write'])
    const before = (await log('ap1')).filter((e) => e.type === 'user/message').length

    // the person answers both; the second answer sends them (sendAutomaticallyWhen)
    const answered = structuredClone(chat.messages)
    await chat.addToolApprovalResponse({ id: requested[0]!.approval!.id, approved: true })
    await chat.addToolApprovalResponse({ id: requested[1]!.approval!.id, approved: false, reason: 'too much' })
    await until(() => chat.status === 'ready' && texts(chat.messages[1]) === FINAL)

    expect(chat.messages.map((m) => m.id)).toEqual([chat.messages[0]!.id, 'turn-1'])
    const done = tools(chat.messages[1])
    expect(done.map((p) => [p.state, p.approval])).toEqual([
      ['output-available', { id: requested[0]!.approval!.id, approved: true }],
      ['output-denied', { id: requested[1]!.approval!.id, approved: false, reason: 'too much' }],
    ])
    expect(paid).toEqual([500])
    expect(asked).toEqual(['write', 'decide'])
    const events = await log('ap1')
    expect(events.filter((e) => e.type === 'user/message').length).toBe(before)
    const decided = events.filter((e) => e.type === 'tool/approval-decided').map((e) => (e.data as { decision: unknown; by: unknown }))
    expect(decided).toEqual([{ ...decided[0], decision: { kind: 'approve' }, by: { kind: 'user' } }, { ...decided[1], decision: { kind: 'deny', reason: 'too much' }, by: { kind: 'user' } }])
    const results = events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { error?: { code: string } }).error?.code ?? 'ok')
    expect(results).toEqual(['ok', 'DENIED'])
    expect(events.at(-1)!.type).toBe('turn/end')

    // the history says the same, part for part (a reload shows no button for a decided request)
    const history = (await (await fetch(`${served.url}/chat/ap1/messages`)).json()) as UIMessage[]
    expect(plain(history)).toEqual(plain(chat.messages))

    // a client resending the same answers (e.g. after a reload) is not an error and changes nothing
    const resend = await post({ id: 'ap1', messages: answeredBody(answered, requested, true), trigger: 'submit-message', messageId: 'turn-1' })
    expect(resend.status).toBe(200)
    await resend.text()
    expect(paid).toEqual([500])
    expect((await log('ap1')).length).toBe(events.length)
    // a different answer to a decided request: 409; a request the log never made: 404
    const other = await post({ id: 'ap1', messages: answeredBody(answered, requested, false), trigger: 'submit-message', messageId: 'turn-1' })
    expect(other.status).toBe(409)
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe('APPROVAL_DECIDED')
    const unknown = structuredClone(answeredBody(answered, requested, true))
    ;(unknown[1]!.parts.find((p) => p.type === 'tool-pay') as unknown as ToolPart).approval!.id = 'no-such-approval'
    const u = await post({ id: 'ap1', messages: unknown, trigger: 'submit-message', messageId: 'turn-1' })
    expect(u.status).toBe(404)
    expect(((await u.json()) as { error: { code: string } }).error.code).toBe('UNKNOWN_APPROVAL')
    // an assistant message without any answer is a coded 400, and nothing was sent
    const none = await post({ id: 'ap1', messages: answered, trigger: 'submit-message', messageId: 'turn-1' })
    expect(none.status).toBe(400)
    expect((await log('ap1')).length).toBe(events.length)
  })

  it('H8 a decision made elsewhere while the client looked (another tab, the CLI): the answer\'s stream sends it too, so the client ends equal to the history', async () => {
    const chat = new NodeChat({ id: 'ap2', api: `${served.url}/chat`, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses })
    await chat.sendMessage({ text: 'Pay both invoices' })
    const requested = tools(chat.messages[1])
    expect(requested.map((p) => p.state)).toEqual(['approval-requested', 'approval-requested'])
    // someone else denies the second request first (store.decide: the running agent logs it, and parks again)
    await (store as unknown as { decide(id: string, a: string, d: unknown, o: unknown): Promise<unknown> })
      .decide('ap2', requested[1]!.approval!.id, { kind: 'deny', reason: 'too much' }, { waitMs: 5_000 })
    await until(async () => (await log('ap2')).filter((e) => e.type === 'step/parked').length === 2)
    // this client still shows both open; it answers both, the second as the other person did
    await chat.addToolApprovalResponse({ id: requested[0]!.approval!.id, approved: true })
    await chat.addToolApprovalResponse({ id: requested[1]!.approval!.id, approved: false, reason: 'too much' })
    await until(() => chat.status === 'ready' && texts(chat.messages[1]) === FINAL)
    expect(chat.error).toBeUndefined()
    expect(tools(chat.messages[1]).map((p) => p.state)).toEqual(['output-available', 'output-denied'])
    const history = (await (await fetch(`${served.url}/chat/ap2/messages`)).json()) as UIMessage[]
    expect(plain(history)).toEqual(plain(chat.messages))
    expect(paid).toEqual([500])
  })
})

/** The messages as the client posted its answers: first approved, second denied 'too much' (or swapped). */
function answeredBody(messages: UIMessage[], requested: ToolPart[], same: boolean): UIMessage[] {
  const out = structuredClone(messages)
  const parts = out[1]!.parts as unknown as ToolPart[]
  for (const p of parts) {
    if (!p.approval) continue
    const first = p.approval.id === requested[0]!.approval!.id
    const approved = same ? first : !first
    p.state = 'approval-responded'
    p.approval = { id: p.approval.id, approved, ...(approved ? {} : { reason: 'too much' }) }
  }
  return out
}
